/**
 * One audit pipeline: `pouw audit` over a trace directory, the challenger bot over the chain's commitments
 * and a panel member's vote call the same functions (checks/recompute.ts, checks/screen-segment.ts, checks/decide.ts),
 * so they reach the same verdict, and every failure is either a claim the panel upholds or a stated reason why not.
 */
import { expect } from "chai";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Hex } from "viem";
import { AuditInputError, auditChainSegment, checkTarget, decideStep, FAILURE_KINDS, noClaimReason, openTraceDir, recomputeSegment, screenSegment, screenStart, type AuditTarget, type SegmentCommitment, type SegmentToAudit, type TraceAuditContext } from "../../verifier/src/checks/index.ts";
import { Fixture } from "./fixture.ts";

/** The commitments SegmentCommitted would carry for this trace: root, checkpoint CID and the K+1 leaves. */
function onChain(ctx: TraceAuditContext): SegmentCommitment[] {
  return ctx.trace.segments.map((s) => ({ index: s.index, traceRoot: s.traceRoot as Hex, checkpointCid: s.checkpointCid, stateHashes: ctx.trace.stateHashes.slice(s.firstStep, s.lastStep + 1) as Hex[] }));
}

/** The bot's view of segment i: the chain's commitments 0..i, no trace.json. */
function botTarget(ctx: TraceAuditContext, i: number): SegmentToAudit {
  const commitments = onChain(ctx).slice(0, i + 1);
  return { market: "0x0000000000000000000000000000000000000001", jobId: ctx.run.jobId, segment: i, traceRoot: commitments[i]!.traceRoot, endStateHash: commitments[i]!.stateHashes!.at(-1)!, commitments };
}

describe("checks: one audit pipeline for pouw audit, the bot and the panel", function () {
  this.timeout(300_000);
  const fx = new Fixture();
  before(async () => fx.setup());
  after(async () => fx.teardown());

  it("a chain-only target (commitments with their leaves, no trace.json) gives the trace directory's verdict, claim for claim", async () => {
    for (const strategy of ["honest", "plant:6"]) {
      const { dir } = await fx.trace(strategy);
      const ctx = await openTraceDir(fx.run, dir);
      const chain: AuditTarget = { run: fx.run, store: ctx.store, commitments: onChain(ctx) };
      for (let i = 0; i < 3; i++) {
        const a = await recomputeSegment(ctx, i);
        const b = await recomputeSegment(chain, i);
        expect([b.ok, b.failure?.kind, b.firstBadStep, b.proof], `${strategy} segment ${i}`).to.deep.equal([a.ok, a.failure?.kind, a.firstBadStep, a.proof]);
        // the bot's check is the same function over the same commitments
        const v = await auditChainSegment({ run: fx.run, store: ctx.store }, botTarget(ctx, i));
        expect([v.ok, v.failure?.kind, v.firstBadStep, v.proof], `bot, ${strategy} segment ${i}`).to.deep.equal([a.ok, a.failure?.kind, a.firstBadStep, a.proof]);
        if (a.ok) expect(v.losses.map((l) => l.step)).to.deep.equal([i * 4 + 1, i * 4 + 2, i * 4 + 3, i * 4 + 4]);
      }
    }
  });

  it("every claim the pipeline makes, the panel's decision upholds (Fault); an honest step it judges Valid", async () => {
    const { dir } = await fx.trace("plant:6");
    const ctx = await openTraceDir(fx.run, dir);
    const bad = await recomputeSegment(ctx, 1);
    expect(bad.proof?.step).to.equal(6);
    const p = bad.proof!;
    expect((await decideStep({ target: ctx, segment: 1, step: 6, hPrev: p.prevStateHash, hStep: p.stateHash })).vote).to.equal("Fault");
    // the step before the plant is honest: Valid, from the chain's commitments alone as from the trace directory
    const chain: AuditTarget = { run: fx.run, store: ctx.store, commitments: onChain(ctx) };
    const leaves = onChain(ctx)[1]!.stateHashes!;
    for (const target of [ctx, chain]) expect((await decideStep({ target, segment: 1, step: 5, hPrev: leaves[0]!, hStep: leaves[1]! })).vote).to.equal("Valid");

    // a withheld start checkpoint: the pipeline claims the segment's first step, and the panel votes Fault on it
    const copy = await fx.copy("honest", "withheld");
    const withheld = await openTraceDir(fx.run, copy);
    await rm(join(copy, "store", withheld.trace.segments[2]!.checkpointCid));
    const r = await recomputeSegment(withheld, 2);
    expect([r.failure?.kind, r.proof?.step]).to.deep.equal(["checkpoint-missing", 9]);
    const d = await decideStep({ target: withheld, segment: 2, step: 9, hPrev: r.proof!.prevStateHash, hStep: r.proof!.stateHash });
    expect(d.vote).to.equal("Fault");
    expect(d.reason).to.match(/checkpoint-missing/);
    // the bot's screen of that segment points at the segment itself (its checkpoint is the fault, not the state before)
    const s = await screenStart({ run: fx.run, store: withheld.store }, botTarget(withheld, 2), null);
    expect(s.ok).to.equal(false);
    if (!s.ok) expect([s.kind, s.at]).to.deep.equal(["checkpoint-missing", 2]);
  });

  it("the bot's screen is screenSegment: same verdict on a poisoned state, pointing at the segment that produced it", async () => {
    const { dir } = await fx.trace("state-poison:2");
    const ctx = await openTraceDir(fx.run, dir);
    const a = await screenSegment(ctx, 1, { previous: null });
    const b = await screenStart({ run: fx.run, store: ctx.store }, botTarget(ctx, 1), null);
    expect(a.ok).to.equal(false);
    expect(b.ok).to.equal(false);
    if (!b.ok) expect([b.kind, b.message, b.at]).to.deep.equal([a.failure!.kind, a.failure!.message, 0]);
  });

  it("every failure kind has a claim or a stated reason, and a failed result without a proof carries it", async () => {
    for (const k of FAILURE_KINDS) expect(noClaimReason(k).length, k).to.be.greaterThan(20);
    const copy = await fx.copy("honest", "leaf-lie");
    const ctx = await openTraceDir(fx.run, copy);
    const lie = { ...ctx, trace: { ...ctx.trace, stateHashes: ctx.trace.stateHashes.map((h, i) => (i === 6 ? (`0x${"ab".repeat(32)}` as const) : h)) } };
    const r = await recomputeSegment(lie, 1);
    expect([r.failure?.kind, r.proof, r.noClaim]).to.deep.equal(["trace-leaf-mismatch", null, noClaimReason("trace-leaf-mismatch")]);
  });

  it("refuses a chain-only target without leaves, with a wrong index, or with more segments than the job, as bad input", async () => {
    const { dir } = await fx.trace("honest");
    const ctx = await openTraceDir(fx.run, dir);
    const c = onChain(ctx);
    const cases: [string, readonly SegmentCommitment[] | undefined, RegExp][] = [
      ["none", undefined, /needs the on-chain commitments/],
      ["no leaves", c.map(({ stateHashes: _, ...x }) => x), /carries no state hashes/],
      ["short leaves", [{ ...c[0]!, stateHashes: c[0]!.stateHashes!.slice(1) }], /carries 4 state hashes, expected 5/],
      ["index", [c[1]!], /commitment 0 is for segment 1/],
      ["too many", [...c, { ...c[2]!, index: 3 }], /4 segment commitments for 3 segments/],
    ];
    for (const [label, commitments, message] of cases) {
      const target: AuditTarget = { run: fx.run, store: ctx.store, ...(commitments ? { commitments } : {}) };
      expect(() => checkTarget(target), label).to.throw(AuditInputError, message);
    }
    // a prefix is a valid view (the bot audits segment i when 0..i are committed)
    expect(() => checkTarget({ run: fx.run, store: ctx.store, commitments: c.slice(0, 2) })).to.not.throw();
  });
});
