/**
 * "Anyone downgrades with public revocation data", on a local chain: a provider's SEV-SNP evidence (test chain of the
 * real shape) is recorded at tier 3; AMD then revokes the ASK in a newer ARK-signed CRL. A disputer's panel re-verifies
 * the bundle at the statement's issuedAt: under the trust of its time it holds (not false), under today's trust with
 * that CRL (`amdSevSnp.currentCrls`) it does not (cert-revoked): the members vote ProviderRegistry.voteRevoked, the
 * dispute settles "revoked" and the record ends (effective tier 4) without forfeiting the signers' bonds.
 */
import { expect } from "chai";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as x509 from "@peculiar/x509";
import { network } from "hardhat";
import { getAddress, keccak256, maxUint256, parseEther, type Hex } from "viem";
import { judgeStatement, statementDisputeBundle } from "../../verifier/src/attest/dispute.ts";
import { AttestCommitteeError, loadEvidenceTrust, prepareAttestation } from "../../verifier/src/attest/index.ts";
import {
  approveToken,
  DEFAULT_ACTIVATION_DELAY_SECONDS,
  deployMarket,
  devAccount,
  disputeStatement,
  drawStatementDisputePanel,
  getAttestationRequest,
  getAuditor,
  getProviderAttestation,
  getStatementDispute,
  mintTestToken,
  postBond,
  providerClients,
  recordAttestation,
  requestAttestation,
  voteStatementDispute,
  type ChainClients,
} from "../../verifier/src/chain/index.ts";
import { parseDer, verifyEvidenceBundle, verifySevSnp, type EvidenceTrust, type SevSnpPolicy } from "../../verifier/src/checks/attestation/index.ts";
import { InputError } from "../../verifier/src/errors/index.ts";
import { providerRegistryDomain, signAttestationVerified } from "../../verifier/src/receipts/index.ts";
import { reasonOf } from "../checks/attestation-reason.ts";
import { makeSnpChain, snpReport, type Tcb } from "../checks/snp-fixture.ts";
import { newSessionKey, sessionProof } from "../checks/nras-fixture.ts";

const DEV = Array.from({ length: 20 }, (_, i) => devAccount(i));
const raw = (c: { rawData: ArrayBuffer }) => new Uint8Array(c.rawData);
const b64 = (x: Uint8Array) => Buffer.from(x).toString("base64");

describe("attest: a record whose ASK is revoked in a newer CRL is voted 'revoked since' and ends", function () {
  this.timeout(240_000);
  const AUDITORS = [3, 4, 5, 6, 10, 11, 12];
  const PROVIDER = 1;
  const CHALLENGER = 13;
  const TCB: Tcb = { bl: 3, tee: 0, snp: 8, ucode: 115 };

  it("held under the trust of its time; under today's CRL (amdSevSnp.currentCrls) it is cert-revoked: voteRevoked x quorum, outcome revoked, tier 4, no bond forfeited", async () => {
    const conn = await network.create();
    const clientsOf = (i: number): ChainClients => providerClients(conn.provider, 31337, { account: DEV[i]!, pollingIntervalMs: 20 });
    const admin = clientsOf(0);
    const d = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n });
    const registry = d.providerRegistry!;
    for (const i of [...AUDITORS, PROVIDER, CHALLENGER]) {
      const a = clientsOf(i);
      await mintTestToken(a, { token: d.token, to: a.account.address, amount: parseEther("10") });
      if (AUDITORS.includes(i)) {
        await approveToken(a, { token: d.token, spender: d.auditorRegistry, amount: maxUint256 });
        await postBond(a, { auditorRegistry: d.auditorRegistry, amount: parseEther("1") });
      }
    }
    await conn.networkHelpers.time.increase(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));

    // the provider's evidence: an SNP report whose report data is the evidence nonce of a fresh challenge and session key
    const chainNow = new Date(Number(await conn.networkHelpers.time.latest()) * 1000);
    const snp = await makeSnpChain("Milan", chainNow);
    const chip = Buffer.alloc(64, 7);
    const vcek = await snp.vcek(chip, TCB);
    const provider = clientsOf(PROVIDER);
    await approveToken(provider, { token: d.token, spender: registry, amount: maxUint256 });
    const key = newSessionKey();
    const prep = await prepareAttestation(provider, { providerRegistry: registry, sessionKey: key.address });
    const report = await snpReport({ reportData: Buffer.concat([Buffer.from(prep.nonce!.slice(2), "hex"), Buffer.alloc(32)]), chipId: chip, tcb: TCB }, vcek.key);
    const evidence = { format: "amd-sev-snp", report: report.toString("hex"), vcek: b64(raw(vcek.cert)), ask: b64(raw(snp.ask)), ark: b64(raw(snp.ark)) };
    const bundle = Buffer.from(JSON.stringify({ version: 1, ...(await sessionProof(DEV[PROVIDER]!, key, prep.binding)), evidence }));
    const req = await requestAttestation(provider, { providerRegistry: registry, evidenceHash: keccak256(bundle), challengeBlock: prep.challengeBlock, sessionKey: key.address });
    await conn.networkHelpers.mine(3);
    const q = await getAttestationRequest(admin.public, { providerRegistry: registry, requestId: req.requestId });

    // the trust of the statement's time: the pinned ARK, no CRL required (this test is about the CRL published later)
    const policy: SevSnpPolicy = { arks: [parseDer(Buffer.from(raw(snp.ark)), "ARK")], requireCrl: false };
    const trust: EvidenceTrust = { amdSevSnp: policy };
    const issuedAt = BigInt(await conn.networkHelpers.time.latest());
    const verdict = await verifyEvidenceBundle(bundle, { trust, request: q, challengeIssuedAt: chainNow, now: new Date(Number(issuedAt) * 1000) });
    expect(verdict.tier).to.equal(3);
    const signers = AUDITORS.filter((i) => q.committee!.map((a) => getAddress(a)).includes(DEV[i]!.address)).slice(0, 2);
    const statement = { provider: provider.account.address, requestId: req.requestId, tier: verdict.tier, band: verdict.band, evidenceHash: keccak256(bundle), expiresAt: issuedAt + 86_400n, issuedAt };
    const domain = providerRegistryDomain(31337n, registry);
    const sigs = await Promise.all(signers.map(async (i) => ({ signer: DEV[i]!.address, signature: await signAttestationVerified(DEV[i]!, domain, statement) })));
    await recordAttestation(admin, { providerRegistry: registry, attestation: statement, signatures: sigs });
    expect((await getProviderAttestation(admin.public, { providerRegistry: registry, provider: provider.account.address })).effectiveTier).to.equal(3);

    // later: AMD revokes the ASK. Today's public data is the ARK-signed CRL listing it, read from the trust file.
    const dir = mkdtempSync(join(tmpdir(), "pouw-revoked-since-"));
    writeFileSync(join(dir, "ark.pem"), snp.ark.toString("pem"));
    writeFileSync(join(dir, "ask-crl.pem"), (await snp.crl([snp.ask.serialNumber])).toString("pem"));
    writeFileSync(join(dir, "clean-crl.der"), raw(await snp.crl([])));
    writeFileSync(join(dir, "now.json"), JSON.stringify({ amdSevSnp: { arks: ["ark.pem"], requireCrl: false, currentCrls: ["clean-crl.der", "ask-crl.pem"] } }));
    writeFileSync(join(dir, "clean.json"), JSON.stringify({ amdSevSnp: { arks: ["ark.pem"], requireCrl: false, currentCrls: ["clean-crl.der"] } }));
    // a CRL not signed by the chain's ARK (here: by the ASK's key under the ARK's name) revokes nothing
    writeFileSync(join(dir, "forged-crl.der"), raw(await snp.crl([snp.ask.serialNumber], snp.askKeys)));
    writeFileSync(join(dir, "forged.json"), JSON.stringify({ amdSevSnp: { arks: ["ark.pem"], requireCrl: false, currentCrls: ["forged-crl.der"] } }));

    const challenger = clientsOf(CHALLENGER);
    await approveToken(challenger, { token: d.token, spender: registry, amount: maxUint256 });
    // a dispute without the statement's own bundle is refused (the panel would have nothing to judge)
    const withheld = await disputeStatement(challenger, { providerRegistry: registry, provider: provider.account.address, bundle: new Uint8Array([1]) }).then(() => undefined, (e: unknown) => e);
    expect(String(withheld)).to.match(/ProviderRegistryWrongEvidence/);
    const { disputeId } = await disputeStatement(challenger, { providerRegistry: registry, provider: provider.account.address, bundle });
    await conn.networkHelpers.mine(3);
    const { panel } = await drawStatementDisputePanel(admin, { providerRegistry: registry, disputeId });
    const members = AUDITORS.filter((i) => panel.map((a) => getAddress(a)).includes(DEV[i]!.address));

    // no newer revocation, or a forged one: the statement stands (neither false nor revoked since)
    for (const f of ["clean.json", "forged.json"]) {
      const j = await judgeStatement(admin.public, { providerRegistry: registry, disputeId, bundle, trust, currentTrust: loadEvidenceTrust(join(dir, f)) });
      expect([j.statementFalse, j.revokedSince], f).to.deep.equal([false, false]);
    }
    // an unusable current trust (here a list without nextUpdate, whose entries would parse as none) is refused, not voted
    const noNext = await x509.X509CrlGenerator.create({ issuer: snp.ark.subject, thisUpdate: chainNow, entries: [{ serialNumber: snp.ask.serialNumber, revocationDate: chainNow }], signingKey: snp.arkKeys.privateKey, signingAlgorithm: { name: "RSA-PSS", hash: "SHA-384", saltLength: 48 } as RsaPssParams });
    const unusable = judgeStatement(admin.public, { providerRegistry: registry, disputeId, bundle, trust, currentTrust: { amdSevSnp: { ...policy, currentCrls: [raw(noNext)] } } });
    expect(await unusable.then(() => undefined, (e: unknown) => e)).to.be.instanceOf(AttestCommitteeError).and.have.property("message").match(/current trust configuration is unusable for this bundle: .*has no nextUpdate/);
    const current = loadEvidenceTrust(join(dir, "now.json"));
    const before = await Promise.all(signers.map(async (i) => (await getAuditor(admin.public, { auditorRegistry: d.auditorRegistry, auditor: DEV[i]!.address })).bond));
    let outcome = "open";
    // each member judges the bundle the dispute carries on chain (no file from the provider or the challenger)
    expect(await statementDisputeBundle(admin.public, { providerRegistry: registry, disputeId })).to.deep.equal(new Uint8Array(bundle));
    for (const m of members) {
      if (outcome !== "open") break;
      const j = await judgeStatement(admin.public, { providerRegistry: registry, disputeId, trust, currentTrust: current });
      expect([j.statementFalse, j.revokedSince, j.revokedReason]).to.deep.equal([false, true, "cert-revoked"]);
      await voteStatementDispute(clientsOf(m), { providerRegistry: registry, disputeId, statementFalse: j.statementFalse, revokedSince: j.revokedSince });
      outcome = (await getStatementDispute(admin.public, { providerRegistry: registry, disputeId })).outcome;
    }
    expect(outcome).to.equal("revoked");
    expect((await getProviderAttestation(admin.public, { providerRegistry: registry, provider: provider.account.address })).effectiveTier).to.equal(4);
    const afterBonds = await Promise.all(signers.map(async (i) => (await getAuditor(admin.public, { auditorRegistry: d.auditorRegistry, auditor: DEV[i]!.address })).bond));
    expect(afterBonds).to.deep.equal(before); // they signed what held: nobody forfeits
  });

  it("verifySevSnp: an ASK-signed current CRL revokes the VCEK, an ARK-signed one the ASK; neither is checked against the verification time", async () => {
    const now = new Date();
    const snp = await makeSnpChain("Milan", now);
    const chip = Buffer.alloc(64, 9);
    const v = await snp.vcek(chip, TCB);
    const ev = { report: await snpReport({ reportData: Buffer.alloc(64), chipId: chip, tcb: TCB }, v.key), vcek: raw(v.cert), ask: raw(snp.ask), ark: raw(snp.ark) };
    const policy: SevSnpPolicy = { arks: [parseDer(Buffer.from(raw(snp.ark)), "ARK")], requireCrl: false };
    // published a day after the verification time: still counts (a dispute re-verifies a past statement with today's list)
    const vcekCrl = await x509.X509CrlGenerator.create({ issuer: snp.ask.subject, thisUpdate: new Date(now.getTime() + 86_400_000), nextUpdate: new Date(now.getTime() + 4 * 86_400_000), entries: [{ serialNumber: v.cert.serialNumber, revocationDate: now }], signingKey: snp.askKeys.privateKey, signingAlgorithm: { name: "RSA-PSS", hash: "SHA-384", saltLength: 48 } as RsaPssParams });
    expect(await reasonOf(verifySevSnp(ev, { ...policy, currentCrls: [raw(vcekCrl)] }, now))).to.equal("cert-revoked");
    // a list without nextUpdate is refused: its entries would parse as none (a silent "not revoked")
    const noNext = await x509.X509CrlGenerator.create({ issuer: snp.ask.subject, thisUpdate: now, entries: [{ serialNumber: v.cert.serialNumber, revocationDate: now }], signingKey: snp.askKeys.privateKey, signingAlgorithm: { name: "RSA-PSS", hash: "SHA-384", saltLength: 48 } as RsaPssParams });
    expect(await reasonOf(verifySevSnp(ev, { ...policy, currentCrls: [raw(noNext)] }, now))).to.equal("policy-invalid");
    expect(await reasonOf(verifySevSnp(ev, { ...policy, currentCrls: [raw(await snp.crl([snp.ask.serialNumber]))] }, now))).to.equal("cert-revoked");
    // a current list that names neither certificate: the report verifies
    expect((await verifySevSnp(ev, { ...policy, currentCrls: [raw(await snp.crl(["7f"]))] }, now)).tcbCurrent).to.equal(true);
  });

  it("a trust file whose currentCrls entry is no CRL is refused when read (InputError naming the file), not taken as 'no revocation'", async () => {
    const snp = await makeSnpChain("Milan");
    const dir = mkdtempSync(join(tmpdir(), "pouw-current-crl-"));
    writeFileSync(join(dir, "ark.pem"), snp.ark.toString("pem"));
    writeFileSync(join(dir, "garbage.crl"), "not a CRL");
    writeFileSync(join(dir, "t.json"), JSON.stringify({ amdSevSnp: { arks: ["ark.pem"], currentCrls: ["garbage.crl"] } }));
    expect(() => loadEvidenceTrust(join(dir, "t.json"))).to.throw(InputError, /the CRL file .*garbage\.crl is not a DER or PEM X\.509 CRL/);
    writeFileSync(join(dir, "t.json"), JSON.stringify({ amdSevSnp: { arks: ["ark.pem"], currentCrls: ["absent.crl"] } }));
    expect(() => loadEvidenceTrust(join(dir, "t.json"))).to.throw(InputError, /the CRL file .*absent\.crl is not readable/);
  });
});
