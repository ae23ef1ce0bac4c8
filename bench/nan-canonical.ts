/**
 * What the NaN-canonical state digest costs (sha256-v2, trace/digest.ts + trace/nan.ts; docs/determinism.md "NaN bits
 * and signed zeros"): NaN payload and sign bits are not portable (x86's default NaN 0xFFC00000, arm's 0x7FC00000; wasm
 * leaves them open), so sha256-v2 hashes every NaN as 0x7FC00000, leaving finite states' bytes unchanged, with a
 * pre-screen that copies a tensor only when it holds a NaN. Measured over a mnist-mlp 784-128-10 Adam state (the
 * bench/digest.ts state), interleaved:
 *   - h(t) under sha256-v1 (tensorStateHash, in place: the same bytes without the canonical pass);
 *   - the NaN scan alone over a finite state (`x !== x`, float view; a Uint32 exponent/mantissa bit test; an unrolled
 *     float64 sum whose result is NaN iff a NaN, or both infinities, is present: the cheap pre-screen);
 *   - h(t) under sha256-v2 over a finite state (the cost on every honest step: the screen, no copy);
 *   - h(t) under sha256-v2 over an all-NaN state (a diverged run: copy the NaN-holding tensors, write 0x7FC00000).
 * Also checks the digest's two invariants: a finite state's inner digests are sha256-v1's (only the tag differs); two
 * all-NaN states that differ only in NaN bits (0xFFC00000 vs 0x7FC00001) get one h.
 * Run: node bench/nan-canonical.ts; writes bench/results/nan-canonical.json. Process CPU time; on a loaded shared
 * machine the figures are upper bounds.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { float32Chunks } from "../verifier/src/ml/tensors.ts";
import { innerDigest, tensorStateHash } from "../verifier/src/trace/index.ts";
import { mnistAdamState } from "./mnist-state.ts";

const { params, opt } = mnistAdamState();
const nanWith = (bits: number) => (a: Float32Array) => { const b = new Float32Array(a.length); new Uint32Array(b.buffer).fill(bits); return b; };
const nanParams = params.map(nanWith(0xffc00000)), nanOpt = opt.map(nanWith(0xffc00000));
const armParams = params.map(nanWith(0x7fc00001)), armOpt = opt.map(nanWith(0x7fc00001));
const bytes = [...params, ...opt].reduce((s, a) => s + a.byteLength, 0);

/** The index of the first NaN in `a`, or -1 (`x !== x`: one compare per element, no allocation). */
function firstNaN(a: Float32Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== a[i]) return i;
  return -1;
}
function firstNaNBits(a: Float32Array): number {
  const u = new Uint32Array(a.buffer, a.byteOffset, a.length);
  for (let i = 0; i < u.length; i++) if ((u[i]! & 0x7fffffff) > 0x7f800000) return i;
  return -1;
}
/** NaN-or-(+Inf and -Inf) screen: a float64 sum per 4 lanes (NaN propagates; a finite float32 sum cannot overflow float64). */
function maybeNaNSum(a: Float32Array): boolean {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const n = a.length - (a.length % 4);
  for (let i = 0; i < n; i += 4) { s0 += a[i]!; s1 += a[i + 1]!; s2 += a[i + 2]!; s3 += a[i + 3]!; }
  for (let i = n; i < a.length; i++) s0 += a[i]!;
  const s = s0 + s1 + s2 + s3;
  return s !== s;
}
const h = (p: readonly Float32Array[], o: readonly Float32Array[]) => tensorStateHash("sha256-v1", 1n, 5, float32Chunks(p), float32Chunks(o));
const hCanonical = (p: readonly Float32Array[], o: readonly Float32Array[]) => tensorStateHash("sha256-v2", 1n, 5, float32Chunks(p), float32Chunks(o));
const inner = (scheme: "sha256-v1" | "sha256-v2", ts: readonly Float32Array[]) => innerDigest(scheme, float32Chunks(ts));

// the digest's invariants
if (inner("sha256-v2", params) !== inner("sha256-v1", params) || inner("sha256-v2", opt) !== inner("sha256-v1", opt)) throw new Error("a finite state's inner digests changed");
if (h(nanParams, nanOpt) === h(armParams, armOpt)) throw new Error("the raw digest already ignores NaN bits?");
if (hCanonical(nanParams, nanOpt) !== hCanonical(armParams, armOpt)) throw new Error("canonical digests of NaN states differ");

const candidates: Record<string, () => void> = {
  "h(t) sha256-v1 (finite state)": () => void h(params, opt),
  "NaN scan, x !== x (finite)": () => { for (const a of [...params, ...opt]) firstNaN(a); },
  "NaN scan, uint32 bits (finite)": () => { for (const a of [...params, ...opt]) firstNaNBits(a); },
  "NaN screen, unrolled f64 sum (finite)": () => { for (const a of [...params, ...opt]) maybeNaNSum(a); },
  "h(t) sha256-v2 (finite: no copy)": () => void hCanonical(params, opt),
  "h(t) sha256-v1 (all-NaN state)": () => void h(nanParams, nanOpt),
  "h(t) sha256-v2 (all-NaN: copy)": () => void hCanonical(nanParams, nanOpt),
};
const rounds = 5, reps = 20;
const acc: Record<string, number[]> = Object.fromEntries(Object.keys(candidates).map((k) => [k, []]));
for (const f of Object.values(candidates)) for (let i = 0; i < 3; i++) f(); // warm-up
for (let r = 0; r < rounds; r++) {
  // interleaved: every candidate once per round, so load on the machine moves them together
  for (const [name, f] of Object.entries(candidates)) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < reps; i++) f();
    const d = process.cpuUsage(t0);
    acc[name]!.push((d.user + d.system) / 1000 / reps);
  }
}
const base = [...acc["h(t) sha256-v1 (finite state)"]!].sort((a, b) => a - b)[Math.floor(rounds / 2)]!;
const rows = Object.entries(acc).map(([name, ms]) => {
  ms.sort((a, b) => a - b);
  const median = ms[Math.floor(rounds / 2)]!;
  return { what: name, bytes, msBest: +ms[0]!.toFixed(3), msMedian: +median.toFixed(3), vsSha256V1: +(median / base).toFixed(3) };
});
mkdirSync(join(import.meta.dirname, "results"), { recursive: true });
writeFileSync(join(import.meta.dirname, "results/nan-canonical.json"), JSON.stringify({ bench: "nan-canonical", date: new Date().toISOString(), node: process.version, timing: "process CPU ms per call, median of 5 interleaved rounds x 20; a loaded shared machine: upper bounds", invariants: { finiteDigestUnchanged: true, nanBitsIgnored: true }, rows }, null, 2) + "\n");
for (const r of rows) console.log(`${r.what.padEnd(38)} ${(r.bytes / 1e6).toFixed(2)} MB  ${r.msMedian.toFixed(3)} ms (best ${r.msBest.toFixed(3)})  ${r.vsSha256V1.toFixed(3)} x sha256-v1 h(t)`);
