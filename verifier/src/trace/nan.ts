/**
 * NaN-canonical float32 bytes: every NaN written as CANONICAL_NAN_BITS (0x7FC00000, the positive quiet NaN), every
 * other value (finite, +-Inf, -0 and +0) left bit for bit. The sha256-v2 state digest hashes these bytes, and a
 * sha256-v2 run's checkpoints store them (ml/run.ts checkpointBytes), so a state's hash and its checkpoint's CID do not
 * depend on the NaN sign and payload bits a machine happens to produce.
 *
 * Why: IEEE 754 and WebAssembly leave a generated NaN's sign and payload open; x86-64 (SSE) produces 0xFFC00000, arm64
 * 0x7FC00000. An honest run whose rule diverges (a buyer's learning rate of 1e30) therefore holds different bytes on the
 * two architectures at every NaN, although no finite value differs (a NaN's bits never reach a finite result: every
 * arithmetic op on a NaN gives a NaN, comparisons are false either way). -0 and +0 stay distinct: the reference kernels
 * define the sign of zero bit for bit on every architecture (docs/determinism.md "NaN bits and signed zeros").
 *
 * Cost (bench/nan-canonical.ts, mnist-mlp 784-128-10 Adam state): one unrolled float64 sum per tensor pre-screens it
 * (NaN iff a NaN, or both infinities, is present); only a tensor that holds a NaN is copied and rewritten.
 */

/** The float32 bits every NaN is hashed and stored as (positive quiet NaN, no payload). */
export const CANONICAL_NAN_BITS = 0x7fc00000;

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** False only if `a` holds no NaN: a float64 sum in 4 lanes (a NaN propagates; finite float32 sums cannot overflow float64). */
function mayHoldNaN(a: Float32Array): boolean {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const n = a.length - (a.length % 4);
  for (let i = 0; i < n; i += 4) {
    s0 += a[i]!;
    s1 += a[i + 1]!;
    s2 += a[i + 2]!;
    s3 += a[i + 3]!;
  }
  for (let i = n; i < a.length; i++) s0 += a[i]!;
  const s = s0 + s1 + s2 + s3;
  return s !== s;
}

/** The index of the first NaN in `a`, or -1. */
function firstNaN(a: Float32Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== a[i]) return i;
  return -1;
}

/** `a` itself when it holds no NaN, else a copy with every NaN written as CANONICAL_NAN_BITS (host byte order: a Float32Array). */
export function canonicalNaNArray(a: Float32Array): Float32Array {
  if (!mayHoldNaN(a)) return a;
  const at = firstNaN(a);
  if (at < 0) return a;
  const c = Float32Array.from(a);
  const u = new Uint32Array(c.buffer);
  for (let i = at; i < u.length; i++) if ((u[i]! & 0x7fffffff) > 0x7f800000) u[i] = CANONICAL_NAN_BITS;
  return c;
}

/** Each array NaN-canonical (canonicalNaNArray): the same arrays when none holds a NaN. */
export function canonicalNaNArrays(arrays: readonly Float32Array[]): Float32Array[] {
  return arrays.map(canonicalNaNArray);
}

/**
 * Little-endian float32 bytes (given as chunks whose concatenation is the tensor group) with every NaN written as
 * CANONICAL_NAN_BITS: the same chunks when none holds a NaN, a copy of those that do. A chunk must hold whole float32
 * values; when one does not (its length is not a multiple of 4), the chunks are joined first, so a value split across
 * two chunks is still read whole.
 */
export function canonicalNaNChunks(chunks: Iterable<Uint8Array>): Uint8Array[] {
  let list = [...chunks];
  if (list.some((c) => c.byteLength % 4 !== 0)) {
    const all = new Uint8Array(list.reduce((n, c) => n + c.byteLength, 0));
    let at = 0;
    for (const c of list) {
      all.set(c, at);
      at += c.byteLength;
    }
    if (all.byteLength % 4 !== 0) throw new RangeError(`float32 bytes must be a multiple of 4 long, got ${all.byteLength}`);
    list = [all];
  }
  return list.map(canonicalNaNBytes);
}

function canonicalNaNBytes(c: Uint8Array): Uint8Array {
  if (LITTLE_ENDIAN && c.byteOffset % 4 === 0) {
    const f = new Float32Array(c.buffer, c.byteOffset, c.byteLength / 4);
    const canon = canonicalNaNArray(f);
    return canon === f ? c : new Uint8Array(canon.buffer);
  }
  // unaligned or big-endian host: read each value's little-endian bits
  const view = new DataView(c.buffer, c.byteOffset, c.byteLength);
  let out: Uint8Array | undefined;
  for (let i = 0; i < c.byteLength; i += 4) {
    if ((view.getUint32(i, true) & 0x7fffffff) <= 0x7f800000) continue;
    out ??= Uint8Array.from(c);
    new DataView(out.buffer).setUint32(i, CANONICAL_NAN_BITS, true);
  }
  return out ?? c;
}
