/**
 * jobPolicyFor: the stake a buyer's job asks for. With a detection matrix (what `pouw buyer create` uses
 * by default: the package's committed bench/results/detection.json) it is quotePolicy's stake, sized for
 * the audit rate the auditors actually sample at (the manifest's), with the contract's challenger share
 * and the forfeit net of the data share; without one the manifest's; a --stake flag overrides both.
 */
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { DEFAULT_SHARES, jobPolicyFor, JobPolicyError, type DetectionSource } from "../../verifier/src/market/job-policy.ts";
import { parseManifest, type Manifest } from "../../verifier/src/ml/index.ts";
import { catchProbability, DEFAULT_DETECTION_PATH, DEFAULT_QUOTE_OPTIONS, loadDetectionMatrix, packageDetectionPath, quotePolicy } from "../../verifier/src/policy/index.ts";
import { DEFAULT_DISPUTE_PARAMS } from "../../verifier/src/chain/deployDisputeGame.ts";

const tiny = JSON.parse(readFileSync("examples/tiny.json", "utf8")) as Record<string, unknown> & { policy: Record<string, unknown> };
const manifestWith = (policy: Record<string, unknown>): Manifest => parseManifest({ ...tiny, policy: { ...tiny.policy, ...policy } });

describe("market: jobPolicyFor (stake from the quote, the manifest or a flag)", function () {
  this.timeout(60_000);
  const detection: DetectionSource = { path: packageDetectionPath(), matrix: loadDetectionMatrix(packageDetectionPath()) };
  const payment = 10n ** 18n;
  const job = { paymentWei: payment, steps: 12, stepsPerSegment: 4 };

  it("finds the committed matrix under the package root, whatever the working directory", () => {
    expect(packageDetectionPath()).to.equal(`${process.cwd()}/${DEFAULT_DETECTION_PATH}`);
  });

  it("without a matrix takes the manifest's stake", async () => {
    const d = await jobPolicyFor(manifestWith({}), { payment });
    expect(d.stakeFrom).to.equal("manifest");
    expect(d.policy.requiredStake).to.equal(10n ** 18n);
    expect(d.quote).to.equal(undefined);
  });

  it("with a matrix takes the cheapest contract's stake when the manifest audits at least as often", async () => {
    const m = manifestWith({ auditRate: 0.5 });
    const d = await jobPolicyFor(m, { payment, detection });
    const q = await quotePolicy(job, detection.matrix);
    expect(q.auditRate).to.be.below(0.5);
    expect(d.stakeFrom).to.equal("quote");
    expect(d.policy.requiredStake).to.equal(BigInt(q.stakeWei));
    expect(d.policy.requiredStake).to.not.equal(BigInt(m.policy.providerStakeWei));
    expect(d.quote).to.deep.include({ cheapestAuditRate: q.auditRate, manifestAuditRate: 0.5, sizedForAuditRate: q.auditRate, stakeWei: q.stakeWei, bindingStake: q.bindingStake, detection: detection.path });
    expect(d.quote!.checks).to.deep.equal(q.checks);
    const by = q.bindingStake === "challenger" ? "the honest challenger's reward" : `deterring ${q.bindingStake}`;
    expect(d.quote!.reason).to.match(new RegExp(`cheapest contract audits at .*stake set by ${by}`));
  });

  it("sizes the stake for the manifest's audit rate when it is below the cheapest rate, and that stake deters there", async () => {
    const pm = 0.01;
    const d = await jobPolicyFor(manifestWith({ auditRate: pm }), { payment, detection });
    const cheapest = await quotePolicy(job, detection.matrix);
    expect(pm).to.be.below(cheapest.auditRate);
    expect(d.quote!.sizedForAuditRate).to.equal(pm);
    expect(d.quote!.cheapestAuditRate).to.equal(cheapest.auditRate);
    expect(d.policy.requiredStake > BigInt(cheapest.stakeWei)).to.equal(true);
    expect(d.quote!.reason).to.match(/the manifest audits at 0\.01, below the cheapest contract's rate/);
    // every measured cheat on every segment is deterred at the manifest's rate with the chosen checks
    const S = Number(d.policy.requiredStake);
    for (const s of detection.matrix.strategies) {
      const D = Math.max(...d.quote!.checks.map((c) => s.detection[c]!));
      expect((S + Number(payment)) * catchProbability(pm * D, 3), s.name).to.be.at.least(s.computeSaving * Number(payment) * (1 - 1e-9));
    }
  });

  it("quotes with the contract's challenger share and forfeits only the provider's pay under a data share", async () => {
    const m = manifestWith({ auditRate: 0.5 });
    // the deployed panel (3 members), as buyer create quotes: a measured cheat, not the challenger, sets the stake
    const panel = { size: DEFAULT_DISPUTE_PARAMS.panelSize, feeWei: DEFAULT_DISPUTE_PARAMS.panelFee };
    const plain = await jobPolicyFor(m, { payment, detection, panel });
    const shared = await jobPolicyFor(m, { payment, detection, dataShareBps: 1_000, panel });
    expect(plain.quote!.bindingStake).to.not.equal("challenger");
    expect(plain.quote!.forfeitShare).to.equal(1);
    expect(shared.quote!.forfeitShare).to.equal(0.9);
    expect(shared.policy.requiredStake > plain.policy.requiredStake).to.equal(true);
    const lam = await jobPolicyFor(m, { payment, detection, overrides: { challengerBps: 3_000, buyerBps: 5_000 } });
    expect(lam.quote!.quote.options.lam).to.equal(0.3);
  });

  it("prices the buyer's integrity value and margin (buyer create --integrity-value, --margin), and refuses them without a quote", async () => {
    const m = manifestWith({ auditRate: 0.25 });
    const plain = await jobPolicyFor(m, { payment, detection });
    const valued = await jobPolicyFor(m, { payment, detection, terms: { integrityValue: 0.5, margin: 0.5 } });
    // the same quote run directly with the same terms: the stake the buyer posts is the stake quotePolicy sizes
    const q = await quotePolicy(job, detection.matrix, { lam: DEFAULT_SHARES.challengerBps / 10_000, forfeitShare: 1, auditRate: valued.quote!.sizedForAuditRate, integrityValue: 0.5, margin: 0.5 });
    expect(valued.policy.requiredStake).to.equal(BigInt(q.stakeWei));
    expect(valued.policy.requiredStake > plain.policy.requiredStake, "a valued model asks a larger stake").to.equal(true);
    expect(valued.quote!.quote.margin).to.equal(0.5);
    expect(valued.quote!.quote.integrityValueWei).to.equal((5n * 10n ** 17n).toString());
    for (const s of valued.quote!.quote.strategies) if (s.marginRatio !== null) expect(s.marginRatio).to.be.at.least(0.5 - 1e-9);
    for (const p of [jobPolicyFor(m, { payment, terms: { integrityValue: 1 } }), jobPolicyFor(m, { payment, detection, terms: { margin: 1 }, overrides: { requiredStake: 7n } })]) {
      const err = await p.then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(JobPolicyError);
      expect((err as Error).message).to.match(/contradict --stake and --no-quote/);
    }
  });

  it("a --stake override wins and runs no quote", async () => {
    const d = await jobPolicyFor(manifestWith({}), { payment, detection, overrides: { requiredStake: 7n } });
    expect(d).to.deep.include({ stakeFrom: "flag" });
    expect(d.policy.requiredStake).to.equal(7n);
    expect(d.quote).to.equal(undefined);
  });

  it("rejects a challenger share of 0 for a quote, a bad data share and slash shares not summing to 10000", async () => {
    const m = manifestWith({});
    const rejects = async (p: Promise<unknown>, re: RegExp) => {
      let err: unknown;
      try {
        await p;
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(JobPolicyError);
      expect((err as Error).message).to.match(re);
    };
    await rejects(jobPolicyFor(m, { payment, detection, overrides: { challengerBps: 0, buyerBps: 8_000 } }), /pays challengers nothing.*--stake or --no-quote/);
    await rejects(jobPolicyFor(m, { payment, dataShareBps: 10_001 }), /data share must be 0\.\.10000 bps/);
    await rejects(jobPolicyFor(m, { payment, overrides: { burnBps: 0 } }), /must sum to 10000 bps/);
  });

  it("models the deployed panel: its size and the fee an honest challenger pays each member", async () => {
    const m = manifestWith({ auditRate: 0.5 });
    const deployed = { size: DEFAULT_DISPUTE_PARAMS.panelSize, feeWei: DEFAULT_DISPUTE_PARAMS.panelFee };
    const base = await jobPolicyFor(m, { payment, detection, panel: deployed });
    expect(base.quote!.quote.panelSize).to.equal(3);
    expect(base.quote!.quote.panelError).to.be.closeTo(0.028, 1e-12); // P(Bin(3, 0.1) >= 2)
    expect(base.quote!.quote.options.panelFee).to.equal(0.05);
    expect(DEFAULT_QUOTE_OPTIONS.panelFee).to.equal(0); // pouw quote prices no fee unless --panel-fee is given
    // a panel fee of 3 tokens per member on a 1-token job: an honest challenger must expect 3*3 tokens more from the slash
    const dear = await jobPolicyFor(m, { payment, detection, panel: { size: 3, feeWei: 3n * 10n ** 18n } });
    expect(dear.policy.requiredStake > base.policy.requiredStake).to.equal(true);
    const e = dear.quote!.quote.panelError, lam = dear.quote!.quote.options.lam;
    // (1-eps)*lam*S - eps*B >= kc + n*f: the stake alone must exceed n*f/((1-eps)*lam)
    expect(Number(dear.policy.requiredStake) / 1e18).to.be.at.least((3 * 3) / ((1 - e) * lam));
    let err: unknown;
    await jobPolicyFor(m, { payment, detection, panel: { size: 2, feeWei: 1n } }).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(JobPolicyError);
    expect((err as Error).message).to.match(/panel size must be odd/);
  });
});
