/**
 * The WGSL elementwise kernels of numerics bitwise-v3 (kernels/reference-v3.ts "Elementwise ops"), built on the
 * integer soft-float of v3-softfloat-wgsl.ts (no floating-point instruction anywhere, so WGSL's freedom to contract,
 * flush subnormals or approximate cannot reach a bit): one op per element (V3_ELEMENTWISE_WGSL); the row kernels
 * (causal softmax, layer norm, softmax cross-entropy) fold each row in one invocation in the reference's order; Adam
 * is one invocation per element. The constants are the reference's float32 constants, injected as bit patterns.
 */
import { b, SOFTFLOAT_WGSL } from "./v3-softfloat-wgsl.ts";

const LN_EPSILON = 1e-5;

/** The ops of the elementwise kernel, in op-code order. */
export const V3_OPS = ["add", "sub", "mul", "div", "sqrt", "exp32", "log32"] as const;
export type V3Op = (typeof V3_OPS)[number];

/** One op per element: OUT[i] = op(X[i], Y[i]) (op codes: V3_OPS order). */
export const V3_ELEMENTWISE_WGSL = /* wgsl */ `
${SOFTFLOAT_WGSL}
struct P { n: u32, op: u32, pad0: u32, pad1: u32 }
@group(0) @binding(0) var<storage, read> X: array<u32>;
@group(0) @binding(1) var<storage, read> Y: array<u32>;
@group(0) @binding(2) var<storage, read_write> OUT: array<u32>;
@group(0) @binding(3) var<uniform> d: P;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let i = g.x;
  if (i >= d.n) { return; }
  let x = X[i];
  let y = Y[i];
  var r: u32;
  switch (d.op) {
    case 0u: { r = sf_add(x, y); }
    case 1u: { r = sf_sub(x, y); }
    case 2u: { r = sf_mul(x, y); }
    case 3u: { r = sf_div(x, y); }
    case 4u: { r = sf_sqrt(x); }
    case 5u: { r = exp32(x); }
    default: { r = log32(x); }
  }
  OUT[i] = r;
}
`;

/** The uniform of every row kernel: rows, width, then the kernel's scalars (float32 bits). */
const ROW_HEAD = `struct P { rows: u32, width: u32, p0: u32, p1: u32, p2: u32, p3: u32, p4: u32, p5: u32, p6: u32, p7: u32, pad0: u32, pad1: u32 }`;

/** `bound`: the number of invocations that do work (d.rows unless the kernel says otherwise). */
function rowKernel(bindings: string[], body: string, bound = "d.rows"): string {
  const decls = bindings.map((name, i) => `@group(0) @binding(${i}) var<storage, read> ${name}: array<u32>;`).join("\n");
  return /* wgsl */ `
${SOFTFLOAT_WGSL}
${ROW_HEAD}
${decls}
@group(0) @binding(${bindings.length}) var<storage, read_write> OUT: array<u32>;
@group(0) @binding(${bindings.length + 1}) var<uniform> d: P;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let r = g.x;
  if (r >= ${bound}) { return; }
${body}
}
`;
}

export type V3RowKernel = "causalSoftmax" | "causalSoftmaxBack" | "layerNorm" | "layerNormBack" | "softmaxXent" | "adam";

/** Invocations a row kernel needs: one per row, except layerNormBack (one per row for dx, then one per column for dg, db). */
export function v3RowInvocations(kernel: V3RowKernel, rows: number, width: number): number {
  return kernel === "layerNormBack" ? rows + width : rows;
}

/**
 * The row kernels, one invocation per row (per element for adam), each the reference-v3.ts function of the
 * same name op for op (read them for the folds' order). Outputs, packed in OUT:
 *   causalSoftmax      S [rows = count*T, width T]   -> P [rows*T]
 *   causalSoftmaxBack  P, dP [rows = count*T, T]      -> dS [rows*T]
 *   layerNorm      X [rows, d], G [d], B [d]         -> y [rows*d], xhat [rows*d], rstd [rows]
 *   layerNormBack  dY, xhat [rows, d], rstd [rows], G [d] -> dx [rows*d], dg [d], db [d] (dg, db: column folds
 *                  over the rows ascending, one invocation per column after the row invocations)
 *   softmaxXent    Z [rows, V], targets [rows] (u32) -> dz [rows*V], row loss [rows], correct [rows] (0/1); p0 = f(rows)
 *   adam           W, M, V, G [rows = n, width 1]    -> w' [n], m' [n], v' [n]; p0..p7 = b1, b2, 1-b1, 1-b2, lr, eps, c1, c2
 */
export const V3_ROW_WGSL: Record<V3RowKernel, string> = {
  causalSoftmax: rowKernel(["S"], `
  let T = d.width;
  let o = r * T;
  let i = r % T;
  var m = S[o];
  for (var j: u32 = 1u; j <= i; j = j + 1u) {
    let v = S[o + j];
    if (sf_gt(v, m) || is_nan(v)) { m = v; }
  }
  var sum: u32 = 0u;
  for (var j: u32 = 0u; j <= i; j = j + 1u) {
    let e = exp32(sf_sub(S[o + j], m));
    OUT[o + j] = e;
    sum = sf_add(sum, e);
  }
  for (var j: u32 = 0u; j <= i; j = j + 1u) { OUT[o + j] = sf_div(OUT[o + j], sum); }
  for (var j: u32 = i + 1u; j < T; j = j + 1u) { OUT[o + j] = 0u; }`),

  causalSoftmaxBack: rowKernel(["PR", "DP"], `
  let T = d.width;
  let o = r * T;
  let i = r % T;
  var rr: u32 = 0u;
  for (var j: u32 = 0u; j <= i; j = j + 1u) { rr = sf_add(rr, sf_mul(DP[o + j], PR[o + j])); }
  for (var j: u32 = 0u; j <= i; j = j + 1u) { OUT[o + j] = sf_mul(PR[o + j], sf_sub(DP[o + j], rr)); }
  for (var j: u32 = i + 1u; j < T; j = j + 1u) { OUT[o + j] = 0u; }`),

  layerNormBack: rowKernel(["DY", "XH", "RSTD", "G"], `
  let w = d.width;
  let rows = d.rows;
  if (r >= rows) { // column j: dg_j, db_j folded over the rows in ascending order from +0
    let j = r - rows;
    var dg: u32 = 0u;
    var db: u32 = 0u;
    for (var q: u32 = 0u; q < rows; q = q + 1u) {
      dg = sf_add(dg, sf_mul(DY[q * w + j], XH[q * w + j]));
      db = sf_add(db, DY[q * w + j]);
    }
    OUT[rows * w + j] = dg;
    OUT[rows * w + w + j] = db;
    return;
  }
  let o = r * w;
  let fd = i2f(i32(w));
  var sa: u32 = 0u;
  var sb: u32 = 0u;
  for (var j: u32 = 0u; j < w; j = j + 1u) {
    let dh = sf_mul(DY[o + j], G[j]);
    sa = sf_add(sa, dh);
    sb = sf_add(sb, sf_mul(dh, XH[o + j]));
  }
  let ma = sf_div(sa, fd);
  let mb = sf_div(sb, fd);
  let rs = RSTD[r];
  for (var j: u32 = 0u; j < w; j = j + 1u) {
    let dh = sf_mul(DY[o + j], G[j]); // recomputed: the same operation on the same operands, the same bits
    OUT[o + j] = sf_mul(rs, sf_sub(sf_sub(dh, ma), sf_mul(XH[o + j], mb)));
  }`, "d.rows + d.width"),

  layerNorm: rowKernel(["X", "G", "B"], `
  let w = d.width;
  let o = r * w;
  let xh = d.rows * w; // xhat's offset in OUT
  let fd = i2f(i32(w));
  var s: u32 = 0u;
  for (var j: u32 = 0u; j < w; j = j + 1u) { s = sf_add(s, X[o + j]); }
  let mean = sf_div(s, fd);
  var sq: u32 = 0u;
  for (var j: u32 = 0u; j < w; j = j + 1u) {
    let c = sf_sub(X[o + j], mean);
    OUT[xh + o + j] = c;
    sq = sf_add(sq, sf_mul(c, c));
  }
  let rs = sf_div(ONE, sf_sqrt(sf_add(sf_div(sq, fd), ${b(LN_EPSILON)})));
  OUT[2u * xh + r] = rs;
  for (var j: u32 = 0u; j < w; j = j + 1u) {
    let h = sf_mul(OUT[xh + o + j], rs);
    OUT[xh + o + j] = h;
    OUT[o + j] = sf_add(sf_mul(h, G[j]), B[j]);
  }`),

  softmaxXent: rowKernel(["Z", "TARGET"], `
  let V = d.width;
  let o = r * V;
  let y = TARGET[r];
  let fr = d.p0;
  let lossAt = d.rows * V;
  if (y >= V) { // no such class: the row's outputs are NaN (the caller checks targets first)
    for (var j: u32 = 0u; j < V; j = j + 1u) { OUT[o + j] = QNAN; }
    OUT[lossAt + r] = QNAN;
    OUT[lossAt + d.rows + r] = 0u;
    return;
  }
  var m = Z[o];
  var arg: u32 = 0u;
  for (var j: u32 = 1u; j < V; j = j + 1u) {
    let v = Z[o + j];
    if (sf_gt(v, m) || is_nan(v)) {
      m = v;
      arg = j;
    }
  }
  var s: u32 = 0u;
  for (var j: u32 = 0u; j < V; j = j + 1u) {
    let e = exp32(sf_sub(Z[o + j], m));
    OUT[o + j] = e;
    s = sf_add(s, e);
  }
  for (var j: u32 = 0u; j < V; j = j + 1u) {
    OUT[o + j] = sf_div(sf_sub(sf_div(OUT[o + j], s), select(0u, ONE, j == y)), fr);
  }
  OUT[lossAt + r] = sf_sub(sf_add(log32(s), m), Z[o + y]);
  OUT[lossAt + d.rows + r] = bitu(arg == y);`),

  adam: rowKernel(["W", "M", "V", "G"], `
  let n = d.rows;
  let gi = G[r];
  let mi = sf_add(sf_mul(d.p0, M[r]), sf_mul(d.p2, gi));
  let vi = sf_add(sf_mul(d.p1, V[r]), sf_mul(d.p3, sf_mul(gi, gi)));
  let u = sf_div(sf_div(mi, d.p6), sf_add(sf_sqrt(sf_div(vi, d.p7)), d.p5));
  OUT[r] = sf_sub(W[r], sf_mul(d.p4, u));
  OUT[n + r] = mi;
  OUT[2u * n + r] = vi;`),
};
