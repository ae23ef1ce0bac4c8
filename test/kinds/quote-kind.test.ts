/**
 * The quote of an inference job (market/quote-kind.ts): per-example compute, the audit rate per example for a target
 * detection of one changed or skipped example, and the stake, against hand-computed values; `pouw quote --manifest` of an
 * evaluate or generate manifest prints it, and refuses the training quote's flags by name.
 */
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseEther } from "viem";
import { kindManifestOf, kindPolicy } from "../../verifier/src/kinds/market.ts";
import { quoteKindJob } from "../../verifier/src/market/quote-kind.ts";
import { runPouw } from "../helpers/cli.ts";
import { ROOT, tempDir, tinyTransformerJson } from "../ml/helpers.ts";
import { MANIFEST_CID } from "./fixture.ts";

const evaluateTiny = JSON.parse(readFileSync(join(ROOT, "examples/evaluate-tiny.json"), "utf8"));
// mnist-mlp 784-16-10: a forward pass of one example is 2 x (784 x 16 + 16 x 10) = 25,408 FLOPs
const C_EVAL = 25_408 * 0.01 * 1e-12; // tokens per example at 0.01 tokens per TFLOP

function generateTiny(tokens: number) {
  const t = tinyTransformerJson();
  return {
    version: 1,
    kind: "pouw/generate-job",
    model: t.model,
    weightsCid: MANIFEST_CID,
    corpus: (t.corpora as object[])[0],
    data: t.data,
    prompts: { split: "test", examples: 8, promptChars: 8, contentId: MANIFEST_CID },
    sampling: { tokens, temperatureMilli: 800, topK: 20, seed: 11 },
    harness: { engine: "pouw-engine-1", backend: "cpu", numerics: "bitwise", batch: 16 },
  };
}

// amounts are rounded up to a whole wei
const near = (got: bigint, tokens: number) => expect(Number(got)).to.be.closeTo(tokens * 1e18, Math.max(2, tokens * 1e18 * 1e-9));

describe("kinds: the quote of evaluate and generate jobs", () => {
  it("evaluate: one forward pass an example; the stake is (1 + m) x the skipped compute when the forfeit deters every smaller cheat", () => {
    const q = quoteKindJob(kindManifestOf(evaluateTiny)!, { paymentWei: parseEther("1") });
    expect(q).to.deep.include({ kind: "evaluate", examples: 200, forwardPassesPerExample: 1, tokensPerExample: null, flopsPerForwardPass: 25_408, auditRate: 0.5, expectedAuditedExamples: 100, bindingExamples: 200 });
    near(q.computeWeiPerExample, C_EVAL);
    near(q.jobComputeWei, 200 * C_EVAL);
    near(q.auditComputeWei, 100 * C_EVAL);
    near(q.stakeWei, 1.25 * 200 * C_EVAL);
  });

  it("without a forfeit, a cheat of k examples at rate p sets the stake to (1 + m) k c / (1 - (1 - p)^k) / (1 - lam), worst at k = N", () => {
    const q = quoteKindJob(kindManifestOf(evaluateTiny)!, { paymentWei: parseEther("1"), forfeitShare: 0, detection: 0.1 });
    // 2.5 k c / Q(k) grows with k (Q(k) / k falls), so k = 200: 2.5 x 200 c / (1 - 0.9^200)
    expect(q.bindingExamples).to.equal(200);
    near(q.stakeWei, (2.5 * 200 * C_EVAL) / (1 - 0.9 ** 200));
    expect(q.auditRate).to.equal(0.1);
  });

  it("the deployment's panel fees set a floor: the challenger's share of a slash pays the panel, with the margin", () => {
    const q = quoteKindJob(kindManifestOf(evaluateTiny)!, { paymentWei: parseEther("1"), panel: { size: 3, feeWei: parseEther("0.05") } });
    expect(q.bindingExamples).to.equal(0);
    near(q.stakeWei, (1.25 * 0.15) / 0.5);
  });

  it("generate: sampling.tokens forward passes an example, each over the context; bad inputs are named", () => {
    const q = quoteKindJob(kindManifestOf(generateTiny(12))!, { paymentWei: parseEther("2") });
    // char-transformer L=1 d=16 F=64 T=16 V=96: 2 x T x (L (4d^2 + 2dF + 2Td) + dV) = 2 x 16 x 5120
    expect(q).to.deep.include({ kind: "generate", examples: 8, forwardPassesPerExample: 12, tokensPerExample: 12, flopsPerForwardPass: 163_840 });
    near(q.computeWeiPerExample, 12 * 163_840 * 0.01 * 1e-12);
    expect(() => quoteKindJob(kindManifestOf(generateTiny(12))!, { paymentWei: 1n, detection: 0 })).to.throw(/--example-detection must be a probability in \(0, 1\], got 0/);
  });

  it("buyer create's policy takes the quoted stake unless --stake overrides it", () => {
    const km = kindManifestOf(evaluateTiny)!;
    const panel = { size: 3, feeWei: parseEther("0.05") };
    const quoted = kindPolicy(km, { payment: parseEther("1"), panel });
    expect(quoted.policy.requiredStake).to.equal(quoteKindJob(km, { paymentWei: parseEther("1"), panel }).stakeWei);
    expect(quoted.quote?.auditRate).to.equal(0.5);
    const given = kindPolicy(km, { payment: parseEther("1"), panel, overrides: { requiredStake: 7n } });
    expect([given.policy.requiredStake, given.quote]).to.deep.equal([7n, undefined]);
  });

  describe("pouw quote --manifest", function () {
    this.timeout(120_000);
    let dir: string;
    before(async () => {
      dir = await tempDir("quote-kind");
      await writeFile(join(dir, "generate.json"), JSON.stringify(generateTiny(12)));
    });
    after(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("prices a generate manifest per example, and --json has the exact wei", async () => {
      const r = await runPouw(["quote", "--manifest", join(dir, "generate.json"), "--pay", "2", "--example-detection", "0.25"]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^kind {16}generate: 8 examples, one example a step$/m);
      expect(r.stdout).to.match(/^forward passes {6}12 per example, 12 tokens per example, 163800 FLOPs each$/m);
      expect(r.stdout).to.match(/^audit rate p {8}0\.25 per example: one auditor recomputes each example with this probability, so a single changed or skipped example is caught with 0\.25 \(about 2 examples/m);
      const j = await runPouw(["quote", "--manifest", join(dir, "generate.json"), "--pay", "2", "--json"]);
      const q = JSON.parse(j.stdout) as { stakeWei: string; auditRate: number };
      expect(q.auditRate).to.equal(0.5);
      expect(BigInt(q.stakeWei)).to.equal(quoteKindJob(kindManifestOf(generateTiny(12))!, { paymentWei: parseEther("2") }).stakeWei);
    });

    it("refuses the training quote's flags and a missing payment, naming them", async () => {
      const det = await runPouw(["quote", "--manifest", join(dir, "generate.json"), "--pay", "2", "--detection", "x.json"]);
      expect(det.code).to.equal(2);
      expect(det.stderr).to.match(/--detection does not apply to a generate manifest: it is quoted per example \(--example-detection\)/);
      const noPay = await runPouw(["quote", "--manifest", join(dir, "generate.json")]);
      expect(noPay.code).to.equal(2);
      expect(noPay.stderr).to.match(/a generate manifest states no payment: pass --pay <amount>/);
      const bad = await runPouw(["quote", "--manifest", join(dir, "generate.json"), "--pay", "2", "--example-detection", "1.5"]);
      expect(bad.stderr).to.match(/--example-detection must be a probability in \(0, 1\], got "1\.5"/);
      const train = await runPouw(["quote", "--manifest", join(ROOT, "examples/tiny.json"), "--example-detection", "0.5"]);
      expect(train.stderr).to.match(/--example-detection applies to evaluate and generate manifests/);
    });
  });
});
