/**
 * A fine-tuning job whose base checkpoint (the buyer's content) gives no usable h(0): a weight NaN or infinite, or bytes
 * that do not decode. The honest trajectory of such a job is the engine's own from that h(0) (deterministic: every
 * leaf matches recomputation) and every state of it is non-finite, so before the fix the pipeline reported
 * `state-non-finite` with a claim at each segment's first step and a panel member voted Fault: an honest provider
 * slashed for the buyer's input. Now every entry point that would hold a failure against the provider (auditSegment,
 * the bot's checks, decideStep) checks h(0) first: BaseCheckpointError (an AuditInputError, `pouw audit` exit 2), and
 * a panel member votes Valid on every step of the job. Segments after the first start from verified non-finite states,
 * which are no fault by themselves (test/checks/diverging.test.ts): their steps recompute clean. A usable base keeps
 * every failure a fault (the control).
 */
import { expect } from "chai";
import { join } from "node:path";
import { keccak256, toHex, type Hex } from "viem";
import { runPouw } from "../cli/in-process.ts";
import {
  assertBaseUsable,
  auditSegment,
  BaseCheckpointError,
  decideStep,
  openTraceDir,
  recomputeSegment,
  screenSegment,
  usableInitialState,
  type AuditTarget,
} from "../../verifier/src/checks/index.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, train, type Run } from "../../verifier/src/ml/index.ts";
import { ContentNotFoundError, LocalDirStore } from "../../verifier/src/store/index.ts";
import { exampleJson } from "../ml/helpers.ts";
import { Fixture, JOB_ID } from "./fixture.ts";
import { writeFile } from "node:fs/promises";

const FT_JOB = JOB_ID + 7n;

describe("checks: a fine-tuning base that gives no usable h(0) is not the provider's fault", function () {
  this.timeout(600_000);
  const fx = new Fixture();
  const tiny = exampleJson("tiny.json");
  const fineTune = (cid: string) => parseManifest({ ...tiny, init: { checkpointCid: cid, optimizerState: "fresh" } });
  const runOf = (cid: string) => createRun(fineTune(cid), { jobId: FT_JOB, salt: offlineSalt(FT_JOB) });

  /** A decodable base of tiny.json's model and optimizer with W1[3] = value (a finite value: a usable base). */
  async function baseWith(value: number, store: LocalDirStore): Promise<string> {
    const s = fx.run.initState();
    s.params[0]![3] = value;
    return store.put(fx.run.checkpointBytes(s));
  }

  /** The honest provider's trace of the fine-tuning job from the base (the rule's trajectory, whatever h(0) holds). */
  async function honestTrace(label: string, value: number, strategy = "honest"): Promise<{ dir: string; run: Run; cid: string }> {
    const dir = join(fx.dir, `bad-base-${label}`);
    const cid = await baseWith(value, new LocalDirStore(join(dir, "store")));
    const run = await runOf(cid);
    await train(run, { outDir: dir, strategy: parseStrategy(strategy), evaluate: false });
    return { dir, run, cid };
  }

  before(async () => fx.setup());
  after(async () => fx.teardown());

  for (const [label, value] of [["NaN", Number.NaN], ["+Infinity", Number.POSITIVE_INFINITY], ["-Infinity", Number.NEGATIVE_INFINITY]] as const) {
    it(`a base weight ${label}: segment 0's audit and every screen throw BaseCheckpointError (non-finite), later recomputes pass, never a fault`, async () => {
      const { dir, run, cid } = await honestTrace(label.replace(/\W/g, ""), value);
      const ctx = await openTraceDir(run, dir);
      // segments 1 and 2 start from verified non-finite states; their steps are the rule's, so they recompute clean
      // (a verified non-finite state is no fault by itself: docs/checks.md "Non-finite states")
      for (const seg of [1, 2]) {
        const r = await auditSegment(ctx, seg, { checks: ["recompute"] });
        expect([r.ok, r.failure?.kind], `segment ${seg} recompute`).to.deep.equal([true, undefined]);
      }
      for (let seg = 0; seg < 3; seg++) {
        for (const checks of seg === 0 ? ([["recompute"], ["screen"]] as const) : ([["screen"]] as const)) {
          const err = await auditSegment(ctx, seg, { checks }).then(() => null, (e: unknown) => e);
          expect(err, `segment ${seg} ${checks[0]}`).to.be.instanceOf(BaseCheckpointError);
          expect((err as BaseCheckpointError).problem).to.equal("non-finite");
          expect((err as BaseCheckpointError).cid).to.equal(cid);
          expect((err as BaseCheckpointError).shortMessage).to.match(/W1\[3\] is (NaN|-?Infinity)/);
        }
      }
      // the screen alone still names the state (the bot's screenStart checks the base on this failure)
      expect((await screenSegment(ctx, 2)).failure?.kind).to.equal("state-non-finite");
      await run.close();
    });
  }

  it("a panel member votes Valid on every step of a NaN-base job, the start claims and a mid-segment step", async () => {
    const { dir, run } = await honestTrace("vote", Number.NaN);
    const ctx = await openTraceDir(run, dir);
    const h = ctx.trace.stateHashes as Hex[];
    for (const [segment, step] of [[0, 1], [0, 3], [1, 5], [2, 9], [2, 12]] as const) {
      const d = await decideStep({ target: ctx, segment, step, hPrev: h[step - 1]!, hStep: h[step]! });
      expect(d.vote, `step ${step}`).to.equal("Valid");
      // segment 0 opens from h(0), the buyer's base; later segments from verified states whose steps reproduce
      expect(d.reason).to.match(segment === 0 ? /^not the provider's fault: the job's base checkpoint .* non-finite h\(0\)/ : new RegExp(`^recomputed h\\(${step}\\) = 0x[0-9a-f]{64} matches the committed leaf`));
    }
    await run.close();
  });

  it("control: a finite base keeps a cheat's failure a fault (stale:2 still fails recompute and is voted Fault)", async () => {
    const { dir, run } = await honestTrace("control", 0.5, "stale:2");
    const ctx = await openTraceDir(run, dir);
    await assertBaseUsable(ctx); // a usable base: returns
    const a = await auditSegment(ctx, 0, { checks: ["recompute"] });
    expect([a.ok, a.failure?.kind, a.firstBadStep]).to.deep.equal([false, "state-divergence", 2]);
    const h = ctx.trace.stateHashes as Hex[];
    expect((await decideStep({ target: ctx, segment: 0, step: 2, hPrev: h[1]!, hStep: h[2]! })).vote).to.equal("Fault");
    await run.close();
  });

  it("a base that does not decode is BaseCheckpointError (invalid) for the audit and a Valid vote; a missing one is the store's own error", async () => {
    const store = new LocalDirStore(join(fx.dir, "bad-base-bytes"));
    const cid = await store.put(new TextEncoder().encode("not a checkpoint"));
    const run = await runOf(cid);
    const leaves = [0, 1, 2, 3, 4].map((t) => keccak256(toHex(`leaf-${t}`)));
    const { SegmentTree } = await import("../../verifier/src/trace/index.ts");
    const tree = new SegmentTree(0, leaves);
    const target: AuditTarget = { run, store, commitments: [{ index: 0, traceRoot: tree.root, checkpointCid: cid, stateHashes: leaves }] };
    const err = await recomputeSegment(target, 0).then(() => null, (e: unknown) => e);
    expect(err).to.be.instanceOf(BaseCheckpointError);
    expect((err as BaseCheckpointError).problem).to.equal("invalid");
    expect((await decideStep({ target, segment: 0, step: 1, hPrev: leaves[0]!, hStep: leaves[1]! })).vote).to.equal("Valid");
    // a base no source serves: the provider's refusal names it, the auditor's paths get the store's error (not a vote)
    const missing = await runOf("bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m");
    const empty = new LocalDirStore(join(fx.dir, "bad-base-empty"));
    const refused = await usableInitialState(missing, empty).then(() => null, (e: unknown) => e);
    expect((refused as BaseCheckpointError).problem).to.equal("missing");
    const t2: AuditTarget = { ...target, run: missing, store: empty };
    expect(await assertBaseUsable(t2).then(() => null, (e: unknown) => e)).to.be.instanceOf(ContentNotFoundError);
    await Promise.all([run.close(), missing.close()]);
  });

  it("pouw audit of a NaN-base trace exits 2 naming the base (not 1 with a fault)", async () => {
    const { dir, run, cid } = await honestTrace("cli", Number.NaN);
    const mpath = join(fx.dir, "bad-base-cli.json");
    await writeFile(mpath, JSON.stringify({ ...tiny, init: { checkpointCid: cid, optimizerState: "fresh" } }));
    const r = await runPouw(["audit", "--manifest", mpath, "--trace", dir, "--job-id", FT_JOB.toString()]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain(cid).and.contain("non-finite h(0)");
    await run.close();
  });
});
