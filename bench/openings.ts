/**
 * What a state opening costs the provider, both ways (verifier/src/provider/openings.ts), on one manifest (default
 * examples/mnist-fast.json: 8 segments of K = 50 steps, a 1.2 MB state), in one process:
 * - training: the segment loop as `pouw provider run` runs it, once storing only each segment's start checkpoint
 *   (what commitSegment names anyway) and once storing every state's checkpoint (keepStepStates); CPU, wall and
 *   bytes written to the content store each way;
 * - an opening of state first + j of a middle segment, for j = 1, K/4, K/2, 3K/4, K-1: "recompute" replays j steps
 *   from the segment's start checkpoint, hashes and stores the state; "kept" reads the stored checkpoint and checks
 *   its hash. The expected cost of an opening of a uniformly random state is the recompute cost fitted over j at
 *   (K-1)/2 replayed steps.
 * CPU is process.cpuUsage (user + system) around each part. Writes bench/results/openings.json.
 *
 * Run: node bench/openings.ts [manifest.json]   (Node 22; no chain)
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRun, offlineSalt, parseManifest, parseStrategy } from "../verifier/src/ml/index.ts";
import { trainSegments, type SegmentResult } from "../verifier/src/ml/segments.ts";
import { openState } from "../verifier/src/provider/openings.ts";
import type { SegmentCommit } from "../verifier/src/chain/index.ts";
import { LocalDirStore } from "../verifier/src/store/index.ts";

const manifestPath = process.argv[2] ?? new URL("../examples/mnist-fast.json", import.meta.url).pathname;
const manifest = parseManifest(JSON.parse(readFileSync(manifestPath, "utf8")));
const K = manifest.training.stepsPerSegment;
const S = manifest.training.steps / K;
const JOB = 1n;
const honest = parseStrategy("honest");
const tmp = mkdtempSync(join(tmpdir(), "pouw-bench-openings-"));

const dirBytes = (dir: string): number => {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? dirBytes(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return n;
};
const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

async function trainAll(keep: boolean) {
  const dir = join(tmp, keep ? "kept" : "start-only");
  const store = new LocalDirStore(dir);
  const run = await createRun(manifest, { jobId: JOB, salt: offlineSalt(JOB), store });
  const start = await run.initFromStore(store);
  const segments: SegmentResult[] = [];
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  for await (const s of trainSegments(run, { strategy: honest, store, start, endSegment: S, ...(keep ? { keepStepStates: true } : {}) })) segments.push(s);
  const train = { cpuMs: cpuMs(process.cpuUsage(c0)), wallMs: performance.now() - w0, storeBytes: dirBytes(dir) };
  return { run, store, segments, train };
}

const plain = await trainAll(false);
const kept = await trainAll(true);
const seg = Math.floor(S / 2);
const s = plain.segments[seg]!;
const commit: SegmentCommit = { jobId: JOB, segment: seg, traceRoot: s.traceRoot, endStateHash: s.stateHashes[K]!, lossE6: BigInt(s.lossE6), checkpointCid: s.checkpointCid, stateHashes: s.stateHashes, blockNumber: 0n, transactionHash: "0x" };
const js = [...new Set([1, Math.floor(K / 4), Math.floor(K / 2), Math.floor((3 * K) / 4), K - 1])];
const rows: { j: number; recompute: { cpuMs: number; wallMs: number; bytes: number }; kept: { cpuMs: number; wallMs: number; bytes: number } }[] = [];
for (const j of js) {
  const r = await openState(plain.run, plain.store, honest, commit, seg * K + j, null);
  const k = await openState(kept.run, kept.store, honest, commit, seg * K + j, kept.segments[seg]!.stateCids);
  if (r.stateHash !== k.stateHash || r.checkpointCid !== k.checkpointCid) throw new Error(`state ${seg * K + j}: the two ways disagree`);
  rows.push({ j, recompute: { cpuMs: round(r.cpuMs), wallMs: round(r.wallMs), bytes: r.bytes }, kept: { cpuMs: round(k.cpuMs), wallMs: round(k.wallMs), bytes: k.bytes } });
}
// least-squares line of recompute CPU over j: fixed (load, hash, store) + per replayed step
const n = rows.length;
const mx = rows.reduce((a, r) => a + r.j, 0) / n;
const my = rows.reduce((a, r) => a + r.recompute.cpuMs, 0) / n;
const slope = rows.reduce((a, r) => a + (r.j - mx) * (r.recompute.cpuMs - my), 0) / rows.reduce((a, r) => a + (r.j - mx) ** 2, 0);
const fixed = my - slope * mx;
const expectedRecompute = fixed + slope * ((K - 1) / 2);
const keptMean = rows.reduce((a, r) => a + r.kept.cpuMs, 0) / n;
const trainStepCpu = plain.train.cpuMs / (S * K);

const result = {
  manifest: manifestPath.split("/").slice(-2).join("/"),
  segments: S,
  stepsPerSegment: K,
  checkpointBytes: rows[0]!.recompute.bytes,
  training: {
    startCheckpointsOnly: { cpuMs: Math.round(plain.train.cpuMs), wallMs: Math.round(plain.train.wallMs), storeBytes: plain.train.storeBytes },
    everyStateKept: { cpuMs: Math.round(kept.train.cpuMs), wallMs: Math.round(kept.train.wallMs), storeBytes: kept.train.storeBytes },
    cpuMsPerStep: round(trainStepCpu, 2),
  },
  openingsOfSegment: seg,
  openings: rows,
  fit: {
    recomputeFixedCpuMs: round(fixed),
    recomputeCpuMsPerReplayedStep: round(slope, 2),
    expectedRecomputeCpuMs: round(expectedRecompute),
    expectedRecomputeInTrainingSteps: round(expectedRecompute / trainStepCpu),
    keptCpuMs: round(keptMean),
    keptExtraStoreBytesPerJob: kept.train.storeBytes - plain.train.storeBytes,
    keptExtraTrainingCpuMs: Math.round(kept.train.cpuMs - plain.train.cpuMs),
  },
  node: process.version,
};
await plain.run.close();
await kept.run.close();
rmSync(tmp, { recursive: true, force: true });
console.log(JSON.stringify(result, null, 2));
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
writeFileSync(new URL("./results/openings.json", import.meta.url), JSON.stringify(result, null, 2) + "\n");
