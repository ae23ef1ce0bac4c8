/**
 * The attestation path played by a cheating provider: extra addresses, a rented confidential
 * machine, old evidence and chosen timing. Each case is the attack; the assertion is the named reason it now fails
 * with (or, for what the design already stops, the reason it always failed with). Chain-side attacks (old statements,
 * the provider on its own committee) are in test/chain/attestation.test.ts; co-signing in test/cli/attest-cli.test.ts.
 */
import { expect } from "chai";
import { reasonOf } from "./attestation-reason.ts";
import { randomBytes, webcrypto } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as x509 from "@peculiar/x509";
import { keccak256, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  attestationBinding,
  parseDer,
  sessionAuthorizationMessage,
  verifyEvidenceBundle,
  verifyNvidiaEat,
  verifySevSnp,
  verifyTdxQuote,
  type EvidenceTrust,
  type SevSnpEvidence,
  type SevSnpPolicy,
} from "../../verifier/src/checks/attestation/index.ts";
import { makeNras, newSessionKey, nvidiaBundle, sessionProof, type Nras } from "./nras-fixture.ts";
import { makeSnpChain, snpReport, type SnpChain, type Tcb } from "./snp-fixture.ts";

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const tdxDir = join(import.meta.dirname, "vendor-evidence", "intel-tdx");
const QUOTE = Buffer.from(readFileSync(join(tdxDir, "quote.hex"), "utf8").trim(), "hex");
const COLLATERAL = JSON.parse(readFileSync(join(tdxDir, "collateral.json"), "utf8")) as Record<string, string>;
const TDX_AT = new Date("2025-09-15T12:00:00Z");

/**
 * The real quote with `pem` inserted before its PCK chain (the certification data is not covered by the quote
 * signature): the three enclosing length fields of a v4 quote are patched so the quote still parses.
 */
function withPckPrefix(pem: string): Buffer {
  const begin = QUOTE.indexOf("-----BEGIN CERTIFICATE-----");
  const extra = Buffer.from(pem, "latin1");
  const q = Buffer.concat([QUOTE.subarray(0, begin), extra, QUOTE.subarray(begin)]);
  q.writeUInt32LE(q.readUInt32LE(632) + extra.length, 632); // signature data length
  q.writeUInt32LE(q.readUInt32LE(766) + extra.length, 766); // certification data (type 6) size
  q.writeUInt32LE(q.readUInt32LE(begin - 4) + extra.length, begin - 4); // PCK chain (type 5) size
  return q;
}

describe("checks/attestation attacks: a cheating provider against bundles, formats and device identities", function () {
  this.timeout(120_000);
  const alice = privateKeyToAccount(`0x${"a1".repeat(32)}`);
  const bob = privateKeyToAccount(`0x${"b2".repeat(32)}`);
  const registry = "0x5FbDB2315678afecb367f032d93F642f64180aa3" as const;
  const blockhash = `0x${"17".repeat(32)}` as Hex;
  const bindingA = attestationBinding({ provider: alice.address, chainId: 31337n, registry, challenge: blockhash });
  const bindingB = attestationBinding({ provider: bob.address, chainId: 31337n, registry, challenge: blockhash });
  // the challenge is issued when these tests start, not when Mocha loads the file (minutes earlier in a full run);
  // the verification time is each call's own
  let issued: Date;
  let nras: Nras;
  let trust: EvidenceTrust;
  const ctx = (provider: typeof alice, binding: Hex, seen?: Set<string>) => ({ trust, request: { provider: provider.address, binding }, challengeIssuedAt: issued, now: new Date(), seen });

  before(async () => {
    issued = new Date();
    nras = await makeNras();
    trust = { nvidia: nras.policy };
  });

  describe("relay and shared devices", () => {
    it("relay without B's cooperation: A's bundle, or A's evidence re-wrapped by B, is refused (binding-mismatch)", async () => {
      const key = newSessionKey();
      const alices = await nvidiaBundle(nras, alice, bindingA, { sessionKey: key });
      expect(await reasonOf(verifyEvidenceBundle(alices, ctx(bob, bindingB)))).to.equal("binding-mismatch");
      // B re-wraps under its own address but cannot sign Alice's authorization: the nonce still commits to bindingA
      const rewrapped = Buffer.from(JSON.stringify({ ...JSON.parse(alices.toString()), ...(await sessionProof(bob, key, bindingB)) }));
      expect(await reasonOf(verifyEvidenceBundle(rewrapped, ctx(bob, bindingB)))).to.equal("binding-mismatch");
    });

    it("relay with B's cooperation: A's GPU makes evidence for B's nonce; both pass, and both name the same device", async () => {
      // What attestation alone cannot stop (docs/checks.md "Not bound"): the device id is what the ledger keys on.
      const ueid = "622903794624785314125385224830541104713451457931";
      const forA = await verifyEvidenceBundle(await nvidiaBundle(nras, alice, bindingA, { gpus: [{ ueid }] }), ctx(alice, bindingA));
      const forB = await verifyEvidenceBundle(await nvidiaBundle(nras, bob, bindingB, { gpus: [{ ueid }] }), ctx(bob, bindingB));
      expect(forA.deviceIds).to.deep.equal([`nvidia-ueid:${ueid}`]);
      expect(forB.deviceIds).to.deep.equal(forA.deviceIds);
    });

    it("one GPU for two providers, its id hidden: a GPU token without a ueid is refused (claims-invalid)", async () => {
      // without a ueid the verdict names no device, so no ledger can see the GPU attest for a second provider
      const eat = await nras.eat("ab".repeat(32), { gpus: [{ ueid: undefined }] });
      expect(await reasonOf(verifyNvidiaEat(eat, nras.policy, new Date()))).to.equal("claims-invalid");
      // and one GPU counted twice in one bundle (two tokens, one ueid)
      const twice = await nras.eat("ab".repeat(32), { gpus: [{ ueid: "7" }, { ueid: "7" }] });
      expect(await reasonOf(verifyNvidiaEat(twice, nras.policy, new Date()))).to.equal("claims-invalid");
    });

    it("one TDX platform for two providers, its id forged: a decoy PCK certificate before the real chain is refused (quote-invalid)", async () => {
      // The quote's PCK chain is unsigned certification data. A decoy whose base64 carries a tab is skipped by
      // @phala/dcap-qvl's PEM reader (it verifies the real chain) but was read first by ours: the device id
      // (sha256 of the PCK key) came from the decoy, so one platform showed as any number of devices.
      const real = await verifyTdxQuote(QUOTE, COLLATERAL, TDX_AT);
      const pckCa = Buffer.from(COLLATERAL.pck_crl_issuer_chain!.match(/-----BEGIN CERTIFICATE-----([\s\S]+?)-----END/)![1]!.replace(/\s+/g, ""), "base64");
      const issuer = parseDer(pckCa, "PCK CA").cert.subject;
      const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
      const kp = (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as CryptoKeyPair;
      const decoy = await x509.X509CertificateGenerator.create({ serialNumber: "01", subject: "CN=Intel SGX PCK Certificate", issuer, publicKey: kp.publicKey, signingKey: kp.privateKey, signingAlgorithm: alg, notBefore: new Date("2025-01-01"), notAfter: new Date("2030-01-01") });
      const b64 = Buffer.from(decoy.rawData).toString("base64");
      const pem = `-----BEGIN CERTIFICATE-----\n${b64.slice(0, 64)}\t\n${b64.slice(64)}\n-----END CERTIFICATE-----\n`;
      const forged = withPckPrefix(pem);
      // the library alone still verifies the forged quote (it never sees the decoy)
      const lib = await import("@phala/dcap-qvl");
      expect(lib.verify(forged, COLLATERAL as never, TDX_AT.getTime() / 1000).status).to.equal("UpToDate");
      expect(await reasonOf(verifyTdxQuote(forged, COLLATERAL, TDX_AT))).to.equal("quote-invalid");
      expect(real.pckKeyHash).to.match(/^0x[0-9a-f]{64}$/);
    });

    it("one TDX platform for two providers under two PCK keys (a lower TCB level): the device id is the PPID, not the key", async () => {
      // The PCE derives a PCK key for any TCB level at or below the platform's, so a device id of sha256(PCK key)
      // gave one platform a fresh id per TCB level. The PPID in the PCK certificate's SGX extension is per platform.
      const v = await verifyTdxQuote(QUOTE, COLLATERAL, TDX_AT);
      // independent expectation: the OCTET STRING after the PPID OID (1.2.840.113741.1.13.1.1) in the PCK certificate DER
      const body = QUOTE.subarray(QUOTE.indexOf("-----BEGIN CERTIFICATE-----")).toString("latin1");
      const der = Buffer.from(body.match(/-----BEGIN CERTIFICATE-----([^-]+)-----END/)![1]!.replace(/\s+/g, ""), "base64");
      const oid = Buffer.from("060a2a864886f84d010d0101", "hex");
      const at = der.indexOf(oid) + oid.length;
      expect([der[at], der[at + 1]]).to.deep.equal([0x04, 16]);
      expect(v.ppid).to.equal(`0x${der.subarray(at + 2, at + 18).toString("hex")}`);
    });
  });

  describe("old collateral, chosen timing", () => {
    it("stale but unexpired TDX collateral (an older TCB evaluation) is refused below the auditor's minimum (collateral-expired)", async () => {
      // the sample's TCB info and QE identity are evaluation 17; after a TCB recovery Intel publishes 18 while 17 stays
      // signed and inside its window, and a provider staples the one in which its platform is still UpToDate
      expect((await verifyTdxQuote(QUOTE, COLLATERAL, TDX_AT, { minTcbEvaluationDataNumber: 17 })).tcbStatus).to.equal("UpToDate");
      expect(await reasonOf(verifyTdxQuote(QUOTE, COLLATERAL, TDX_AT, { minTcbEvaluationDataNumber: 18 }))).to.equal("collateral-expired");
    });
  });

  describe("replay and session keys", () => {
    it("replay: an old bundle for an earlier request of the same provider does not verify for the new one (session-key-unauthorized), nor twice (challenge-reused)", async () => {
      const old = await nvidiaBundle(nras, alice, bindingA);
      const later = attestationBinding({ provider: alice.address, chainId: 31337n, registry, challenge: `0x${"18".repeat(32)}` });
      // its session key proofs name the old binding (checked first), and its nonce does too
      expect(await reasonOf(verifyEvidenceBundle(old, ctx(alice, later)))).to.equal("session-key-unauthorized");
      const seen = new Set<string>();
      await verifyEvidenceBundle(old, ctx(alice, bindingA, seen));
      expect(await reasonOf(verifyEvidenceBundle(old, ctx(alice, bindingA, seen)))).to.equal("challenge-reused");
    });

    it("a session key authorization reused on another binding, chain or registry is refused (session-key-unauthorized)", async () => {
      const key = newSessionKey();
      const good = JSON.parse((await nvidiaBundle(nras, alice, bindingA, { sessionKey: key })).toString()) as Record<string, unknown>;
      for (const other of [
        attestationBinding({ provider: alice.address, chainId: 1n, registry, challenge: blockhash }),
        attestationBinding({ provider: alice.address, chainId: 31337n, registry: "0x0000000000000000000000000000000000000001", challenge: blockhash }),
        attestationBinding({ provider: alice.address, chainId: 31337n, registry, challenge: `0x${"19".repeat(32)}` }),
      ]) {
        // fresh evidence for the other binding, with the old authorization and possession proofs
        const eat = JSON.parse((await nvidiaBundle(nras, alice, other, { sessionKey: key })).toString()).evidence;
        const reused = Buffer.from(JSON.stringify({ ...good, evidence: eat }));
        expect(await reasonOf(verifyEvidenceBundle(reused, ctx(alice, other)))).to.equal("session-key-unauthorized");
      }
      expect(sessionAuthorizationMessage(alice.address, key.address, bindingA)).to.include(bindingA);
    });
  });

  describe("format confusion and non-canonical encodings", () => {
    it("a bundle with duplicate JSON keys (two evidence objects, one read) is refused (bundle-invalid)", async () => {
      const good = (await nvidiaBundle(nras, alice, bindingA)).toString();
      // JSON.parse keeps the last "evidence"; a reader keeping the first would see another format
      const dup = good.replace('"evidence":', '"evidence":{"format":"pouw-eat","token":"x.y.z"},"evidence":');
      expect(JSON.parse(dup).evidence.format).to.equal("nvidia-eat");
      expect(await reasonOf(verifyEvidenceBundle(Buffer.from(dup), ctx(alice, bindingA)))).to.equal("bundle-invalid");
      // the same for a key nested in the evidence, and for keys spelled with escapes
      const nested = good.replace('"format":"nvidia-eat"', '"format":"intel-tdx","format":"nvidia-eat"');
      expect(await reasonOf(verifyEvidenceBundle(Buffer.from(nested), ctx(alice, bindingA)))).to.equal("bundle-invalid");
      const escaped = good.replace('"version":1', '"version":1,"vers\\u0069on":1');
      expect(await reasonOf(verifyEvidenceBundle(Buffer.from(escaped), ctx(alice, bindingA)))).to.equal("bundle-invalid");
    });

    it("a hex field of odd length (one more nibble the hash covers and the parser drops) is refused (bundle-invalid)", async () => {
      const proof = await sessionProof(alice, newSessionKey(), bindingA);
      const odd = Buffer.from(JSON.stringify({ version: 1, ...proof, evidence: { format: "intel-tdx", quote: `${QUOTE.toString("hex")}0`, collateral: COLLATERAL } }));
      expect(Buffer.from(`${QUOTE.toString("hex")}0`, "hex").equals(QUOTE)).to.equal(true); // what Node's decoder does
      expect(await reasonOf(verifyEvidenceBundle(odd, { ...ctx(alice, bindingA), trust: { intelTdx: {} }, now: TDX_AT, challengeIssuedAt: TDX_AT }))).to.equal("bundle-invalid");
    });

    it("extra fields and a format's fields under another format are refused (bundle-invalid)", async () => {
      const good = JSON.parse((await nvidiaBundle(nras, alice, bindingA)).toString()) as { evidence: Record<string, unknown> };
      const cases = [
        { ...good, tier: 1 },
        { ...good, evidence: { ...good.evidence, tier: 1 } },
        { ...good, evidence: { ...good.evidence, format: "pouw-eat" } }, // nvidia fields read as pouw-eat
        { ...good, evidence: { format: "intel-tdx", eat: good.evidence.eat } },
      ];
      for (const c of cases) expect(await reasonOf(verifyEvidenceBundle(Buffer.from(JSON.stringify(c)), ctx(alice, bindingA)))).to.equal("bundle-invalid");
    });

    it("an NRAS GPU token presented as the platform token (and the reverse) is refused (claims-invalid)", async () => {
      const [[, platform], gpus] = (await nras.eat("ab".repeat(32))) as [[string, string], Record<string, string>];
      expect(await reasonOf(verifyNvidiaEat([["JWT", gpus["GPU-0"]!], gpus], nras.policy, new Date()))).to.equal("claims-invalid");
      expect(await reasonOf(verifyNvidiaEat([["JWT", platform], { "GPU-0": platform }], nras.policy, new Date()))).to.equal("claims-invalid");
    });
  });

  describe("AMD SEV-SNP: revocation and signature encoding", () => {
    const TCB: Tcb = { bl: 3, tee: 0, snp: 8, ucode: 115 };
    const chip = randomBytes(64);
    const raw = (c: { rawData: ArrayBuffer }) => new Uint8Array(c.rawData);
    let chain: SnpChain;
    let policy: SevSnpPolicy;
    let good: SevSnpEvidence;
    before(async () => {
      chain = await makeSnpChain();
      policy = { arks: [parseDer(Buffer.from(raw(chain.ark)), "ARK")] };
      const v = await chain.vcek(chip, TCB);
      good = { report: await snpReport({ reportData: Buffer.alloc(64, 1), chipId: chip, tcb: TCB }, v.key), vcek: raw(v.cert), ask: raw(chain.ask), ark: raw(chain.ark), crl: raw(await chain.crl([])) };
    });

    it("a revoked ASK with its CRL left out is refused unless the auditor opted out of revocation (crl-invalid)", async () => {
      const { crl: _crl, ...noCrl } = good;
      expect(await reasonOf(verifySevSnp(noCrl, policy, new Date()))).to.equal("crl-invalid");
      expect((await verifySevSnp(noCrl, { ...policy, requireCrl: false }, new Date())).reportData).to.equal(`0x${"01".repeat(64)}`);
      expect((await verifySevSnp(good, policy, new Date())).reportData).to.equal(`0x${"01".repeat(64)}`);
    });

    it("a platform on old firmware (its own old TCB reported as current) is refused below the auditor's minimum (tcb-invalid)", async () => {
      // reported = current, so the band was full; SPLs at the ABI offsets: bootloader 3, tee 0, snp 8, microcode 115
      expect((await verifySevSnp(good, { ...policy, minTcb: { bootloader: 3, snp: 8, microcode: 115 } }, new Date())).tcbCurrent).to.equal(true);
      expect(await reasonOf(verifySevSnp(good, { ...policy, minTcb: { snp: 9 } }, new Date()))).to.equal("tcb-invalid");
      expect(await reasonOf(verifySevSnp(good, { ...policy, minTcb: { microcode: 200 } }, new Date()))).to.equal("tcb-invalid");
    });

    it("an ASK CRL stapled from before, past its nextUpdate at the verification time, is refused (collateral-expired)", async () => {
      // the fixture's CRL runs from now - 1 day to now + 3 days; the auditor verifies 4 days later (chain head time)
      expect(await reasonOf(verifySevSnp(good, policy, new Date(Date.now() + 4 * 86_400_000)))).to.equal("collateral-expired");
    });

    it("a VCEK entry carrying PEM text after its DER, or BER-style trailing bytes, is refused (certificate-not-der)", async () => {
      // the two-readings attack on x5c, tried on the SNP chain: a decoy VCEK read one way, another read the other
      const other = await chain.vcek(randomBytes(64), TCB);
      const withPem = Buffer.concat([Buffer.from(good.vcek), Buffer.from(`\n${other.cert.toString("pem")}\n`)]);
      expect(await reasonOf(verifySevSnp({ ...good, vcek: withPem }, policy, new Date()))).to.equal("certificate-not-der");
      expect(await reasonOf(verifySevSnp({ ...good, ask: Buffer.concat([Buffer.from(good.ask), Buffer.from([0])]) }, policy, new Date()))).to.equal("certificate-not-der");
    });

    it("a report whose signature padding bytes were changed (same signature, other bytes) is refused (quote-invalid)", async () => {
      const bad = Buffer.from(good.report);
      bad[0x2a0 + 60]! ^= 1; // R is 48 bytes little-endian in a 72-byte field: bytes 48..71 must be zero
      expect(await reasonOf(verifySevSnp({ ...good, report: bad }, policy, new Date()))).to.equal("quote-invalid");
      const badS = Buffer.from(good.report);
      badS[0x2a0 + 72 + 50]! ^= 0x80;
      expect(await reasonOf(verifySevSnp({ ...good, report: badS }, policy, new Date()))).to.equal("quote-invalid");
    });
  });

  it("a tier upgrade from a claim: the bundle's format is the only tier input, and it needs that format's root (untrusted-root)", async () => {
    // an NRAS-shaped bundle verified by an auditor that trusts only SEV-SNP mints nothing; a TDX-only auditor likewise
    const bytes = await nvidiaBundle(nras, alice, bindingA);
    expect(await reasonOf(verifyEvidenceBundle(bytes, { ...ctx(alice, bindingA), trust: { intelTdx: {} } }))).to.equal("untrusted-root");
    // a token signed by a key outside the pinned JWKS with the pinned kid
    const rogue = await makeNras(nras.kid);
    expect(await reasonOf(verifyEvidenceBundle(await nvidiaBundle(rogue, alice, bindingA), ctx(alice, bindingA)))).to.equal("bad-signature");
    expect(keccak256(bytes)).to.match(/^0x/);
  });
});
