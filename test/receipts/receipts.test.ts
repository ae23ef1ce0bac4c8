import { expect } from "chai";
import { network } from "hardhat";
import { keccak256, toHex, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  ATTESTATION_VERIFIED_TYPE,
  ATTESTATION_VERIFIED_TYPEHASH,
  AUDIT_RECEIPT_TYPE,
  AUDIT_RECEIPT_TYPEHASH,
  JOB_MARKET_DOMAIN_NAME,
  PROVIDER_REGISTRY_DOMAIN_NAME,
  attestationVerifiedDigest,
  auditReceiptDigest,
  checkNames,
  checksMask,
  jobMarketDomain,
  providerRegistryDomain,
  recoverAttestationVerifiedSigner,
  recoverAuditReceiptSigner,
  ReceiptFieldError,
  ReceiptSignatureError,
  signAttestationVerified,
  signAuditReceipt,
  verifyAttestationVerified,
  verifyAuditReceipt,
  type AttestationVerified,
  type AuditReceipt,
} from "../../verifier/src/receipts/index.ts";

const JOB_MARKET = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const auditor = privateKeyToAccount("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");

const receipt: AuditReceipt = {
  jobId: 7n,
  segment: 3,
  traceRoot: keccak256(toHex("segment 3 root")),
  checks: checksMask(["recompute", "freivalds", "magnitude"]),
  sampledSteps: 16,
  verdict: 0,
};

const attestation: AttestationVerified = {
  provider: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  requestId: 3n,
  tier: 1,
  band: 95,
  evidenceHash: keccak256(toHex("evidence")),
  expiresAt: 1_900_000_000n,
  issuedAt: 1_800_000_000n,
};

async function expectSignatureError(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(ReceiptSignatureError);
    return;
  }
  expect.fail("expected ReceiptSignatureError");
}

describe("receipts: EIP-712 AuditReceipt and AttestationVerified", () => {
  const domain = jobMarketDomain(31337n, JOB_MARKET);

  it("uses the documented type strings", () => {
    expect(AUDIT_RECEIPT_TYPE).to.equal(
      "AuditReceipt(uint256 jobId,uint32 segment,bytes32 traceRoot,uint32 checks,uint32 sampledSteps,uint8 verdict)",
    );
    expect(ATTESTATION_VERIFIED_TYPE).to.equal(
      "AttestationVerified(address provider,uint256 requestId,uint8 tier,uint8 band,bytes32 evidenceHash,uint64 expiresAt,uint64 issuedAt)",
    );
    expect(checksMask(["recompute", "freivalds", "magnitude"])).to.equal(0b10101);
    expect(checkNames(0b10101)).to.deep.equal(["recompute", "freivalds", "magnitude"]);
    expect(() => checkNames(1 << 6)).to.throw(ReceiptFieldError);
  });

  it("signs and recovers an audit receipt (round trip)", async () => {
    const sig = await signAuditReceipt(auditor, domain, receipt);
    expect(await recoverAuditReceiptSigner(domain, receipt, sig)).to.equal(auditor.address);
    await verifyAuditReceipt(domain, receipt, sig, auditor.address);
  });

  it("rejects every tampered field", async () => {
    const sig = await signAuditReceipt(auditor, domain, receipt);
    const tampered: AuditReceipt[] = [
      { ...receipt, jobId: 8n },
      { ...receipt, segment: 4 },
      { ...receipt, traceRoot: keccak256(toHex("other")) },
      { ...receipt, checks: checksMask(["recompute"]) },
      { ...receipt, sampledSteps: 17 },
      { ...receipt, verdict: 1 },
    ];
    for (const t of tampered) {
      expect(await recoverAuditReceiptSigner(domain, t, sig)).to.not.equal(auditor.address);
      await expectSignatureError(verifyAuditReceipt(domain, t, sig, auditor.address));
    }
  });

  it("rejects a signature made for another domain (chain, contract or name)", async () => {
    const sig = await signAuditReceipt(auditor, domain, receipt);
    const others = [
      jobMarketDomain(1n, JOB_MARKET),
      jobMarketDomain(31337n, "0x0000000000000000000000000000000000000001"),
      { ...domain, name: PROVIDER_REGISTRY_DOMAIN_NAME },
      { ...domain, version: "2" },
    ];
    for (const d of others) await expectSignatureError(verifyAuditReceipt(d, receipt, sig, auditor.address));
  });

  it("rejects malformed signatures and a signature by someone else with typed errors", async () => {
    const sig = await signAuditReceipt(auditor, domain, receipt);
    await expectSignatureError(recoverAuditReceiptSigner(domain, receipt, "0x1234"));
    await expectSignatureError(recoverAuditReceiptSigner(domain, receipt, (sig.slice(0, -2) + "05") as Hex));
    const other = privateKeyToAccount(generatePrivateKey());
    const otherSig = await signAuditReceipt(other, domain, receipt);
    await expectSignatureError(verifyAuditReceipt(domain, receipt, otherSig, auditor.address));
  });

  it("rejects out-of-range fields with ReceiptFieldError", async () => {
    const bad: AuditReceipt[] = [
      { ...receipt, segment: 2 ** 32 },
      { ...receipt, verdict: 2 },
      { ...receipt, checks: 1 << 9 },
      { ...receipt, traceRoot: "0x1234" },
      { ...receipt, jobId: -1n },
      { ...receipt, sampledSteps: 1.5 },
    ];
    for (const b of bad) expect(() => auditReceiptDigest(domain, b)).to.throw(ReceiptFieldError);
    await signAuditReceipt(auditor, domain, bad[0]!).then(
      () => expect.fail("signed a bad receipt"),
      (err) => expect(err).to.be.instanceOf(ReceiptFieldError),
    );
    expect(() => attestationVerifiedDigest(providerRegistryDomain(1n, JOB_MARKET), { ...attestation, tier: 5 })).to.throw(ReceiptFieldError);
    expect(() => attestationVerifiedDigest(providerRegistryDomain(1n, JOB_MARKET), { ...attestation, band: 101 })).to.throw(ReceiptFieldError);
    expect(() => attestationVerifiedDigest(providerRegistryDomain(1n, JOB_MARKET), { ...attestation, requestId: -1n })).to.throw(ReceiptFieldError);
  });

  it("signs, recovers and rejects tampering of AttestationVerified", async () => {
    const d = providerRegistryDomain(31337n, JOB_MARKET);
    const sig = await signAttestationVerified(auditor, d, attestation);
    await verifyAttestationVerified(d, attestation, sig, auditor.address);
    await expectSignatureError(verifyAttestationVerified(d, { ...attestation, band: 90 }, sig, auditor.address));
    await expectSignatureError(verifyAttestationVerified(d, { ...attestation, expiresAt: 1_900_000_001n }, sig, auditor.address));
    // a signature answers one request: the same statement for another request does not verify
    await expectSignatureError(verifyAttestationVerified(d, { ...attestation, requestId: 4n }, sig, auditor.address));
    await expectSignatureError(verifyAttestationVerified({ ...d, name: JOB_MARKET_DOMAIN_NAME }, attestation, sig, auditor.address));
  });

  it("matches the digest and signer an OpenZeppelin EIP712 contract computes (Receipts.sol)", async () => {
    const { viem } = await network.create();
    const chainId = BigInt(await (await viem.getPublicClient()).getChainId());
    const market = await viem.deployContract("ReceiptDigestHarness", [JOB_MARKET_DOMAIN_NAME]);
    const registry = await viem.deployContract("ReceiptDigestHarness", [PROVIDER_REGISTRY_DOMAIN_NAME]);

    expect(await market.read.auditReceiptTypehash!()).to.equal(AUDIT_RECEIPT_TYPEHASH);
    expect(await market.read.attestationVerifiedTypehash!()).to.equal(ATTESTATION_VERIFIED_TYPEHASH);

    const md = jobMarketDomain(chainId, market.address);
    for (const r of [receipt, { ...receipt, jobId: 2n ** 256n - 1n, segment: 2 ** 32 - 1, verdict: 1, checks: 63, sampledSteps: 0 }]) {
      const onChain = await market.read.auditReceiptDigest!([r]);
      expect(onChain).to.equal(auditReceiptDigest(md, r));
      const sig = await signAuditReceipt(auditor, md, r);
      expect(await market.read.recoverAuditReceipt!([r, sig])).to.equal(auditor.address);
    }

    const rd = providerRegistryDomain(chainId, registry.address);
    expect(await registry.read.attestationVerifiedDigest!([attestation])).to.equal(attestationVerifiedDigest(rd, attestation));
    const asig = await signAttestationVerified(auditor, rd, attestation);
    expect(await registry.read.recoverAttestationVerified!([attestation, asig])).to.equal(auditor.address);
    // the same message under the other domain gives another digest on chain too
    expect(await market.read.attestationVerifiedDigest!([attestation])).to.not.equal(attestationVerifiedDigest(rd, attestation));
  });
});
