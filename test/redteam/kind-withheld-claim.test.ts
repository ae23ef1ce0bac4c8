/**
 * Red team regression: withhold-then-publish on an inference job's segment 0, end to end on the in-process network.
 * The provider commits honest leaves but withholds segment 0's states file from the bots; the bot's audit claims the
 * withheld file at example 2 (kinds/job.ts fileDependentExample: example 1 is decided from the fixed initial state) and
 * challenges it; the provider then publishes, and the panel (each member recomputing example 2 by decideExample) finds
 * it Valid. The honest bot's bond must not reach the provider: DisputeSettlement burns a wrong challenge there (as at a
 * segment start, where a training checkpoint is claimed). A griefer's challenge of a correct example that is no file
 * claim (example 3, served) still pays the provider its bond.
 */
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { erc20Abi } from "viem";
import { disputeGameAbi } from "../../verifier/src/chain/index.ts";
import { creditsOf } from "../../verifier/src/dispute/index.ts";
import { evaluateManifestHash, openHarness, parseEvaluateManifest, type Harness } from "../../verifier/src/evaluate/index.ts";
import { fileDependentExample } from "../../verifier/src/kinds/job.ts";
import { auditKindSegment, evaluateJob, KIND_CODES, kindChallengeProof, kindSegments, subjectOf, type EvaluateJob, type ExampleResult } from "../../verifier/src/kinds/index.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, train } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { disputeEnv, type DisputeEnv } from "../dispute/helpers.ts";
import { disputed, postedJob, type KindMarket } from "../kinds/fixture.ts";
import { ROOT, tempDir } from "../ml/helpers.ts";

const K = 50;

describe("red team: a kind job's withheld segment-0 states file, published once challenged", function () {
  this.timeout(600_000);
  let env: DisputeEnv;
  let dir: string;
  let weights: Uint8Array;
  let harness: Harness;
  let honest: ExampleResult[];
  const manifest = parseEvaluateManifest(JSON.parse(readFileSync(join(ROOT, "examples/evaluate-tiny.json"), "utf8")));

  before(async () => {
    env = await disputeEnv();
    dir = await tempDir("redteam-kind-withheld");
    const tiny = parseManifest(JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8")));
    await train(await createRun(tiny, { jobId: 0n, salt: offlineSalt(0n) }), { outDir: join(dir, "tiny"), strategy: parseStrategy("honest"), evaluate: false });
    weights = new Uint8Array(readFileSync(join(dir, "tiny", "final.safetensors")));
    harness = await openHarness(manifest);
    honest = await (await evaluateJob(manifest, weights, { jobId: 0n, examplesPerSegment: K, harness })).results(0, manifest.evalSet.examples);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** An honest evaluate job committed from the provider's own store (the bots read another: nothing is shared yet). */
  async function honestJob(label: string) {
    const providerSide: KindMarket = { env, store: new LocalDirStore(join(dir, `${label}-provider`)), dir };
    const botSide: KindMarket = { env, store: new LocalDirStore(join(dir, `${label}-bots`)), dir };
    const posted = await postedJob(providerSide, {
      manifestHash: evaluateManifestHash(manifest),
      examples: manifest.evalSet.examples,
      K,
      open: (jobId) => evaluateJob(manifest, weights, { jobId, examplesPerSegment: K, harness }),
      forge: (j: EvaluateJob) => kindSegments(j, honest),
      kind: { kind: KIND_CODES.evaluate, modelCidHash: subjectOf(manifest.weightsCid) },
    });
    /** The provider publishes segment s's states file where the bots read. */
    const publish = async (s: number) => {
      await botSide.store.put(await providerSide.store.get(posted.commits[s]!.checkpointCid));
    };
    return { ...posted, botSide, publish };
  }

  const burned = async () => {
    const burn = await env.challenger.public.readContract({ address: env.d.disputeGame, abi: disputeGameAbi, functionName: "BURN_ADDRESS" });
    return env.challenger.public.readContract({ address: env.d.token, abi: erc20Abi, functionName: "balanceOf", args: [burn] });
  };

  it("the bait: the bot's challenge at example 2 ends PanelValid once the file is published, and its bond is burned, not paid to the provider", async () => {
    const { jobId, job, commits, botSide, publish } = await honestJob("bait");
    // the bot's audit without the file: the claim is example 2, a file-dependent example that is not a segment start
    const audit = await auditKindSegment(job, botSide.store, commits[0]!);
    expect(audit.ok, "the withheld file fails the audit").to.equal(false);
    if (audit.ok) return;
    expect(audit.proof.step).to.equal(fileDependentExample(job, 0)).and.to.equal(2);
    const provider0 = (await creditsOf(env.provider, { deployment: env.d })).disputeGame;
    const burn0 = await burned();
    await publish(0); // challenged: the provider publishes, and the panel can recompute example 2
    const r = await disputed(botSide, jobId, job, commits, audit.proof, "bait");
    expect(r.outcome).to.equal("PanelValid");
    expect((await creditsOf(env.provider, { deployment: env.d })).disputeGame - provider0, "the withholding provider gains nothing").to.equal(0n);
    expect((await burned()) - burn0, "the bot's bond is burned").to.equal(r.bond);
  });

  it("a griefer's challenge of a served correct example that is no file claim (example 3) loses its bond to the provider", async () => {
    const { jobId, job, commits, botSide, publish } = await honestJob("griefer");
    await publish(0);
    const provider0 = (await creditsOf(env.provider, { deployment: env.d })).disputeGame;
    const burn0 = await burned();
    const r = await disputed(botSide, jobId, job, commits, kindChallengeProof(job, commits[0]!, 3), "griefer");
    expect(r.outcome).to.equal("PanelValid");
    expect((await creditsOf(env.provider, { deployment: env.d })).disputeGame - provider0).to.equal(r.bond);
    expect(await burned()).to.equal(burn0);
  });
});
