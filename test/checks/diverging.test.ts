/**
 * A verified non-finite state is no fault by itself: the rule's own trajectory diverges on some manifests, and only the
 * provider's divergence from the rule may be a fault, never following it. The diverging job is tiny.json with Adam's
 * learning rate 1e30 (chosen by the buyer): state 1 is finite, state 2 overflows to NaN, and so does every later state.
 *
 * Before the fix the opening of a segment (segment.ts fetchState) failed a verified NaN start checkpoint as
 * state-non-finite with a claim at its first step, so the honest provider's segments 1 and 2 failed every check and a
 * panel member voted Fault; the magnitude and tolerance checks claimed step 2 itself. Now every check agrees: a
 * recompute of every segment passes, Freivalds and the magnitude bound defer a non-finite step to its exact recompute
 * (segment.ts exactStep), the tolerance check accepts a non-finite state where the reference step is non-finite too,
 * the screen still reports the NaN (no claim; its recompute pointer names the producing segment, which passes), and a
 * panel member votes Valid on every step.
 *
 * The cheater: a NaN the rule does not produce (nan-plant:6, a NaN written at step 6 of an ordinary job) still loses at
 * step 6 in every check that can name a step (recompute, Freivalds, magnitude: state-divergence; tolerance:
 * state-non-finite) and in the panel's vote.
 */
import { expect } from "chai";
import { join } from "node:path";
import type { Hex } from "viem";
import { auditSegment, type CheckResult, decideStep, freivaldsSegment, magnitudeSegment, nonFinite, openTraceDir, recomputeSegment, screenSegment, toleranceSegment, writeStepStates } from "../../verifier/src/checks/index.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, train, type Run, type TrainState } from "../../verifier/src/ml/index.ts";
import { cidOf } from "../../verifier/src/store/index.ts";
import { CANONICAL_NAN_BITS, traceRoot } from "../../verifier/src/trace/index.ts";
import { exampleJson } from "../ml/helpers.ts";
import { Fixture, JOB_ID } from "./fixture.ts";

describe("checks: a diverging job (lr 1e30, NaN from step 2) is the rule's trajectory, not the provider's fault", function () {
  this.timeout(600_000);
  const fx = new Fixture();
  const tiny = exampleJson("tiny.json") as { optimizer: object };

  /** An honest (or cheating) trace of `manifest` with its per-step states served (steps.json). */
  async function traceOf(run: Run, label: string, strategy: string) {
    const dir = join(fx.dir, `diverging-${label}`);
    const r = await train(run, { outDir: dir, strategy: parseStrategy(strategy), evaluate: false, keepStepStates: true });
    await writeStepStates(run, dir, r.stepStateCids!);
    return openTraceDir(run, dir);
  }

  let run: Run;
  before(async () => {
    await fx.setup();
    run = await createRun(parseManifest({ ...tiny, optimizer: { name: "adam", lr: 1e30 } }), { jobId: JOB_ID + 11n, salt: offlineSalt(JOB_ID + 11n) });
  });
  after(async () => {
    await run.close();
    await fx.teardown();
  });

  it("the manifest really diverges: state 1 finite, state 2 NaN, every segment start after 0 NaN", async () => {
    const s1 = run.step(run.initState(), 1).state;
    expect(nonFinite(run, s1)).to.equal(null);
    expect(nonFinite(run, run.step(s1, 2).state)).to.match(/is NaN$/);
    const ctx = await traceOf(run, "check", "honest");
    for (const seg of [1, 2]) {
      const start = run.loadCheckpoint(await ctx.store.get(ctx.trace.segments[seg]!.checkpointCid), { step: seg * 4 });
      expect(nonFinite(run, start), `segment ${seg}'s start`).to.match(/is NaN$/);
    }
  });

  it("honest provider: recompute, Freivalds, magnitude and tolerance pass every segment; the screen reports the NaN with no claim", async () => {
    const ctx = await traceOf(run, "honest", "honest");
    for (let seg = 0; seg < 3; seg++) {
      for (const r of [
        await recomputeSegment(ctx, seg),
        await freivaldsSegment(ctx, seg),
        await magnitudeSegment(ctx, seg, ctx.stepStates!),
        await toleranceSegment(ctx, seg, ctx.stepStates!, { threshold: 1e-3 }),
      ]) {
        expect([r.check, r.ok, r.failure?.message], `segment ${seg}`).to.deep.equal([r.check, true, undefined]);
      }
      // the pipeline's audit (the bot's and `pouw audit`'s path) agrees
      expect((await auditSegment(ctx, seg, { checks: ["recompute", "freivalds", "magnitude"] })).ok, `audit segment ${seg}`).to.equal(true);
    }
    // the steps from a NaN state were decided by their exact recompute (the cheap checks cannot bound a NaN)
    expect((await magnitudeSegment(ctx, 1, ctx.stepStates!)).details!.exactSteps).to.equal(4);
    expect((await freivaldsSegment(ctx, 2)).details!.exactSteps).to.equal(4);
    for (const seg of [1, 2, 3]) {
      const r = await screenSegment(ctx, seg);
      expect([r.ok, r.failure?.kind, r.proof, r.details!.recompute], `screen ${seg}`).to.deep.equal([false, "state-non-finite", null, seg - 1]);
    }
  });

  it("a panel member votes Valid on the step that overflowed (2), a start claim (5) and later steps", async () => {
    const ctx = await traceOf(run, "vote", "honest");
    const h = ctx.trace.stateHashes as Hex[];
    for (const [segment, step] of [[0, 2], [0, 3], [1, 5], [1, 8], [2, 9], [2, 12]] as const) {
      const d = await decideStep({ target: ctx, segment, step, hPrev: h[step - 1]!, hStep: h[step]! });
      expect([d.vote, d.reason], `step ${step}`).to.deep.equal(["Valid", `recomputed h(${step}) = ${h[step]} matches the committed leaf`]);
    }
  });

  it("the cheater: a NaN the rule does not produce (nan-plant:6) loses at step 6 in every check and in the vote", async () => {
    const ctx = await traceOf(fx.run, "plant", "nan-plant:6");
    const h = ctx.trace.stateHashes as Hex[];
    const expectAt6 = (r: CheckResult, kind: string, what: string) =>
      expect([r.ok, r.failure?.kind, r.firstBadStep, r.proof?.step], what).to.deep.equal([false, kind, 6, 6]);
    expectAt6(await recomputeSegment(ctx, 1), "state-divergence", "recompute");
    expectAt6(await freivaldsSegment(ctx, 1), "state-divergence", "freivalds");
    expectAt6(await magnitudeSegment(ctx, 1, ctx.stepStates!), "state-divergence", "magnitude");
    expectAt6(await toleranceSegment(ctx, 1, ctx.stepStates!, { threshold: 1e-3 }), "state-non-finite", "tolerance");
    expect((await decideStep({ target: ctx, segment: 1, step: 6, hPrev: h[5]!, hStep: h[6]! })).vote).to.equal("Fault");
    // the later segments start from the planted NaN: their steps are the engine's own (no second fault to claim)
    expect((await recomputeSegment(ctx, 2)).ok).to.equal(true);
  });
});

/**
 * An honest arm64 provider of the diverging job, judged by an x86-64 panel member. The two machines compute the same
 * values; only the bits of a generated NaN differ (x86-64 0xFFC00000, arm64 0x7FC00000: `npm run test:crossarch`
 * trains examples/diverging.json on both). The arm64 provider's states are built here as what arm64 produces: this
 * machine's states with every NaN written as 0x7FC00000. Under the digests that hash the raw bits (keccak256,
 * sha256-v1) its leaves differ from the member's recompute from step 2 on and the member votes Fault on an honest
 * step; under the NaN-canonical sha256-v2 they are the member's own and it votes Valid.
 */
describe("checks: an x86-64 panel member on an arm64 provider's diverged step (lr 1e30)", function () {
  this.timeout(600_000);
  const fx = new Fixture();
  const tiny = exampleJson("tiny.json") as { optimizer: object };
  /** What arm64 holds where this machine holds `s`: every NaN as 0x7FC00000 (other bits unchanged). */
  const armBits = (s: TrainState): TrainState => {
    const arm = (a: Float32Array) => {
      const c = Float32Array.from(a);
      const u = new Uint32Array(c.buffer);
      for (let i = 0; i < u.length; i++) if ((u[i]! & 0x7fffffff) > 0x7f800000) u[i] = CANONICAL_NAN_BITS;
      return c;
    };
    return { step: s.step, params: s.params.map(arm), opt: s.opt.map(arm) };
  };

  before(async () => fx.setup());
  after(async () => fx.teardown());

  /** The votes of an x86-64 member on steps 2 (finite -> NaN) and 3 (NaN -> NaN) of the arm64 provider's segment 0. */
  async function votes(stateDigest: "sha256-v1" | "sha256-v2") {
    const run = await createRun(parseManifest({ ...tiny, optimizer: { name: "adam", lr: 1e30 }, stateDigest }), { jobId: JOB_ID + 12n, salt: offlineSalt(JOB_ID + 12n) });
    try {
      const dir = join(fx.dir, `crossarch-${stateDigest}`);
      await train(run, { outDir: dir, strategy: parseStrategy("honest"), evaluate: false });
      const x86 = await openTraceDir(run, dir);
      const K = run.manifest.training.stepsPerSegment;
      // the arm64 provider's segment 0: the same steps, its own NaN bits, its own leaves and root
      const states: TrainState[] = [run.initState()];
      for (let t = 1; t <= K; t++) states.push(run.step(states[t - 1]!, t).state);
      const x86Sign = new Uint32Array(states[2]!.params[0]!.buffer)[0]!;
      const armHashes = states.map((s) => run.stateHashOf(armBits(s)));
      const armTrace = {
        ...x86.trace!,
        stateHashes: [...armHashes, ...x86.trace!.stateHashes.slice(K + 1)],
        segments: [{ ...x86.trace!.segments[0]!, traceRoot: traceRoot(0, armHashes), endStateHash: armHashes[K]! }, ...x86.trace!.segments.slice(1)],
      };
      const arm = { run, store: x86.store, trace: armTrace };
      const vote = async (step: number) => decideStep({ target: arm, segment: 0, step, hPrev: armHashes[step - 1]! as Hex, hStep: armHashes[step]! as Hex });
      // the arm64 provider's NaN-state checkpoint (segment 1's start) against the one this machine wrote
      const armCheckpointCid = cidOf(run.checkpointBytes(armBits(states[K]!)));
      return { x86Sign, v2: await vote(2), v3: await vote(3), sameLeaves: armHashes.every((h, t) => h === x86.trace!.stateHashes[t]), sameCheckpoint: armCheckpointCid === x86.trace!.segments[1]!.checkpointCid };
    } finally {
      await run.close();
    }
  }

  it("sha256-v1 (raw NaN bits): the member names the honest step 2 (Fault), and step 3 after it", async () => {
    const r = await votes("sha256-v1");
    expect(r.x86Sign >>> 0, "this machine's NaN is x86-64's 0xFFC00000").to.equal(0xffc00000);
    expect(r.sameLeaves).to.equal(false);
    expect(r.v2.vote).to.equal("Fault");
    expect(r.v2.reason).to.match(/^recomputed h\(2\) = 0x[0-9a-f]{64}, the provider committed/);
    expect(r.v3.vote).to.equal("Fault");
    expect(r.sameCheckpoint).to.equal(false);
  });

  it("sha256-v2 (NaN-canonical): the same leaves on both machines, a Valid vote on steps 2 and 3, one checkpoint CID", async () => {
    const r = await votes("sha256-v2");
    expect(r.sameLeaves).to.equal(true);
    expect([r.v2.vote, r.v3.vote]).to.deep.equal(["Valid", "Valid"]);
    expect(r.sameCheckpoint).to.equal(true);
  });
});
