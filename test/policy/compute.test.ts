/**
 * The job's compute in the quote (policy/compute.ts): FLOPs from the manifest, checked against each model class's own
 * flopsPerStep and a hand-computed case; C = max(FLOPs x price, computeCostShare x payment); a bigger model at the same
 * payment needs a bigger stake, by the ratio the deterrence bound says; an old manifest's quote is unchanged at the
 * default price; `buyer create`'s plan (market/job-policy.ts) sizes the same C.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jobPolicyFor, type DetectionSource } from "../../verifier/src/market/job-policy.ts";
import { jobCompute, UnderpricedPaymentError } from "../../verifier/src/market/plan-job.ts";
import { parseManifest, type Manifest } from "../../verifier/src/ml/index.ts";
import { MnistMlp } from "../../verifier/src/ml/models/mlp.ts";
import { CharTransformer } from "../../verifier/src/ml/models/transformer.ts";
import { LinearTile } from "../../verifier/src/ml/models/linear-tile.ts";
import {
  computeCostOf,
  computeWorthWei,
  DEFAULT_COMPUTE_PRICE,
  flopsPerStepOf,
  jobFlopsOf,
  loadDetectionMatrix,
  packageDetectionPath,
  PolicyParamError,
  quoteJobOf,
  quotePolicy,
  readQuoteJob,
} from "../../verifier/src/policy/index.ts";
import { runPouw } from "../cli/in-process.ts";

const tiny = JSON.parse(readFileSync("examples/tiny.json", "utf8")) as Record<string, unknown> & { model: Record<string, unknown> };
const withHidden = (hidden: number): Manifest => parseManifest({ ...tiny, model: { ...tiny.model, hidden } });

describe("policy: the job's compute (FLOPs x price) sizes the quote", function () {
  this.timeout(120_000);
  const detection: DetectionSource = { path: packageDetectionPath(), matrix: loadDetectionMatrix(packageDetectionPath()) };

  it("FLOPs per step equal each model class's own flopsPerStep", () => {
    expect(flopsPerStepOf({ arch: "mnist-mlp", hidden: 16 }, 8)).to.equal(new MnistMlp(16).flopsPerStep(8));
    expect(flopsPerStepOf({ arch: "mnist-mlp", hidden: 128 }, 128)).to.equal(new MnistMlp(128).flopsPerStep(128));
    const tab = { arch: "tabular-mlp" as const, hidden: 32, inputs: 12, classes: 3 };
    expect(flopsPerStepOf(tab, 16)).to.equal(new MnistMlp(32, undefined, { arch: "tabular-mlp", inputs: 12, classes: 3 }).flopsPerStep(16));
    const shape = { layers: 2, dModel: 64, heads: 2, context: 64, ffHidden: 256 };
    expect(flopsPerStepOf({ arch: "char-transformer", ...shape }, 4)).to.equal(new CharTransformer(shape).flopsPerStep(4));
    expect(flopsPerStepOf({ arch: "char-transformer", layers: 2, dModel: 64, heads: 2, context: 64 }, 4)).to.equal(new CharTransformer(shape).flopsPerStep(4));
    const tile = { arch: "linear-tile" as const, inputs: 8 as const, outputs: 4 as const, batch: 8 as const, fracBits: 16 as const, valueBits: 32 as const, features: "mnist-blocks-4x2" as const };
    expect(flopsPerStepOf(tile, 8)).to.equal(new LinearTile(1n, () => 0n).flopsPerStep(8));
  });

  it("examples/tiny.json is 12 steps x 6 x 8 x (784*16 + 16*10) = 7,317,504 FLOPs (hand-computed)", () => {
    expect(jobFlopsOf(withHidden(16))).to.equal(7_317_504);
    expect(readQuoteJob("examples/tiny.json").flops).to.equal(7_317_504);
    expect(jobFlopsOf(withHidden(256))).to.equal(12 * 6 * 8 * (784 * 256 + 256 * 10));
  });

  it("hidden 256 needs a larger stake than hidden 16, by the ratio of the deterrence bound ((1 + m) * gain / Q - F) / (1 - lam)", async () => {
    // a price at which both jobs' compute is worth more than their payment, so C = FLOPs x price for both
    const o = { computePrice: 1e5, auditRate: 0.3 };
    const q16 = await quotePolicy(quoteJobOf(withHidden(16)), detection.matrix, o);
    const q256 = await quotePolicy(quoteJobOf(withHidden(256)), detection.matrix, o);
    expect(q16.compute.from).to.equal("flops");
    expect(q256.compute.from).to.equal("flops");
    const flopsRatio = jobFlopsOf(withHidden(256)) / jobFlopsOf(withHidden(16));
    expect(Number(q256.compute.costWei) / Number(q16.compute.costWei)).to.be.closeTo(flopsRatio, 1e-9);
    expect(Number(q16.compute.costWei)).to.be.closeTo(computeCostOf(7_317_504, 1e5) * 1e18, 1e3);
    // every class's gain scales with C: a cheater skips a share of a 16x larger compute
    for (const [i, s] of q16.strategies.entries()) {
      if (s.marginRatio === null) continue;
      expect(Number(q256.strategies[i]!.gainWei) / Number(s.gainWei), s.name).to.be.closeTo(flopsRatio, 1e-6);
    }
    // the stake is the largest deterrence bound over the classes (the challenger's needs much less here)
    const bound = (q: typeof q16) => {
      const F = q.options.forfeitShare * Number(quoteJobOf(withHidden(16)).paymentWei);
      return Math.max(...q.strategies.filter((s) => s.marginRatio !== null).map((s) => ((1 + q.margin) * Number(s.gainWei) / s.Q - F) / (1 - q.options.lam)));
    };
    expect(Number(q16.stakeWei) / bound(q16)).to.be.closeTo(1, 1e-6);
    expect(Number(q256.stakeWei) / bound(q256)).to.be.closeTo(1, 1e-6);
    expect(Number(q256.stakeWei)).to.be.greaterThan(10 * Number(q16.stakeWei));
    expect(Number(q256.stakeWei) / Number(q16.stakeWei)).to.be.closeTo(bound(q256) / bound(q16), 1e-6);
  });

  it("at the default price the examples' compute is worth less than their payment: the payment floor sets C and the quote is the one without FLOPs", async () => {
    const job = readQuoteJob("examples/tiny.json");
    const q = await quotePolicy(job, detection.matrix);
    expect(q.options.computePrice).to.equal(DEFAULT_COMPUTE_PRICE);
    expect(q.compute.from).to.equal("payment");
    expect(q.compute.costWei).to.equal(job.paymentWei.toString());
    const { flops: _, ...withoutFlops } = job;
    const old = await quotePolicy(withoutFlops, detection.matrix);
    expect(old.compute.flops).to.equal(null);
    expect(q.stakeWei).to.equal(old.stakeWei);
    expect(q.auditRate).to.equal(old.auditRate);
    expect(q.cost.totalWei).to.equal(old.cost.totalWei);
  });

  it("buyer create's plan sizes the same C: its stake is quotePolicy's over quoteJobOf", async () => {
    const m = withHidden(256);
    const d = await jobPolicyFor(m, { detection, terms: { computePrice: 1e5 } });
    expect(d.quote!.quote.compute.from).to.equal("flops");
    const q = await quotePolicy(quoteJobOf(m), detection.matrix, { computePrice: 1e5, lam: 0.5, forfeitShare: 1, auditRate: d.quote!.sizedForAuditRate });
    expect(d.policy.requiredStake).to.equal(BigInt(q.stakeWei));
    const low = await jobPolicyFor(withHidden(16), { detection, terms: { computePrice: 1e5 } });
    expect(d.policy.requiredStake > 10n * low.policy.requiredStake).to.equal(true);
  });

  it("refuses a negative compute price and a job with non-positive FLOPs, each with its value", async () => {
    let err: unknown;
    try { await quotePolicy(readQuoteJob("examples/tiny.json"), detection.matrix, { computePrice: -1 }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(PolicyParamError);
    expect((err as Error).message).to.match(/computePrice.*-1/);
    err = undefined;
    try { await quotePolicy({ paymentWei: 10n ** 17n, steps: 12, stepsPerSegment: 4, flops: 0 }, detection.matrix); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(PolicyParamError);
    expect((err as Error).message).to.match(/flops.*0/);
  });

  it("pouw quote says C in one sentence, takes --compute-price, keeps --json exact, and exits 2 on a bad price", async () => {
    const r = await runPouw(["quote", "--manifest", "examples/tiny.json"]);
    expect(r.code, r.stderr).to.equal(0);
    const line = r.stdout.split("\n").find((l) => l.startsWith("compute C"));
    expect(line).to.equal("compute C           0.1 tokens: what the honest training is worth, the larger of its 7318000 FLOPs at 0.01 tokens per TFLOP (7.318e-8 tokens) and 1 x the payment (0.1 tokens); a cheater gains the part it skips");
    const j = await runPouw(["quote", "--manifest", "examples/tiny.json", "--compute-price", "100000", "--json"]);
    expect(j.code, j.stderr).to.equal(0);
    const q = JSON.parse(j.stdout);
    // 7,317,504 FLOPs x 10^5 tokens per 10^12 FLOPs = 0.7317504 tokens, exact in wei
    expect(q.compute).to.deep.equal({ flops: 7_317_504, pricePerTflop: 100000, atPriceWei: "731750400000000000", paymentFloorWei: "100000000000000000", costWei: "731750400000000000", from: "flops" });
    const bad = await runPouw(["quote", "--manifest", "examples/tiny.json", "--compute-price", "-0.5"]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr.trim().split("\n")).to.have.length(1);
    expect(bad.stderr).to.match(/computePrice.*-0\.5/);
  });
});

describe("policy: a stake that follows the job's compute, and no underpriced payment by default", function () {
  this.timeout(120_000);
  const write = (hidden: number) => {
    const path = join(mkdtempSync(join(tmpdir(), "pouw-compute-")), `tiny-${hidden}.json`);
    writeFileSync(path, JSON.stringify({ ...tiny, model: { ...tiny.model, hidden } }));
    return path;
  };
  const quoteJson = async (args: string[]) => {
    const r = await runPouw(["quote", ...args, "--json"]);
    expect(r.code, r.stderr).to.equal(0);
    return JSON.parse(r.stdout) as { stakeWei: string; compute: { costWei: string; atPriceWei: string; from: string } };
  };

  it("at the default price, paid at its compute's worth (--pay compute), hidden 256 gets a larger stake than hidden 16, by the FLOPs ratio", async () => {
    const [p16, p256] = [write(16), write(256)];
    const [q16, q256] = [await quoteJson(["--manifest", p16, "--pay", "compute"]), await quoteJson(["--manifest", p256, "--pay", "compute"])];
    const flopsRatio = jobFlopsOf(withHidden(256)) / jobFlopsOf(withHidden(16));
    expect(q16.compute.costWei).to.equal(computeWorthWei(jobFlopsOf(withHidden(16)), DEFAULT_COMPUTE_PRICE).toString());
    expect(q256.stakeWei).to.not.equal(q16.stakeWei);
    // every amount of the contract is proportional to C when the payment is C: the stake scales with the FLOPs
    expect(Number(q256.stakeWei) / Number(q16.stakeWei)).to.be.closeTo(flopsRatio, 1e-3);
    const text = await runPouw(["quote", "--manifest", p256, "--pay", "compute"]);
    expect(text.stdout).to.include(
      "stake follows       the compute: C is 117100000 FLOPs at 0.01 tokens per TFLOP (0.000001171 tokens), so a larger model (more FLOPs per step) or more steps needs a larger stake",
    );
  });

  it("at the manifest's payment the quote says why the model's size does not change the stake", async () => {
    const [d16, d256] = [await quoteJson(["--manifest", write(16)]), await quoteJson(["--manifest", write(256)])];
    expect(d16.stakeWei).to.equal(d256.stakeWei);
    const r = await runPouw(["quote", "--manifest", write(256)]);
    expect(r.stdout.split("\n")).to.include(
      "stake follows       the payment: it is 85410 x what the compute is worth (117100000 FLOPs at 0.01 tokens per TFLOP, 0.000001171 tokens), so C is the payment and the model's size does not change the stake until its compute is worth more than the payment; --pay compute quotes the job at its compute's worth",
    );
    const low = await runPouw(["quote", "--manifest", write(256), "--pay", "0.0000001"]);
    expect(low.stdout).to.match(/^WARNING +the payment 1e-7 tokens is below what the compute is worth \(0\.000001171 tokens\)/m);
  });

  it("buyer create's plan refuses a payment below the compute's worth, naming both, unless allowed; --pay compute pays exactly it", () => {
    const m = withHidden(256);
    const worth = computeWorthWei(jobFlopsOf(m), DEFAULT_COMPUTE_PRICE);
    expect(worth).to.equal(1_170_800_640_000n); // 117,080,064 FLOPs x 0.01 tokens per 10^12 FLOPs, in wei
    let err: unknown;
    try {
      jobCompute(m, { payment: worth - 1n });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UnderpricedPaymentError);
    expect((err as Error).message).to.include(`(${worth - 1n} wei) is below what the job's compute is worth: 117100000 FLOPs at 0.01 tokens per TFLOP = 0.000001171 tokens (${worth} wei)`);
    expect(jobCompute(m, { payment: worth - 1n, allowUnderpriced: true })).to.deep.equal({ payment: worth - 1n, compute: { flops: jobFlopsOf(m), pricePerTflop: 0.01, worthWei: worth, underpriced: true } });
    expect(jobCompute(m, { payment: "compute" }).payment).to.equal(worth);
    expect(jobCompute(m, {}).compute.underpriced).to.equal(false); // the manifest's 0.1 tokens
  });
});
