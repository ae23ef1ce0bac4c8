/**
 * Inner-digest throughput (MB/s) over a mnist-mlp 784-128-10 Adam state's float32 arrays, hashed in place
 * (no concatenation): the candidates for the state digest (docs/engine.md "State digest").
 * and, to split a pouw step's "hash" into its parts: the whole h(t) as run.stateHashOf computes it (tensorStateHash:
 * two sha256 over the tensors in place, then keccak of the 160-byte preimage), sha256 over one contiguous copy, and
 * the 1.2 MB copy HashPipeline.submit makes. Process CPU time, so other jobs on the machine move it less.
 * Run: node bench/digest.ts [--json]; writes bench/results/digest.json.
 */
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createBLAKE3, createKeccak, createSHA256 } from "hash-wasm";
import { float32Chunks } from "../verifier/src/ml/tensors.ts";
import { tensorStateHash } from "../verifier/src/trace/index.ts";
import { mnistAdamState } from "./mnist-state.ts";

const { params, opt } = mnistAdamState();
const chunks = [...params, ...opt].map((a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
const bytes = chunks.reduce((s, c) => s + c.byteLength, 0);
const contiguous = new Uint8Array(bytes);

const keccak = await createKeccak(256);
const sha256w = await createSHA256();
const blake3 = await createBLAKE3(256);
const candidates: Record<string, () => void> = {
  "keccak256 (hash-wasm)": () => { keccak.init(); for (const c of chunks) keccak.update(c); keccak.digest("binary"); },
  "sha256 (node:crypto)": () => { const h = createHash("sha256"); for (const c of chunks) h.update(c); h.digest(); },
  "sha256 (hash-wasm)": () => { sha256w.init(); for (const c of chunks) sha256w.update(c); sha256w.digest("binary"); },
  "blake3 (hash-wasm)": () => { blake3.init(); for (const c of chunks) blake3.update(c); blake3.digest("binary"); },
  "h(t) sha256-v1 (stateHashOf)": () => { tensorStateHash("sha256-v1", 1n, 5, float32Chunks(params), float32Chunks(opt)); },
  "sha256, one contiguous buffer": () => { createHash("sha256").update(contiguous).digest(); },
  "copy of the state (1.2 MB)": () => { let at = 0; for (const c of chunks) { contiguous.set(c, at); at += c.byteLength; } },
};

const rounds = 5, reps = 20;
const rows = [];
for (const [name, f] of Object.entries(candidates)) {
  for (let i = 0; i < 3; i++) f(); // warm-up
  const ms: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < reps; i++) f();
    const d = process.cpuUsage(t0);
    ms.push((d.user + d.system) / 1000 / reps);
  }
  ms.sort((a, b) => a - b);
  const best = ms[0]!, median = ms[Math.floor(rounds / 2)]!;
  rows.push({ digest: name, bytes, msBest: +best.toFixed(3), msMedian: +median.toFixed(3), mbPerSecond: Math.round(bytes / 1e6 / (median / 1000)) });
}
mkdirSync(join(import.meta.dirname, "results"), { recursive: true });
writeFileSync(join(import.meta.dirname, "results/digest.json"), JSON.stringify({ bench: "digest", date: new Date().toISOString(), node: process.version, timing: "process CPU ms per call, median of 5 rounds x 20", rows }, null, 2) + "\n");
if (process.argv.includes("--json")) console.log(JSON.stringify(rows, null, 2));
else for (const r of rows) console.log(`${r.digest.padEnd(24)} ${(r.bytes / 1e6).toFixed(2)} MB  ${r.msMedian.toFixed(2)} ms (best ${r.msBest.toFixed(2)})  ${r.mbPerSecond} MB/s`);
