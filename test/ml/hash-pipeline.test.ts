import { expect } from "chai";
import { HashPipeline, IDLE_POLLS, POLL_MS } from "../../verifier/src/ml/hash-pipeline.ts";
import { HashWorkerTimeoutError } from "../../verifier/src/ml/errors.ts";
import { createRun, offlineSalt, parseManifest, type Run, type TrainState } from "../../verifier/src/ml/index.ts";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { readTraceFile } from "../../verifier/src/ml/index.ts";
import { runPouw } from "../cli/in-process.ts";
import { exampleJson, ROOT, tempDir } from "./helpers.ts";
import fixed from "./tiny-keccak-vectors.json" with { type: "json" };

async function states(manifest: Record<string, unknown>, steps: number): Promise<{ run: Run; states: TrainState[] }> {
  const run = await createRun(parseManifest(manifest), { jobId: 0n, salt: offlineSalt(0n) });
  const out = [run.initState()];
  for (let t = 1; t <= steps; t++) out.push(run.step(out[t - 1]!, t).state);
  return { run, states: out };
}

describe("ml/hash-pipeline: state hashes on a worker thread are Run.stateHashOf's", () => {
  const pipes: HashPipeline[] = [];
  after(async () => Promise.all(pipes.map((p) => p.close())));

  it("examples/tiny.json (keccak256): h(0)..h(12) submitted two at a time are the fixed vectors, in order", async () => {
    const { run, states: s } = await states(exampleJson("tiny.json"), 12);
    const pipe = new HashPipeline(run.stateDigest, run.jobId, 2);
    pipes.push(pipe);
    const got: string[] = [];
    for (let t = 0; t <= 12; t += 2) {
      pipe.submit(s[t]!);
      if (t + 1 <= 12) pipe.submit(s[t + 1]!);
      while (pipe.pending > 0) got.push(pipe.next());
    }
    expect(got).to.deep.equal(fixed.stateHashes);
  });

  it("sha256-v1 with another job id: every hash equals stateHashOf, also for states submitted out of step order", async () => {
    const m = { ...exampleJson("tiny.json"), stateDigest: "sha256-v1" };
    const run = await createRun(parseManifest(m), { jobId: 77n, salt: offlineSalt(77n) });
    const s = [run.initState()];
    for (let t = 1; t <= 6; t++) s.push(run.step(s[t - 1]!, t).state);
    const pipe = new HashPipeline("sha256-v1", 77n, 3);
    pipes.push(pipe);
    for (const t of [5, 0, 3]) pipe.submit(s[t]!);
    expect([pipe.next(), pipe.next(), pipe.next()]).to.deep.equal([5, 0, 3].map((t) => run.stateHashOf(s[t]!)));
    // the job id is bound in: another job's pipeline gives other hashes for the same tensors
    const other = new HashPipeline("sha256-v1", 78n, 1);
    pipes.push(other);
    other.submit(s[1]!);
    expect(other.next()).to.not.equal(run.stateHashOf(s[1]!));
  });

  it("sha256-v2 on a diverged run (examples/diverging.json): the worker's hashes of NaN states are stateHashOf's, whatever the NaN bits", async () => {
    const { run, states: s } = await states(exampleJson("diverging.json"), 4);
    expect(Number.isNaN(s[3]!.params[0]![0]), "state 3 is NaN").to.equal(true);
    const pipe = new HashPipeline("sha256-v2", run.jobId, 3);
    pipes.push(pipe);
    // state 3 as arm64 holds it: every NaN 0x7FC00000 (this machine's are 0xFFC00000)
    const arm = (a: Float32Array) => {
      const c = Float32Array.from(a);
      const u = new Uint32Array(c.buffer);
      for (let i = 0; i < u.length; i++) if (Number.isNaN(c[i])) u[i] = 0x7fc00000;
      return c;
    };
    const armState: TrainState = { step: 3, params: s[3]!.params.map(arm), opt: s[3]!.opt.map(arm) };
    for (const t of [1, 3]) pipe.submit(s[t]!);
    pipe.submit(armState);
    expect([pipe.next(), pipe.next(), pipe.next()]).to.deep.equal([run.stateHashOf(s[1]!), run.stateHashOf(s[3]!), run.stateHashOf(s[3]!)]);
    await run.close();
  });

  it("a worker that went to sleep after IDLE_POLLS empty polls is woken by the next submit (not only found by polling)", async () => {
    const { run, states: s } = await states(exampleJson("tiny.json"), 2);
    const pipe = new HashPipeline(run.stateDigest, run.jobId, 1);
    pipes.push(pipe);
    pipe.submit(s[0]!);
    expect(pipe.next()).to.equal(fixed.stateHashes[0]);
    // IDLE_POLLS x POLL_MS = 20 ms of polling, then the worker waits for a notify
    await new Promise((r) => setTimeout(r, 30 * IDLE_POLLS * POLL_MS));
    expect(pipe.workerSleeping, "the idle worker sleeps").to.equal(true);
    pipe.submit(s[1]!);
    expect(pipe.next()).to.equal(fixed.stateHashes[1]);
    pipe.submit(s[2]!);
    expect(pipe.next()).to.equal(fixed.stateHashes[2]);
  });

  it("refuses next() with nothing submitted and a submit beyond its depth", async () => {
    const { run, states: s } = await states(exampleJson("tiny.json"), 1);
    const pipe = new HashPipeline(run.stateDigest, run.jobId, 1);
    pipes.push(pipe);
    expect(() => pipe.next()).to.throw(RangeError, /nothing submitted/);
    pipe.submit(s[0]!);
    expect(() => pipe.submit(s[1]!)).to.throw(RangeError, /hash pipeline full/);
    expect(pipe.next()).to.equal(fixed.stateHashes[0]);
    expect(() => new HashPipeline(run.stateDigest, run.jobId, 0)).to.throw(RangeError);
  });

  it("a dead worker makes next() fail with HashWorkerTimeoutError after the wait limit instead of hanging", async () => {
    const { run, states: s } = await states(exampleJson("tiny.json"), 1);
    const pipe = new HashPipeline(run.stateDigest, run.jobId, 2, { waitLimitMs: 300 });
    pipes.push(pipe);
    pipe.waitReady();
    pipe.submit(s[0]!);
    expect(pipe.next()).to.equal(fixed.stateHashes[0]);
    await pipe.close(); // the worker is gone: nothing will hash the next submission
    pipe.submit(s[1]!);
    const t0 = performance.now();
    expect(() => pipe.next()).to.throw(HashWorkerTimeoutError, /no hash for submission 2 within 300 ms/);
    expect(performance.now() - t0).to.be.within(250, 5_000);
    expect(() => new HashPipeline(run.stateDigest, run.jobId, 2, { waitLimitMs: 0 })).to.throw(RangeError, /wait limit/);
  });

  it("pouw train --hash-worker (1 matmul thread, the hash on a worker) writes the fixed state hashes of examples/tiny.json", async () => {
    const dir = await tempDir("hash-worker");
    try {
      const out = join(dir, "hw");
      const r = await runPouw(["train", "--manifest", join(ROOT, "examples/tiny.json"), "--out", out, "--hash-worker"]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.contain("engine pouw (hash worker)");
      expect((await readTraceFile(join(out, "trace.json"))).stateHashes).to.deep.equal(fixed.stateHashes);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
