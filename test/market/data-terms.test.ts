/**
 * Data terms on the in-process network (real JobMarket + DataRegistry): a contributor registers the
 * manifest's corpus (registerManifestCorpora, idempotent); dataTermsFor attaches the corpus with its
 * declared tokens, the manifest's min tier and the data share only when every corpus is registered and
 * unretired; postJob creates the job with createJobWithTerms, and finalize splits the payment between
 * the corpus's payout address, the provider and the buyer to the wei. Unregistered, retired, mismatched
 * and registry-less cases come back as a reason (auto) or a DataTermsError (require / contradiction).
 *
 * Attack 9 (corpus squatting, docs/governance.md): a squatter who registers the corpus's digest first under its
 * own payout, and one who copies the contributor's registration out of the mempool and gets it mined first, do
 * not receive the data share of a job whose buyer follows the documented path (dataTermsFor: the registration
 * listed under the manifest's payoutAddress); the contributor's payout is credited to the wei.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { encodeFunctionData, formatEther, getAddress, keccak256, maxUint256, parseEther, parseEventLogs, toHex, type Address } from "viem";
import {
  acceptJob,
  approveToken,
  commitSegment,
  dataRegistryAbi,
  deployMarket,
  devAccount,
  finalize,
  jobMarketAbi,
  mintTestToken,
  providerClients,
  sendContractTx,
  signTx,
  stakeDeposit,
  type ChainClients,
} from "../../verifier/src/chain/index.ts";
import { contentDigestOf } from "../../verifier/src/provenance/chain.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { segmentHashes } from "../contracts/fixture.ts";
import { registerManifestCorpora } from "../../verifier/src/market/contributor.ts";
import { dataTermsFor, DataTermsError, DEFAULT_DATA_SHARE_BPS } from "../../verifier/src/market/data-terms.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { parseManifest, type Manifest } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { acceptProviderJob } from "../../verifier/src/market/provider-jobs.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { DEFAULT_MAX_DATA_SHARE_BPS } from "../../verifier/src/market/data-share.ts";
import { InputError } from "../../verifier/src/errors/index.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));
const manifest = parseManifest(tiny);
const payout = getAddress(manifest.corpora[0]!.payoutAddress);
const withCorpus = (patch: Record<string, unknown>): Manifest => parseManifest({ ...tiny, corpora: [{ ...tiny.corpora[0], ...patch }] });

async function rejects(p: Promise<unknown>, re: RegExp): Promise<void> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err, "expected a DataTermsError").to.be.instanceOf(DataTermsError);
  expect((err as Error).message).to.match(re);
}

describe("market: data terms (DataRegistry + createJobWithTerms)", function () {
  this.timeout(120_000);
  const store = new LocalDirStore(join(mkdtempSync(join(tmpdir(), "pouw-terms-")), "store"));
  let admin: ChainClients, buyer: ChainClients, provider: ChainClients, contributor: ChainClients;
  let d: Awaited<ReturnType<typeof deployMarket>>;
  let bare: Awaited<ReturnType<typeof deployMarket>>;
  let time: { increase: (s: number) => Promise<unknown> };

  before(async () => {
    const conn = await network.create();
    time = conn.networkHelpers.time;
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
    [admin, buyer, provider, contributor] = [mk(0), mk(1), mk(2), mk(3)];
    d = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n }); // >= the 1-day attestation request window
    bare = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 60n, registries: false });
    for (const c of [buyer, provider]) {
      await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("100") });
      await approveToken(c, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
    }
    await stakeDeposit(provider, { stakeVault: d.stakeVault, amount: parseEther("10") });
  });

  it("an unregistered corpus: no terms and the reason (auto), an error when terms are required", async () => {
    const t = await dataTermsFor(buyer.public, d, manifest);
    expect(t.attached).to.equal(false);
    if (!t.attached) expect(t.reason).to.equal(`corpus mnist-digits (${manifest.corpora[0]!.contentId}) is not registered in DataRegistry ${getAddress(d.dataRegistry!)} for payout ${payout}`);
    await rejects(dataTermsFor(buyer.public, d, manifest, { mode: "require" }), /^cannot attach data terms: corpus mnist-digits .* is not registered in DataRegistry/);
  });

  it("a market without a DataRegistry: no terms; off: no terms without asking the chain", async () => {
    const t = await dataTermsFor(buyer.public, bare, manifest);
    expect(t).to.deep.equal({ attached: false, reason: `JobMarket ${bare.jobMarket} has no DataRegistry (deployed with --no-registries)` });
    await rejects(dataTermsFor(buyer.public, bare, manifest, { mode: "require" }), /has no DataRegistry/);
    expect(await dataTermsFor(buyer.public, { jobMarket: "0x000000000000000000000000000000000000dEaD" as Address }, manifest, { mode: "off" })).to.deep.include({ attached: false });
    await rejects(dataTermsFor(buyer.public, d, manifest, { dataShareBps: 10_001 }), /--data-share-bps must be 0\.\.10000/);
  });

  it("the contributor registers the manifest's corpus once; a second run reports the existing id", async () => {
    const [first] = await registerManifestCorpora(contributor, d.dataRegistry!, manifest);
    expect(first).to.deep.include({ name: "mnist-digits", corpusId: 1n, status: "registered", payout: payout, owner: contributor.account.address });
    const [again] = await registerManifestCorpora(buyer, d.dataRegistry!, manifest);
    expect(again).to.deep.include({ corpusId: 1n, status: "existing", owner: contributor.account.address, gasUsed: 0n });
  });

  it("a registered corpus: terms with its id, the declared tokens, the manifest's min tier and the share", async () => {
    const t = await dataTermsFor(buyer.public, d, manifest);
    expect(t.attached).to.equal(true);
    if (!t.attached) return;
    expect(t.terms).to.deep.equal({ minTier: 4, dataShareBps: DEFAULT_DATA_SHARE_BPS, corpora: [{ corpusId: 1n, tokens: 10_000n }] });
    expect(t.corpora[0]).to.deep.include({ name: "mnist-digits", payout: payout });
    expect(t.dataRegistry).to.equal(getAddress(d.dataRegistry!));
  });

  it("a registry entry that contradicts the manifest (licence) is an error in auto and require mode", async () => {
    const other = withCorpus({ licence: "CC-BY-4.0" });
    await rejects(dataTermsFor(buyer.public, d, other), /DataRegistry corpus 1 is registered with CID .* and licence "MIT.*", the manifest says .* and "CC-BY-4.0"/);
    await rejects(dataTermsFor(buyer.public, d, other, { mode: "require" }), /the manifest says .* and "CC-BY-4.0"/);
    expect(await dataTermsFor(buyer.public, d, other, { mode: "off" })).to.deep.include({ attached: false });
  });

  it("postJob with the terms: createJobWithTerms; finalize credits the payout address, contributor + provider + refund == payment", async () => {
    const t = await dataTermsFor(buyer.public, d, manifest, { dataShareBps: 2_500 });
    if (!t.attached) throw new Error(t.reason);
    const { policy, payment } = await jobPolicyFor(manifest, { payment: parseEther("1"), overrides: { challengeWindow: 60 } });
    const { jobId } = await postJob(buyer, d, store, manifest, policy, payment, { terms: t.terms });
    const [minTier, dataShareBps, corpora] = await buyer.public.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "termsOf", args: [jobId] });
    expect({ minTier, dataShareBps }).to.deep.equal({ minTier: 4, dataShareBps: 2_500 });
    expect(corpora.map((c) => [c.corpusId, c.tokens])).to.deep.equal([[1n, 10_000n]]);

    await acceptJob(provider, { jobMarket: d.jobMarket, jobId });
    for (let s = 0; s < policy.segments; s++) {
      await commitSegment(provider, { jobMarket: d.jobMarket, jobId, segment: s, stateHashes: segmentHashes(jobId, s, policy.stepsPerSegment).hashes, lossE6: 1n, checkpointCid: "bafkreiaaa" });
    }
    await time.increase(61);
    const f = await finalize(provider, { jobMarket: d.jobMarket, jobId });
    const shares = parseEventLogs({ abi: jobMarketAbi, logs: f.receipt.logs, eventName: "DataShareCredited" }).map((e) => e.args);
    const [fin] = parseEventLogs({ abi: jobMarketAbi, logs: f.receipt.logs, eventName: "JobFinalized" }).map((e) => e.args);
    expect(shares).to.have.length(1);
    expect(shares[0]).to.deep.include({ corpusId: 1n, payout: payout, amount: parseEther("0.25") });
    expect(shares[0]!.amount + fin!.providerPay + fin!.buyerRefund).to.equal(payment);
    const credit = (a: Address) => buyer.public.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [a, d.token] });
    expect(await credit(payout)).to.equal(parseEther("0.25"));
    expect(await credit(provider.account.address)).to.equal(parseEther("0.75"));
  });

  it("provider accept refuses a job whose data share is above its limit (the buyer's own corpus would get the pay back), before sending; a raised limit accepts and says the pay", async () => {
    const t = await dataTermsFor(buyer.public, d, manifest, { dataShareBps: 10_000 });
    if (!t.attached) throw new Error(t.reason);
    const { policy, payment } = await jobPolicyFor(manifest, { payment: parseEther("1") });
    const { jobId } = await postJob(buyer, d, store, manifest, policy, payment, { terms: t.terms });
    const dir = mkdtempSync(join(tmpdir(), "pouw-terms-accept-"));
    const ctx = { clients: provider, deployment: d, store, board: new SegmentBoard(join(dir, "board"), store), stateDir: join(dir, "state") };
    const amounts = { fmt: (w: bigint) => formatEther(w), symbol: "PDT" };
    const sent = await provider.public.getTransactionCount({ address: provider.account.address });
    let err: unknown;
    await acceptProviderJob(ctx, jobId, { amounts }).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(InputError);
    expect((err as Error).message).to.equal(
      `job ${jobId} not accepted (no stake locked): its data terms credit 100% of the payment (1 of 1 PDT) to its corpora, above your limit of 25%; you would be paid 0 PDT. Accept with --max-data-share-bps 10000 if that pay is what you want`,
    );
    expect(await provider.public.getTransactionCount({ address: provider.account.address })).to.equal(sent);
    expect(DEFAULT_MAX_DATA_SHARE_BPS).to.equal(2_500);
    const ok = await acceptProviderJob(ctx, jobId, { amounts, maxDataShareBps: 10_000 });
    expect({ status: ok.job.status, dataShareBps: ok.dataShareBps, providerPayWei: ok.providerPayWei }).to.deep.equal({ status: "Active", dataShareBps: 10_000, providerPayWei: 0n });
  });

  it("a retired corpus: no terms (auto), an error when required", async () => {
    await sendContractTx(contributor, { address: d.dataRegistry!, abi: dataRegistryAbi, functionName: "retire", args: [1n] });
    const t = await dataTermsFor(buyer.public, d, manifest);
    expect(t).to.deep.equal({ attached: false, reason: "corpus mnist-digits is DataRegistry corpus 1, retired" });
    await rejects(dataTermsFor(buyer.public, d, manifest, { mode: "require" }), /retired/);
  });
});

describe("market: corpus squatting (attack 9) earns a squatter nothing from a buyer who names the payout", function () {
  this.timeout(180_000);
  const store = new LocalDirStore(join(mkdtempSync(join(tmpdir(), "pouw-squat-")), "store"));
  const corpus = manifest.corpora[0]!;
  const digest = contentDigestOf(corpus.contentId);
  let conn: Awaited<ReturnType<typeof network.create>>;
  let admin: ChainClients, buyer: ChainClients, provider: ChainClients, contributor: ChainClients, squatter: ChainClients;
  let d: Awaited<ReturnType<typeof deployMarket>>;

  before(async () => {
    conn = await network.create();
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
    [admin, buyer, provider, contributor, squatter] = [mk(0), mk(1), mk(2), mk(3), mk(4)];
    d = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n }); // >= the 1-day attestation request window
    for (const c of [buyer, provider]) {
      await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("100") });
      await approveToken(c, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
    }
    await stakeDeposit(provider, { stakeVault: d.stakeVault, amount: parseEther("10") });
  });

  const credit = (a: Address) => buyer.public.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [a, d.token] });
  const registered = (corpusId: bigint) => buyer.public.readContract({ address: d.dataRegistry!, abi: dataRegistryAbi, functionName: "corpusOf", args: [corpusId] });

  /** The documented buyer path: dataTermsFor, postJob with its terms, then the job runs to finalize. */
  async function buyAndFinalize(): Promise<{ corpusId: bigint; share: bigint }> {
    const t = await dataTermsFor(buyer.public, d, manifest, { dataShareBps: 2_000, mode: "require" });
    if (!t.attached) throw new Error(t.reason);
    const { policy, payment } = await jobPolicyFor(manifest, { payment: parseEther("1"), overrides: { challengeWindow: 60 } });
    const { jobId } = await postJob(buyer, d, store, manifest, policy, payment, { terms: t.terms });
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId });
    for (let s = 0; s < policy.segments; s++) {
      await commitSegment(provider, { jobMarket: d.jobMarket, jobId, segment: s, stateHashes: segmentHashes(jobId, s, policy.stepsPerSegment).hashes, lossE6: 1n, checkpointCid: "bafkreiaaa" });
    }
    await conn.networkHelpers.time.increase(61);
    const f = await finalize(provider, { jobMarket: d.jobMarket, jobId });
    const shares = parseEventLogs({ abi: jobMarketAbi, logs: f.receipt.logs, eventName: "DataShareCredited" }).map((e) => e.args);
    expect(shares).to.have.length(1);
    expect(shares[0]!.payout).to.equal(payout);
    return { corpusId: t.terms.corpora[0]!.corpusId, share: shares[0]!.amount };
  }

  it("a squatter who registers the digest first, under its own payout, is never attached", async () => {
    await sendContractTx(squatter, { address: d.dataRegistry!, abi: dataRegistryAbi, functionName: "register", args: [digest, corpus.contentId, corpus.licence, squatter.account.address, keccak256(toHex("mine"))] });
    // Before the contributor registers, the buyer finds nothing for its payout: no terms, nothing for the squatter.
    const none = await dataTermsFor(buyer.public, d, manifest);
    expect(none).to.deep.equal({ attached: false, reason: `corpus mnist-digits (${corpus.contentId}) is not registered in DataRegistry ${getAddress(d.dataRegistry!)} for payout ${payout}` });
    // The squatter's earlier registration does not block the contributor's.
    const [reg] = await registerManifestCorpora(contributor, d.dataRegistry!, manifest);
    expect(reg).to.deep.include({ corpusId: 2n, status: "registered", payout, owner: contributor.account.address });
    const { corpusId, share } = await buyAndFinalize();
    expect(corpusId).to.equal(2n);
    expect(share).to.equal(parseEther("0.2"));
    expect(await credit(payout)).to.equal(parseEther("0.2"));
    expect(await credit(squatter.account.address)).to.equal(0n);
  });

  it("a squatter who copies the contributor's registration out of the mempool and front-runs it pays the contributor", async () => {
    // A second corpus (other bytes) so this registration starts from an empty listing.
    const sotu = parseManifest({ ...tiny, corpora: [{ ...tiny.corpora[0], name: "other", contentId: "bafkreibdr4cox2vam5jgegasxk7sf7i4aleffzt5jkbz5c2rpl3fqrsyey" }] });
    const c = sotu.corpora[0]!;
    const args = [contentDigestOf(c.contentId), c.contentId, c.licence, payout, keccak256(toHex(c.licence))] as const;
    await conn.provider.request({ method: "evm_setAutomine", params: [false] });
    try {
      const signed = await signTx(contributor, d.dataRegistry!, encodeFunctionData({ abi: dataRegistryAbi, functionName: "register", args }));
      await contributor.public.sendRawTransaction({ serializedTransaction: signed.raw });
      // The squatter reads the pending transaction and sends its calldata from its own account, paying more to go first.
      const pending = await squatter.public.getTransaction({ hash: signed.hash });
      const tip = (pending.maxPriorityFeePerGas ?? 1n) * 10n + 1_000_000_000n;
      await squatter.wallet.sendTransaction({ account: squatter.account, chain: squatter.wallet.chain, to: d.dataRegistry!, data: pending.input, gas: 400_000n, maxFeePerGas: (pending.maxFeePerGas ?? 0n) + tip, maxPriorityFeePerGas: tip });
      await conn.networkHelpers.mine();
    } finally {
      await conn.provider.request({ method: "evm_setAutomine", params: [true] });
    }
    const ids = await buyer.public.readContract({ address: d.dataRegistry!, abi: dataRegistryAbi, functionName: "corpusIdsOf", args: [args[0], payout] });
    expect(ids).to.deep.equal([3n, 4n]);
    expect((await registered(3n)).registrant).to.equal(squatter.account.address);
    expect((await registered(4n)).registrant).to.equal(contributor.account.address);
    // The copy pays the contributor's payout, and the squatter can never move it.
    let err: unknown;
    try {
      await sendContractTx(squatter, { address: d.dataRegistry!, abi: dataRegistryAbi, functionName: "setPayout", args: [3n, squatter.account.address] });
    } catch (e) {
      err = e;
    }
    expect((err as { errorName?: string }).errorName).to.equal("DataRegistryNotPayout");
    const before = await credit(payout);
    const t = await dataTermsFor(buyer.public, d, sotu, { dataShareBps: 2_000, mode: "require" });
    if (!t.attached) throw new Error(t.reason);
    expect(t.corpora[0]).to.deep.include({ corpusId: 3n, payout });
    // Whichever copy the buyer attached, the share goes to the payout it named; the squatter gets nothing.
    const { policy, payment } = await jobPolicyFor(sotu, { payment: parseEther("1"), overrides: { challengeWindow: 60 } });
    const { jobId } = await postJob(buyer, d, store, sotu, policy, payment, { terms: t.terms });
    // Retiring its copy after the job was created changes nothing for that job (retirement rule).
    await sendContractTx(squatter, { address: d.dataRegistry!, abi: dataRegistryAbi, functionName: "retire", args: [3n] });
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId });
    for (let s = 0; s < policy.segments; s++) {
      await commitSegment(provider, { jobMarket: d.jobMarket, jobId, segment: s, stateHashes: segmentHashes(jobId, s, policy.stepsPerSegment).hashes, lossE6: 1n, checkpointCid: "bafkreiaaa" });
    }
    await conn.networkHelpers.time.increase(61);
    await finalize(provider, { jobMarket: d.jobMarket, jobId });
    expect((await credit(payout)) - before).to.equal(parseEther("0.2"));
    expect(await credit(squatter.account.address)).to.equal(0n);
    // With its copy retired, the next buyer attaches the contributor's own registration.
    const next = await dataTermsFor(buyer.public, d, sotu, { mode: "require" });
    expect(next.attached && next.corpora[0]!.corpusId).to.equal(4n);
  });
});
