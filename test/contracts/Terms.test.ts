/**
 * ProviderRegistry, DataRegistry and the JobMarket terms on a fresh in-process network: attestation tiers
 * signed by auditors with verifier/src/receipts (so the TypeScript EIP-712 side is checked against the
 * contracts), tier-gated acceptance with tier-scaled stake, audit receipts, data shares at finalize and
 * provenance anchoring.
 */
import { expect } from "chai";
import { keccak256, parseEther, toHex, zeroAddress, type Address, type Hex } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import {
  attestationVerifiedDigest,
  auditReceiptDigest,
  jobMarketDomain,
  providerRegistryDomain,
  signAttestationVerified,
  signAuditReceipt,
  type AttestationVerified,
  type AuditReceipt,
} from "../../verifier/src/receipts/index.ts";
import { ACTIVATION_DELAY, CHECKPOINT_CID, createConnection, DAY, expectNoTokenMovement, MANIFEST_HASH, MANIFEST_URI, MIN_BOND, policy, segmentHashes } from "./fixture.ts";

const { viem, networkHelpers, publicClient, deploy } = await createConnection();
const { time, loadFixture } = networkHelpers;

const KEYS: Hex[] = [1, 2, 3].map((i) => keccak256(toHex(`pouw-test-auditor-${i}`)));
const PAYMENT = parseEther("10");

async function wired() {
  // The fixture sets ProviderRegistry (committees of 3, quorum 2) and DataRegistry and wires `admin` as evaluator.
  const f = await deploy();
  const auditors: PrivateKeyAccount[] = KEYS.map((k) => privateKeyToAccount(k)).sort((a, b) =>
    BigInt(a.address) < BigInt(b.address) ? -1 : 1,
  );
  for (const a of auditors) {
    await networkHelpers.setBalance(a.address, parseEther("10"));
    await f.token.write.mint([a.address, MIN_BOND]);
    await f.token.write.approve([f.registry.address, MIN_BOND], { account: a });
    await f.registry.write.postBond([MIN_BOND], { account: a });
  }
  // the bonds count for committee snapshots from here on
  await time.increase(ACTIVATION_DELAY);
  const chainId = BigInt(await publicClient.getChainId());
  return { ...f, auditors, chainId };
}

type W = Awaited<ReturnType<typeof wired>>;

type Wallet = W["provider"];

/** `provider` requests attestation; the chain moves past the seed block; returns the request and its committee. */
async function request(f: W, provider: Wallet) {
  const evidenceHash = keccak256(toHex(`evidence-${provider.account.address}`));
  // tiers 1-2 need a declared session key: the provider's own address here (its commits come from it)
  await f.providers.write.requestAttestation([evidenceHash, await publicClient.getBlockNumber(), [], provider.account.address], { account: provider.account });
  const requestId = await f.providers.read.lastRequestOf([provider.account.address]);
  await networkHelpers.mine(3);
  const committee = (await f.providers.read.committeeOf([requestId])).map((a) => a.toLowerCase());
  return { requestId, evidenceHash, committee };
}

/** A request by `provider` and a statement on it signed by `count` of its committee (ascending). */
async function attest(f: W, provider: Wallet, tier: number, band: number, count = 2) {
  const { requestId, evidenceHash, committee } = await request(f, provider);
  const att: AttestationVerified = {
    provider: provider.account.address,
    requestId,
    tier,
    band,
    evidenceHash,
    expiresAt: BigInt(await time.latest()) + 7n * DAY,
    issuedAt: BigInt(await time.latest()),
  };
  const domain = providerRegistryDomain(f.chainId, f.providers.address);
  const signers = f.auditors.filter((a) => committee.includes(a.address.toLowerCase())).slice(0, count);
  const sigs = await Promise.all(signers.map((a) => signAttestationVerified(a, domain, att)));
  return { att, sigs, domain, committee };
}

async function corpus(f: W, salt: string, payout: Address): Promise<bigint> {
  await f.data.write.register([keccak256(toHex(salt)), `bafkrei${salt}`, "CC-BY-4.0", payout, keccak256(toHex("terms"))], {
    account: f.stranger.account,
  });
  return BigInt(await f.data.read.corpusCount());
}

describe("ProviderRegistry and tiers", () => {
  it("records a tier signed by a quorum of the drawn committee with the TypeScript signer; digests agree", async () => {
    const f = await loadFixture(wired);
    const { att, sigs, domain, committee } = await attest(f, f.provider, 2, 80);
    expect(committee).to.have.length(3);
    expect(committee).to.not.include(f.provider.account.address.toLowerCase());
    expect(await f.providers.read.digestOf([att])).to.equal(attestationVerifiedDigest(domain, att));
    await viem.assertions.emit(f.providers.write.record([att, sigs]), f.providers, "AttestationRecorded");
    const a = await f.providers.read.attestationOf([f.provider.account.address]);
    expect(a.tier).to.equal(2);
    expect(a.band).to.equal(80);
    expect(a.evidenceHash).to.equal(att.evidenceHash);
    expect(await f.providers.read.effectiveTier([f.provider.account.address])).to.equal(2);
  });

  it("rejects below quorum, a non-committee signer, duplicates, a second record and a closed request by name", async () => {
    const f = await loadFixture(wired);
    const { att, sigs } = await attest(f, f.provider, 1, 95);
    await viem.assertions.revertWithCustomError(f.providers.write.record([att, [sigs[0]!]]), f.providers, "ProviderRegistryBelowQuorum");
    await viem.assertions.revertWithCustomError(
      f.providers.write.record([att, [sigs[0]!, sigs[0]!]]),
      f.providers,
      "ProviderRegistryUnsortedSigners",
    );
    const stranger = privateKeyToAccount(keccak256(toHex("not-an-auditor")));
    const foreign = await signAttestationVerified(stranger, providerRegistryDomain(f.chainId, f.providers.address), att);
    const pair = BigInt(stranger.address) > BigInt(f.auditors[0]!.address) ? [sigs[0]!, foreign] : [foreign, sigs[0]!];
    await viem.assertions.revertWithCustomError(f.providers.write.record([att, pair]), f.providers, "ProviderRegistryNotCommitteeMember");
    await f.providers.write.record([att, sigs]);
    await viem.assertions.revertWithCustomError(f.providers.write.record([att, sigs]), f.providers, "ProviderRegistryAlreadyRecorded");
    await viem.assertions.revertWithCustomError(
      f.providers.write.requestAttestation([att.evidenceHash, await publicClient.getBlockNumber()], { account: f.provider.account }),
      f.providers,
      "ProviderRegistryRequestOpen",
    );
    await time.increase(8n * DAY);
    expect(await f.providers.read.effectiveTier([f.provider.account.address])).to.equal(4);
    await viem.assertions.revertWithCustomError(f.providers.write.record([att, sigs]), f.providers, "ProviderRegistryRequestClosed");
  });

  it("a provider's own auditors, bonded just before its request, are not on the committee: NotCommitteeMember", async () => {
    const f = await loadFixture(wired);
    const own = [keccak256(toHex("own-1")), keccak256(toHex("own-2"))]
      .map((k) => privateKeyToAccount(k))
      .sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1));
    for (const a of own) {
      await networkHelpers.setBalance(a.address, parseEther("10"));
      await f.token.write.mint([a.address, MIN_BOND]);
      await f.token.write.approve([f.registry.address, MIN_BOND], { account: a });
      await f.registry.write.postBond([MIN_BOND], { account: a });
    }
    const { requestId, evidenceHash, committee } = await request(f, f.provider);
    for (const a of own) expect(committee).to.not.include(a.address.toLowerCase());
    const att: AttestationVerified = { provider: f.provider.account.address, requestId, tier: 1, band: 100, evidenceHash, expiresAt: BigInt(await time.latest()) + DAY, issuedAt: BigInt(await time.latest()) };
    const domain = providerRegistryDomain(f.chainId, f.providers.address);
    const sigs = await Promise.all(own.map((a) => signAttestationVerified(a, domain, att)));
    await viem.assertions.revertWithCustomErrorWithArgs(f.providers.write.record([att, sigs]), f.providers, "ProviderRegistryNotCommitteeMember", [
      requestId,
      0n,
      own[0]!.address,
    ]);
    expect(await f.providers.read.effectiveTier([f.provider.account.address])).to.equal(4);
  });

  it("a record counts only while a quorum of its signers stays bonded", async () => {
    const f = await loadFixture(wired);
    const { att, sigs } = await attest(f, f.provider, 2, 80);
    await f.providers.write.record([att, sigs]);
    const signers = await f.providers.read.signersOf([f.provider.account.address]);
    expect(signers).to.have.length(2);
    const leaver = f.auditors.find((a) => a.address.toLowerCase() === signers[0]!.toLowerCase())!;
    await f.registry.write.requestExit({ account: leaver });
    expect(await f.providers.read.backingOf([f.provider.account.address])).to.equal(1n);
    expect(await f.providers.read.effectiveTier([f.provider.account.address])).to.equal(4);
  });

  it("acceptJob enforces the minimum tier and locks the tier-scaled stake", async () => {
    const f = await loadFixture(wired);
    const { att, sigs } = await attest(f, f.provider, 1, 100);
    await f.providers.write.record([att, sigs]);
    const terms = { minTier: 2, dataShareBps: 0, corpora: [] };
    await f.market.write.createJobWithTerms([MANIFEST_HASH, MANIFEST_URI, f.token.address, PAYMENT, policy(), terms], {
      account: f.buyer.account,
    });
    // provider2 has no attestation: tier 4, weaker than 2.
    await expectNoTokenMovement(f.token, [f.vault.address, f.market.address], async () => {
      await viem.assertions.revertWithCustomErrorWithArgs(
        f.market.write.acceptJob([1n], { account: f.provider2.account }),
        f.market,
        "JobMarketTierTooLow",
        [1n, f.provider2.account.address, 4n, 2n],
      );
    });
    await f.market.write.acceptJob([1n], { account: f.provider.account });
    // tier 1: 50% of requiredStake.
    expect(await f.vault.read.lockedFor([f.provider.account.address, 1n])).to.equal(policy().requiredStake / 2n);
    expect(await f.market.read.termsOf([1n])).to.deep.equal([2, 0, []]);
  });
});

describe("JobRecords.recordReceipt", () => {
  async function committed() {
    const f = await wired();
    await f.market.write.createJob([MANIFEST_HASH, MANIFEST_URI, f.token.address, PAYMENT, policy()], { account: f.buyer.account });
    await f.market.write.acceptJob([1n], { account: f.provider.account });
    const { hashes, root, end } = segmentHashes(1n, 0);
    await f.market.write.commitSegment([1n, 0n, hashes, 1n, CHECKPOINT_CID], { account: f.provider.account });
    const receipt: AuditReceipt = { jobId: 1n, segment: 0, traceRoot: root, checks: 1 | 4, sampledSteps: 4, verdict: 0 };
    const records = await viem.deployContract("JobRecords", [f.market.address]);
    return { ...f, records, receipt, end };
  }

  it("anchors a receipt signed with the TypeScript signer; the digest matches; a duplicate is refused", async () => {
    const f = await loadFixture(committed);
    const domain = jobMarketDomain(f.chainId, f.records.address);
    const digest = auditReceiptDigest(domain, f.receipt);
    expect(await f.records.read.receiptDigest([f.receipt])).to.equal(digest);
    const sig = await signAuditReceipt(f.auditors[0]!, domain, f.receipt);
    await viem.assertions.emitWithArgs(f.records.write.recordReceipt([f.receipt, f.end, sig]), f.records, "ReceiptRecorded", [
      1n,
      0n,
      f.auditors[0]!.address,
      digest,
      f.receipt.traceRoot,
      f.receipt.checks,
      f.receipt.sampledSteps,
      f.receipt.verdict,
    ]);
    expect(await f.records.read.receiptOf([1n, 0n, f.auditors[0]!.address])).to.equal(digest);
    await viem.assertions.revertWithCustomError(f.records.write.recordReceipt([f.receipt, f.end, sig]), f.records, "JobRecordsDuplicateReceipt");
  });

  it("refuses a wrong end state, a non-auditor and a malformed signature", async () => {
    const f = await loadFixture(committed);
    const domain = jobMarketDomain(f.chainId, f.records.address);
    const sig = await signAuditReceipt(f.auditors[1]!, domain, f.receipt);
    await viem.assertions.revertWithCustomError(
      f.records.write.recordReceipt([f.receipt, keccak256(toHex("other")), sig]),
      f.records,
      "JobRecordsReceiptMismatch",
    );
    const stranger = privateKeyToAccount(keccak256(toHex("not-an-auditor")));
    await viem.assertions.revertWithCustomErrorWithArgs(
      f.records.write.recordReceipt([f.receipt, f.end, await signAuditReceipt(stranger, domain, f.receipt)]),
      f.records,
      "JobRecordsNotAuditor",
      [stranger.address],
    );
    await viem.assertions.revertWithCustomError(f.records.write.recordReceipt([f.receipt, f.end, "0x1234"]), f.records, "ECDSAInvalidSignatureLength");
    await viem.assertions.revertWithCustomError(
      f.records.write.recordReceipt([{ ...f.receipt, verdict: 2 }, f.end, sig]),
      f.records,
      "JobRecordsMalformedReceipt",
    );
  });
});

describe("DataRegistry, data shares and provenance", () => {
  it("credits contributors by tokens and weights at finalize; credits + pay + refund == payment", async () => {
    const f = await loadFixture(wired);
    const [p1, p2] = [f.auditors[0]!.address, f.challenger.account.address];
    const c1 = await corpus(f, "one", p1);
    const c2 = await corpus(f, "two", p2);
    const terms = { minTier: 0, dataShareBps: 3_000, corpora: [{ corpusId: c1, tokens: 1_000n }, { corpusId: c2, tokens: 2_000n }] };
    const payment = 1_000_000_007n;
    await viem.assertions.emit(
      f.market.write.createJobWithTerms([MANIFEST_HASH, MANIFEST_URI, f.token.address, payment, policy({ segments: 1 }), terms], {
        account: f.buyer.account,
      }),
      f.market,
      "JobTermsSet",
    );
    await f.market.write.recordImprovement([1n, c2, 500_000]); // corpus 2 counts half: weights 1000 vs 1000
    await f.market.write.acceptJob([1n], { account: f.provider.account });
    const { hashes, root, end } = segmentHashes(1n, 0);
    await f.market.write.commitSegment([1n, 0n, hashes, 1n, CHECKPOINT_CID], { account: f.provider.account });
    await time.increase(DAY + 1n);
    const pool = (payment * 3_000n) / 10_000n; // 300000002
    await viem.assertions.emitWithArgs(f.market.write.finalize([1n]), f.market, "DataShareCredited", [1n, c1, p1, pool / 2n]);
    const credit = (a: Address) => f.market.read.creditOf([a, f.token.address]);
    expect(await credit(p1)).to.equal(pool / 2n);
    expect(await credit(p2)).to.equal(pool / 2n);
    expect((await credit(p1)) + (await credit(p2)) + (await credit(f.provider.account.address)) + (await credit(f.buyer.account.address))).to.equal(payment);
    expect(await f.token.read.balanceOf([f.market.address])).to.equal(payment);
  });

  it("refuses unknown and retired corpora, payout changes by anyone but the payout, and a second registration by one registrant", async () => {
    const f = await loadFixture(wired);
    const c1 = await corpus(f, "one", f.challenger.account.address);
    const create = (id: bigint) =>
      f.market.write.createJobWithTerms(
        [MANIFEST_HASH, MANIFEST_URI, f.token.address, PAYMENT, policy(), { minTier: 0, dataShareBps: 100, corpora: [{ corpusId: id, tokens: 1n }] }],
        { account: f.buyer.account },
      );
    await expectNoTokenMovement(f.token, [f.market.address, f.buyer.account.address], async () => {
      await viem.assertions.revertWithCustomErrorWithArgs(create(9n), f.data, "DataRegistryUnknownCorpus", [9n]);
    });
    // Not even the registrant (stranger) moves the payout: only the payout address (challenger) does.
    for (const who of [f.buyer, f.stranger]) {
      await viem.assertions.revertWithCustomError(
        f.data.write.setPayout([c1, who.account.address], { account: who.account }),
        f.data,
        "DataRegistryNotPayout",
      );
    }
    await f.data.write.retire([c1], { account: f.stranger.account });
    await viem.assertions.revertWithCustomErrorWithArgs(create(c1), f.data, "DataRegistryRetired", [c1]);
    await viem.assertions.revertWithCustomError(
      f.data.write.register([keccak256(toHex("one")), "bafkreione", "MIT", f.buyer.account.address, keccak256(toHex("t"))], { account: f.stranger.account }),
      f.data,
      "DataRegistryDuplicateContent",
    );
  });

  it("anchors provenance once, by the final provider, after finalize", async () => {
    const f = await loadFixture(wired);
    const records = await viem.deployContract("JobRecords", [f.market.address]);
    await f.market.write.createJob([MANIFEST_HASH, MANIFEST_URI, f.token.address, PAYMENT, policy({ segments: 1 })], { account: f.buyer.account });
    await f.market.write.acceptJob([1n], { account: f.provider.account });
    const { hashes, root, end } = segmentHashes(1n, 0);
    await f.market.write.commitSegment([1n, 0n, hashes, 1n, CHECKPOINT_CID], { account: f.provider.account });
    const record = keccak256(toHex("provenance record"));
    await viem.assertions.revertWithCustomError(
      records.write.anchorProvenance([1n, record, CHECKPOINT_CID], { account: f.provider.account }),
      records,
      "JobRecordsWrongStatus",
    );
    await time.increase(DAY + 1n);
    await f.market.write.finalize([1n]);
    await viem.assertions.emitWithArgs(
      records.write.anchorProvenance([1n, record, CHECKPOINT_CID], { account: f.provider.account }),
      records,
      "ProvenanceAnchored",
      [1n, f.provider.account.address, record, CHECKPOINT_CID],
    );
    const [recordHash, cidHash, at] = await records.read.provenanceOf([1n]);
    expect(recordHash).to.equal(record);
    expect(cidHash).to.equal(keccak256(toHex(CHECKPOINT_CID)));
    expect(at).to.equal(BigInt(await time.latest()));
    await viem.assertions.revertWithCustomError(
      records.write.anchorProvenance([1n, record, CHECKPOINT_CID], { account: f.provider.account }),
      records,
      "JobRecordsProvenanceAlreadyAnchored",
    );
    const wiredTo = (await f.market.read.registries()).map((a) => a.toLowerCase());
    expect(wiredTo).to.deep.equal([f.registry.address, f.providers.address, f.data.address].map((a) => a.toLowerCase()));
    expect(wiredTo).to.not.include(zeroAddress);
  });
});
