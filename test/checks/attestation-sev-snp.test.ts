/**
 * AMD SEV-SNP reports (formats/sev-snp.ts), against a TEST chain of the real shape (test/checks/snp-fixture.ts: ARK ->
 * ASK RSA-4096 RSASSA-PSS, P-384 VCEK with AMD's hwID/SPL extensions): no real report + VCEK is available offline. Each
 * forgery an attacker would try fails by name; in a bundle the report data must be our nonce.
 */
import { expect } from "chai";
import { reasonOf } from "./attestation-reason.ts";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadEvidenceTrust } from "../../verifier/src/attest/index.ts";
import { InputError } from "../../verifier/src/errors/index.ts";
import { keccak256, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  CVM_ONLY_REASON,
  GPU_ONLY_REASON,
  DEFAULT_MAX_CRL_AGE_SECONDS,
  DEFAULT_SNP_MIN_TCB,
  evidenceNonce,
  parseDer,
  parseSevSnpReport,
  verifyEvidenceBundle,
  verifySevSnp,
  type SevSnpEvidence,
  type SevSnpPolicy,
} from "../../verifier/src/checks/attestation/index.ts";
import { makeSnpChain, snpReport, type SnpChain, type Tcb } from "./snp-fixture.ts";
import { makeNras, newSessionKey, sessionProof } from "./nras-fixture.ts";

describe("checks/attestation formats: AMD SEV-SNP report, VCEK <- ASK <- ARK (test chain of the real shape)", function () {
  this.timeout(120_000);
  const TCB: Tcb = { bl: 3, tee: 0, snp: 8, ucode: 115 };
  const chip = randomBytes(64);
  const raw = (c: { rawData: ArrayBuffer }) => new Uint8Array(c.rawData);
  let chain: SnpChain;
  let policy: SevSnpPolicy;
  let good: SevSnpEvidence;
  let vcekKey: CryptoKey;
  const now = new Date();
  const data = Buffer.concat([Buffer.from(keccak256("0x01").slice(2), "hex"), Buffer.alloc(32)]);

  before(async () => {
    chain = await makeSnpChain();
    // revocation is covered by its own case below (and test/checks/attestation-attacks.test.ts): the rest staple no CRL
    policy = { arks: [parseDer(Buffer.from(raw(chain.ark)), "ARK")], requireCrl: false };
    const v = await chain.vcek(chip, TCB);
    vcekKey = v.key;
    good = { report: await snpReport({ reportData: data, chipId: chip, tcb: TCB }, v.key), vcek: raw(v.cert), ask: raw(chain.ask), ark: raw(chain.ark) };
  });

  it("parses the ABI layout and verifies a report chained to the pinned ARK", async () => {
    const r = parseSevSnpReport(good.report);
    expect([r.version, r.signatureAlgo, r.signingKey, r.maskChipKey, r.policy]).to.deep.equal([2, 1, 0, false, 0x30000n]);
    expect(Buffer.from(r.chipId).equals(chip)).to.equal(true);
    expect([...r.reportedTcb]).to.deep.equal([3, 0, 0, 0, 0, 0, 8, 115]);
    const v = await verifySevSnp(good, policy, now);
    expect(v.reportData).to.equal(`0x${data.toString("hex")}`);
    expect(v.tcbCurrent).to.equal(true);
    // the report carries no time: short lifetime, 7 days by default
    expect(v.expiresAt).to.equal(Math.floor(now.getTime() / 1000) + 7 * 86_400);
  });

  it("refuses a report with one flipped byte or of the wrong size (quote-invalid)", async () => {
    const bad = Buffer.from(good.report);
    bad[0x50]! ^= 1;
    expect(await reasonOf(verifySevSnp({ ...good, report: bad }, policy, now))).to.equal("quote-invalid");
    expect(await reasonOf(verifySevSnp({ ...good, report: good.report.subarray(0, 0x49f) }, policy, now))).to.equal("quote-invalid");
  });

  it("refuses a VCEK of another chip or another TCB (quote-invalid), under the same ASK", async () => {
    const other = await chain.vcek(randomBytes(64), TCB);
    const r1 = await snpReport({ reportData: data, chipId: chip, tcb: TCB }, other.key);
    expect(await reasonOf(verifySevSnp({ ...good, report: r1, vcek: raw(other.cert) }, policy, now))).to.equal("quote-invalid");
    const older = await chain.vcek(chip, { ...TCB, snp: 7 });
    const r2 = await snpReport({ reportData: data, chipId: chip, tcb: TCB }, older.key);
    expect(await reasonOf(verifySevSnp({ ...good, report: r2, vcek: raw(older.cert) }, policy, now))).to.equal("quote-invalid");
  });

  it("refuses an unpinned ARK (untrusted-root) and a VCEK signed by a key the ARK never certified (chain-broken)", async () => {
    const rogue = await makeSnpChain();
    const v = await rogue.vcek(chip, TCB);
    const r = await snpReport({ reportData: data, chipId: chip, tcb: TCB }, v.key);
    expect(await reasonOf(verifySevSnp({ report: r, vcek: raw(v.cert), ask: raw(rogue.ask), ark: raw(rogue.ark) }, policy, now))).to.equal("untrusted-root");
    // the rogue ASK presented under the real ARK: same subject names, not the ARK's signature
    expect(await reasonOf(verifySevSnp({ report: r, vcek: raw(v.cert), ask: raw(rogue.ask), ark: good.ark }, policy, now))).to.equal("chain-broken");
  });

  it("refuses a guest policy that allows debugging (debug-enabled) and a measurement off the allow-list", async () => {
    const r = await snpReport({ reportData: data, chipId: chip, tcb: TCB, policy: 0x30000n | (1n << 19n) }, vcekKey);
    expect(await reasonOf(verifySevSnp({ ...good, report: r }, policy, now))).to.equal("debug-enabled");
    expect(await reasonOf(verifySevSnp(good, { ...policy, allowedMeasurements: ["00".repeat(48)] }, now))).to.equal("measurement-mismatch");
  });

  it("stapled ASK CRL: revoked ASK (cert-revoked), CRL not the ARK's (crl-invalid), required but absent (crl-invalid)", async () => {
    const clean = await chain.crl([]);
    const v = await verifySevSnp({ ...good, crl: raw(clean) }, { ...policy, requireCrl: true }, now);
    expect(v.expiresAt).to.equal(Math.floor(clean.nextUpdate!.getTime() / 1000)); // the CRL's nextUpdate is earlier than 7 days
    expect(await reasonOf(verifySevSnp({ ...good, crl: raw(await chain.crl([chain.ask.serialNumber])) }, policy, now))).to.equal("cert-revoked");
    expect(await reasonOf(verifySevSnp({ ...good, crl: raw(await chain.crl([], chain.askKeys)) }, policy, now))).to.equal("crl-invalid");
    expect(await reasonOf(verifySevSnp(good, { ...policy, requireCrl: true }, now))).to.equal("crl-invalid");
  });

  it("in a bundle: tier 3 at most when the report data is our nonce (a CVM quote alone proves no GPU), binding-mismatch otherwise", async () => {
    const provider = privateKeyToAccount(`0x${"c3".repeat(32)}`);
    const binding = keccak256("0xcc") as Hex;
    const key = newSessionKey();
    const nonce = Buffer.from(evidenceNonce(binding, key.address).slice(2), "hex");
    const v = await chain.vcek(chip, TCB);
    const report = await snpReport({ reportData: Buffer.concat([nonce, Buffer.alloc(32)]), chipId: chip, tcb: TCB }, v.key);
    const b64 = (x: Uint8Array) => Buffer.from(x).toString("base64");
    const evidence = { format: "amd-sev-snp", report: report.toString("hex"), vcek: b64(raw(v.cert)), ask: b64(raw(chain.ask)), ark: b64(raw(chain.ark)) };
    const bytes = Buffer.from(JSON.stringify({ version: 1, ...(await sessionProof(provider, key, binding)), evidence }));
    const ctx = { trust: { amdSevSnp: policy }, request: { provider: provider.address, binding }, challengeIssuedAt: now, now };
    // the auditor's --trust file pins the ARK by PEM (what `pouw auditor attest --trust` reads)
    const dir = mkdtempSync(join(tmpdir(), "pouw-snp-trust-"));
    writeFileSync(join(dir, "ark.pem"), chain.ark.toString("pem"));
    writeFileSync(join(dir, "trust.json"), JSON.stringify({ amdSevSnp: { arks: ["ark.pem"], maxValiditySeconds: 3600, requireCrl: false } }));
    const fromFile = await verifyEvidenceBundle(bytes, { ...ctx, trust: loadEvidenceTrust(join(dir, "trust.json")) });
    expect(fromFile.expiresAt).to.equal(BigInt(Math.floor(now.getTime() / 1000) + 3600));
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ amdSevSnp: { arks: [] } }));
    expect(() => loadEvidenceTrust(join(dir, "bad.json"))).to.throw(InputError, /is not a trust configuration/);
    const verdict = await verifyEvidenceBundle(bytes, ctx);
    expect([verdict.tier, verdict.band, verdict.evidenceType, verdict.format]).to.deep.equal([3, 69, "cvm-quote", "amd-sev-snp"]);
    expect(verdict.details.tierCap).to.equal(CVM_ONLY_REASON);
    expect(verdict.deviceIds).to.deep.equal([`amd-chip:0x${chip.toString("hex")}`]); // the device identity the ledger keys on
    const notHex = Buffer.from(JSON.stringify({ version: 1, ...(await sessionProof(provider, key, binding)), evidence: { ...evidence, report: "zz" } }));
    expect(await reasonOf(verifyEvidenceBundle(notHex, ctx))).to.equal("bundle-invalid");
    // a genuine report and VCEK whose report data is another binding's
    const otherData = Buffer.from(JSON.stringify({ version: 1, ...(await sessionProof(provider, key, binding)), evidence: { ...evidence, report: Buffer.from(good.report).toString("hex"), vcek: b64(good.vcek) } }));
    expect(await reasonOf(verifyEvidenceBundle(otherData, ctx))).to.equal("binding-mismatch");
  });
  it("composite evidence: an SNP report and NVIDIA GPU evidence bound to one session key get tier 1, only under a pinned image; the GPU evidence alone ranks below it (tier 2)", async () => {
    const nras = await makeNras();
    const provider = privateKeyToAccount(`0x${"c4".repeat(32)}`);
    const binding = keccak256("0xcd") as Hex;
    const key = newSessionKey();
    const nonceHex = evidenceNonce(binding, key.address);
    const v = await chain.vcek(chip, TCB);
    const report = await snpReport({ reportData: Buffer.concat([Buffer.from(nonceHex.slice(2), "hex"), Buffer.alloc(32)]), chipId: chip, tcb: TCB }, v.key);
    const b64 = (x: Uint8Array) => Buffer.from(x).toString("base64");
    const cvm = { format: "amd-sev-snp", report: report.toString("hex"), vcek: b64(raw(v.cert)), ask: b64(raw(chain.ask)), ark: b64(raw(chain.ark)) };
    const gpu = { format: "nvidia-eat", eat: await nras.eat(nonceHex.slice(2), { gpus: [{ ueid: "77" }], iat: now }) }; // issued at the verification time: a loaded machine takes longer than the clock skew to get here
    const bundle = async (evidence: unknown, sessionKey = key) => Buffer.from(JSON.stringify({ version: 1, ...(await sessionProof(provider, sessionKey, binding)), evidence }));
    // independent expectation: the launch measurement at offset 0x90 of the report bytes
    const measurement = `0x${report.subarray(0x90, 0xc0).toString("hex")}`;
    const pinned = { amdSevSnp: { ...policy, allowedMeasurements: [measurement], minTcb: { bootloader: 3, tee: 0, snp: 8, microcode: 115 } }, nvidia: nras.policy };
    const ctx = (trust: object) => ({ trust, request: { provider: provider.address, binding }, challengeIssuedAt: now, now });
    const verdict = await verifyEvidenceBundle(await bundle({ format: "composite", cvm, gpu }), ctx(pinned));
    expect([verdict.tier, verdict.band, verdict.evidenceType, verdict.format]).to.deep.equal([1, 100, "cvm-quote", "composite"]);
    // the same GPU evidence alone proves less (no CVM holds the session key): a worse tier than the composite
    const gpuOnly = await verifyEvidenceBundle(await bundle(gpu), ctx(pinned));
    expect([gpuOnly.tier, gpuOnly.band, gpuOnly.format, gpuOnly.details.tierCap]).to.deep.equal([2, 89, "nvidia-eat", GPU_ONLY_REASON]);
    expect(verdict.tier).to.be.lessThan(gpuOnly.tier);
    expect(verdict.deviceIds).to.deep.equal([`amd-chip:0x${chip.toString("hex")}`, "nvidia-ueid:77"]);
    // the same evidence under a trust file that accepts any guest image: refused for tier 1 (policy-invalid)
    expect(await reasonOf(verifyEvidenceBundle(await bundle({ format: "composite", cvm, gpu }), ctx({ amdSevSnp: policy, nvidia: nras.policy })))).to.equal("policy-invalid");
    // a pinned image but no stated minimum TCB: refused for tier 1 too (the default floor is product-independent)
    expect(await reasonOf(verifyEvidenceBundle(await bundle({ format: "composite", cvm, gpu }), ctx({ ...pinned, amdSevSnp: { ...policy, allowedMeasurements: [measurement] } })))).to.equal("policy-invalid");
    // GPU evidence made for another session key (another machine's GPUs): binding-mismatch
    const otherKey = newSessionKey();
    const foreignGpu = { format: "nvidia-eat", eat: await nras.eat(evidenceNonce(binding, otherKey.address).slice(2), { iat: now }) };
    expect(await reasonOf(verifyEvidenceBundle(await bundle({ format: "composite", cvm, gpu: foreignGpu }), ctx(pinned)))).to.equal("binding-mismatch");
    // a measurement off the allow-list, and the GPU evidence alone in the CVM slot, are refused
    expect(await reasonOf(verifyEvidenceBundle(await bundle({ format: "composite", cvm, gpu }), ctx({ ...pinned, amdSevSnp: { ...pinned.amdSevSnp, allowedMeasurements: [`0x${"00".repeat(48)}`] } })))).to.equal("measurement-mismatch");
    expect(await reasonOf(verifyEvidenceBundle(await bundle({ format: "composite", cvm: gpu, gpu }), ctx(pinned)))).to.equal("bundle-invalid");
  });

  it("safe default minimum TCB: an all-zero REPORTED_TCB (never-patched firmware) is refused (tcb-invalid) unless the auditor states a lower minTcb", async () => {
    const zero: Tcb = { bl: 0, tee: 0, snp: 0, ucode: 0 };
    const v = await chain.vcek(chip, zero);
    const ev = { ...good, vcek: raw(v.cert), report: await snpReport({ reportData: data, chipId: chip, tcb: zero }, v.key) };
    expect(DEFAULT_SNP_MIN_TCB).to.deep.equal({ bootloader: 1, tee: 0, snp: 1, microcode: 1 });
    expect(await reasonOf(verifySevSnp(ev, policy, now))).to.equal("tcb-invalid");
    const stated = await verifySevSnp(ev, { ...policy, minTcb: { bootloader: 0, tee: 0, snp: 0, microcode: 0 } }, now);
    expect(stated.tcbCurrent).to.equal(true);
    // the fixture's patched TCB passes the default floor
    expect((await verifySevSnp(good, policy, now)).tcbCurrent).to.equal(true);
  });

  it("safe defaults: a report from VMPL 1 and a guest policy allowing a migration agent are refused (guest-privilege) unless the auditor allows them", async () => {
    const v = await chain.vcek(chip, TCB);
    const vmpl1 = { ...good, vcek: raw(v.cert), report: await snpReport({ reportData: data, chipId: chip, tcb: TCB, vmpl: 1 }, v.key) };
    expect(await reasonOf(verifySevSnp(vmpl1, policy, now))).to.equal("guest-privilege");
    expect((await verifySevSnp(vmpl1, { ...policy, maxVmpl: 1 }, now)).reportData).to.equal(`0x${data.toString("hex")}`);
    const ma = { ...good, vcek: raw(v.cert), report: await snpReport({ reportData: data, chipId: chip, tcb: TCB, policy: 0x30000n | (1n << 18n) }, v.key) };
    expect(parseSevSnpReport(ma.report).policy & (1n << 18n)).to.equal(1n << 18n);
    expect(await reasonOf(verifySevSnp(ma, policy, now))).to.equal("guest-privilege");
    expect((await verifySevSnp(ma, { ...policy, allowMigrationAgent: true }, now)).reportData).to.equal(`0x${data.toString("hex")}`);
  });

  it("CRL freshness: an unexpired ASK CRL issued more than DEFAULT_MAX_CRL_AGE_SECONDS (2 days) before the verification is refused (collateral-expired)", async () => {
    expect(DEFAULT_MAX_CRL_AGE_SECONDS).to.equal(2 * 86_400);
    const crl = raw(await chain.crl([])); // thisUpdate now - 1 day, nextUpdate now + 3 days
    const later = new Date(now.getTime() + 1.5 * 86_400_000); // 2.5 days after thisUpdate, inside nextUpdate
    expect(await reasonOf(verifySevSnp({ ...good, crl }, { ...policy, requireCrl: true }, later))).to.equal("collateral-expired");
    expect((await verifySevSnp({ ...good, crl }, { ...policy, requireCrl: true }, now)).reportData).to.equal(`0x${data.toString("hex")}`);
    expect((await verifySevSnp({ ...good, crl }, { ...policy, requireCrl: true, maxCrlAgeSeconds: 3 * 86_400 }, later)).reportData).to.equal(`0x${data.toString("hex")}`);
  });
});
