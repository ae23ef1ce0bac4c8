/**
 * The sampled-step audit (checks/step-sample.ts) and the panel's decision on its claims (decideStep with the
 * opening of the pre-state, whoever asked it): one step recomputed from an opened state, on tiny.json (K = 4) traces.
 */
import { expect } from "chai";
import type { Hex } from "viem";
import { auditSampledStep, decideStep, openSegment, replaySteps, type SegmentCommitment, type SegmentToAudit, type TraceAuditContext } from "../../verifier/src/checks/index.ts";
import { openTraceDir } from "../../verifier/src/checks/index.ts";
import { Fixture } from "./fixture.ts";

function onChain(ctx: TraceAuditContext): SegmentCommitment[] {
  return ctx.trace.segments.map((s) => ({ index: s.index, traceRoot: s.traceRoot as Hex, checkpointCid: s.checkpointCid, stateHashes: ctx.trace.stateHashes.slice(s.firstStep, s.lastStep + 1) as Hex[] }));
}

function botTarget(ctx: TraceAuditContext, i: number): SegmentToAudit {
  const commitments = onChain(ctx).slice(0, i + 1);
  return { market: "0x0000000000000000000000000000000000000001", jobId: ctx.run.jobId, segment: i, traceRoot: commitments[i]!.traceRoot, endStateHash: commitments[i]!.stateHashes!.at(-1)!, commitments };
}

/** Publishes state `state` of segment `i` (replayed from its start, as a provider answering an opening does): its CID. */
async function openedCid(ctx: TraceAuditContext, i: number, state: number): Promise<string> {
  const opened = await openSegment(ctx, i);
  if (!opened.ok) throw new Error(opened.failure.message);
  return ctx.store.put(ctx.run.checkpointBytes(replaySteps(ctx.run, opened.value.start, state)));
}

describe("checks: a sampled step recomputed from an opened state", function () {
  this.timeout(300_000);
  const fx = new Fixture();
  before(async () => fx.setup());
  after(async () => fx.teardown());

  it("passes an honest step, names a planted one, and the panel decides each the same way from the opening", async () => {
    const { dir } = await fx.trace("plant:6");
    const ctx = await openTraceDir(fx.run, dir);
    const t = botTarget(ctx, 1);
    const leaves = t.commitments[1]!.stateHashes!;
    // step 5 (from state 4, the segment's start) is honest; step 6 (from state 5) is the plant
    const honest = await auditSampledStep({ run: fx.run, store: ctx.store }, t, 5, { checkpointCid: await openedCid(ctx, 1, 4) });
    expect([honest.ok, honest.stepsChecked]).to.deep.equal([true, 1]);
    const cid5 = await openedCid(ctx, 1, 5);
    const bad = await auditSampledStep({ run: fx.run, store: ctx.store }, t, 6, { checkpointCid: cid5 });
    expect([bad.ok, bad.failure?.kind, bad.proof?.step, bad.proof?.prevStateHash, bad.proof?.stateHash]).to.deep.equal([false, "state-divergence", 6, leaves[1], leaves[2]]);
    const target = { run: fx.run, store: ctx.store, commitments: t.commitments };
    expect((await decideStep({ target, segment: 1, step: 6, hPrev: leaves[1]!, hStep: leaves[2]!, preStateOpening: { checkpointCid: cid5 } })).vote).to.equal("Fault");
    expect((await decideStep({ target, segment: 1, step: 5, hPrev: leaves[0]!, hStep: leaves[1]!, preStateOpening: { checkpointCid: await openedCid(ctx, 1, 4) } })).vote).to.equal("Valid");
  });

  it("an opened CID that does not serve the committed state, or an opening withheld, is claimed at the step and voted Fault", async () => {
    const { dir } = await fx.trace("honest");
    const ctx = await openTraceDir(fx.run, dir);
    const t = botTarget(ctx, 1);
    const leaves = t.commitments[1]!.stateHashes!;
    const target = { run: fx.run, store: ctx.store, commitments: t.commitments };
    // the CID of another state (state 4 answered for state 5): its step counter is not state 5's
    const wrong = await openedCid(ctx, 1, 4);
    const v = await auditSampledStep({ run: fx.run, store: ctx.store }, t, 6, { checkpointCid: wrong });
    expect([v.ok, v.failure?.kind, v.proof?.step]).to.deep.equal([false, "checkpoint-invalid", 6]);
    expect((await decideStep({ target, segment: 1, step: 6, hPrev: leaves[1]!, hStep: leaves[2]!, preStateOpening: { checkpointCid: wrong } })).vote).to.equal("Fault");
    // bytes that are no checkpoint
    const junk = await ctx.store.put(new TextEncoder().encode("not a checkpoint"));
    const j = await auditSampledStep({ run: fx.run, store: ctx.store }, t, 6, { checkpointCid: junk });
    expect([j.ok, j.failure?.kind, j.proof?.step]).to.deep.equal([false, "checkpoint-invalid", 6]);
    // withheld: the honest step is still claimed (the provider did not open what it committed), and voted Fault
    const w = await auditSampledStep({ run: fx.run, store: ctx.store }, t, 6, { withheld: "unanswered" });
    expect([w.ok, w.failure?.kind, w.proof?.step]).to.deep.equal([false, "content-unavailable", 6]);
    expect((await decideStep({ target, segment: 1, step: 6, hPrev: leaves[1]!, hStep: leaves[2]!, preStateOpening: { withheld: "unanswered" } })).vote).to.equal("Fault");
    // without the opening the same honest step is Valid (the rule is the opening's, not the step's)
    expect((await decideStep({ target, segment: 1, step: 6, hPrev: leaves[1]!, hStep: leaves[2]! })).vote).to.equal("Valid");
    // a step outside the segment is the caller's bug
    let err: unknown;
    await auditSampledStep({ run: fx.run, store: ctx.store }, t, 4, { withheld: "x" }).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(RangeError);
  });
});
