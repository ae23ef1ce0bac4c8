// Hashes Math.exp/log/log2/sqrt/tanh/pow over 10^6 fixed inputs (float64 and float32-rounded
// results). Plain JavaScript so any Node version can run it: compare the printed hashes across
// Node versions and machines (docs/determinism.md).
//   node scripts/math-determinism.mjs; node_modules/.bin/node scripts/math-determinism.mjs
import { createHash } from "node:crypto";

const N = 1_000_000;
const xs = new Float64Array(N);
let a = 0x9e3779b9 | 0;
for (let i = 0; i < N; i++) {
  a = (Math.imul(a, 1664525) + 1013904223) | 0;
  xs[i] = ((a >>> 0) / 2 ** 32) * 60 - 30;
}
const fns = [
  ["exp", Math.exp],
  ["log", (x) => Math.log(Math.abs(x) + 1e-3)],
  ["log2", (x) => Math.log2(Math.abs(x) + 1e-3)],
  ["sqrt", (x) => Math.sqrt(Math.abs(x))],
  ["tanh", Math.tanh],
  ["pow", (x) => Math.pow(0.999, Math.abs(x) * 1000)],
];
const out = {};
for (const [name, f] of fns) {
  const r64 = new Float64Array(N);
  const r32 = new Float32Array(N);
  for (let i = 0; i < N; i++) {
    r64[i] = f(xs[i]);
    r32[i] = f(Math.fround(xs[i]));
  }
  const h = (arr) => createHash("sha256").update(Buffer.from(arr.buffer)).digest("hex").slice(0, 16);
  out[name] = { f64: h(r64), f32: h(r32) };
}
console.log(JSON.stringify({ node: process.version, v8: process.versions.v8, arch: process.arch, hashes: out }));
