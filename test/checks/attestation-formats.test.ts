/**
 * Real evidence formats and the evidence bundle:
 *  - Intel TDX: a REAL quote and REAL Intel PCS collateral (test/checks/vendor-evidence/intel-tdx, from Phala-Network/
 *    dcap-qvl's public test vectors), verified offline at a fixed time against the pinned Intel SGX root; tampering,
 *    stale collateral and swapped CRLs are refused by name (the CRL checks are ours: @phala/dcap-qvl skips them).
 *  - NVIDIA: detached EAT bundles of NRAS's shape signed by a TEST JWKS key (no real NRAS token ships anywhere we can
 *    read offline): kid pinning, submod digests, verdict claims, hexadecimal VBIOS versions.
 *  - The bundle: nonce = evidenceNonce(binding, session key), the provider's authorization of the key, relay and
 *    replay attempts.
 */
import { expect } from "chai";
import { reasonOf } from "./attestation-reason.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createHash, webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { keccak256, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  checkTdxTcbStatus,
  checkJwsUniqueKeys,
  compareHexVersions,
  DEFAULT_REFUSED_TDX_TCB_STATUSES,
  evidenceNonce,
  INTEL_SGX_ROOT_CA_SHA256,
  parseDer,
  tdxQuoteLength,
  verifyEvidenceBundle,
  verifyNvidiaEat,
  verifyTdxQuote,
  type AttestationReason,
  type EvidenceTrust,
} from "../../verifier/src/checks/attestation/index.ts";
import { GOOD_GPU_CLAIMS, makeNras, newSessionKey, nvidiaBundle, sessionProof, type Nras } from "./nras-fixture.ts";

const dir = join(import.meta.dirname, "vendor-evidence", "intel-tdx");
const QUOTE = Buffer.from(readFileSync(join(dir, "quote.hex"), "utf8").trim(), "hex");
const COLLATERAL = JSON.parse(readFileSync(join(dir, "collateral.json"), "utf8")) as Record<string, string>;
/** Inside every validity window of the sample collateral (TCB info 2025-09-02T07:41:59Z .. 2025-10-02T07:41:59Z). */
const AT = new Date("2025-09-15T12:00:00Z");

describe("checks/attestation formats: Intel TDX (real quote + collateral), NVIDIA detached EAT, evidence bundles", function () {
  this.timeout(60_000);

  describe("Intel TDX quote (real vendor artifacts, verified at a fixed time)", () => {
    it("refuses OutOfDate and ConfigurationNeeded platforms by default (tcb-out-of-date); the real UpToDate sample passes", async () => {
      // the real quote is UpToDate, and no OutOfDate quote with Intel-signed collateral is available offline: the rule
      // verifyTdxQuote applies to dcap-qvl's status is checked here on the status names themselves
      expect(DEFAULT_REFUSED_TDX_TCB_STATUSES).to.include.members(["OutOfDate", "ConfigurationNeeded", "OutOfDateConfigurationNeeded"]);
      for (const s of ["OutOfDate", "ConfigurationNeeded", "OutOfDateConfigurationNeeded", "ConfigurationAndSWHardeningNeeded"]) {
        expect(await reasonOf(Promise.resolve().then(() => checkTdxTcbStatus(s, {})))).to.equal("tcb-out-of-date");
      }
      expect(() => checkTdxTcbStatus("UpToDate", {})).to.not.throw();
      expect(() => checkTdxTcbStatus("SWHardeningNeeded", {})).to.not.throw();
      expect(() => checkTdxTcbStatus("OutOfDate", { refusedTcbStatuses: [] })).to.not.throw(); // the auditor's explicit choice
      expect((await verifyTdxQuote(QUOTE, COLLATERAL, AT, { refusedTcbStatuses: ["UpToDate"] }).catch((e: { reason?: string }) => e.reason))).to.equal("tcb-out-of-date");
    });

    it("verifies the real quote against the real collateral and the pinned Intel root", async () => {
      const v = await verifyTdxQuote(QUOTE, COLLATERAL, AT);
      expect(v.tcbStatus).to.equal("UpToDate");
      expect(v.evidenceType).to.equal("cvm-quote");
      // independent expectation: TD report fields at their offsets in the quote (48-byte header; MRTD at +136, report data at +520)
      expect(v.mrTd).to.equal(`0x${QUOTE.subarray(48 + 136, 48 + 184).toString("hex")}`);
      expect(v.reportData).to.equal(`0x${QUOTE.subarray(48 + 520, 48 + 584).toString("hex")}`);
      // the earliest expiry is the PCK CRL's nextUpdate (UTCTime 251002070351Z in the CRL bytes)
      expect(v.expiresAt).to.equal(Date.parse("2025-10-02T07:03:51Z") / 1000);
      expect(INTEL_SGX_ROOT_CA_SHA256).to.have.length(64);
      expect(v.pckKeyHash).to.match(/^0x[0-9a-f]{64}$/);
    });

    it("refuses a quote with one flipped byte of report data (quote-invalid)", async () => {
      const bad = Buffer.from(QUOTE);
      bad[48 + 520]! ^= 1;
      expect(await reasonOf(verifyTdxQuote(bad, COLLATERAL, AT))).to.equal("quote-invalid");
    });

    it("refuses collateral outside its validity window (collateral-expired), before and after", async () => {
      expect(await reasonOf(verifyTdxQuote(QUOTE, COLLATERAL, new Date("2025-10-03T00:00:00Z")))).to.equal("collateral-expired");
      expect(await reasonOf(verifyTdxQuote(QUOTE, COLLATERAL, new Date("2025-09-01T00:00:00Z")))).to.equal("collateral-expired");
    });

    it("refuses a stapled PCK CRL that is garbage or another CA's (crl-invalid), which @phala/dcap-qvl alone accepts", async () => {
      const lib = await import("@phala/dcap-qvl");
      const garbage = { ...COLLATERAL, pck_crl: "3000" };
      // the library on its own: revocation silently off
      expect(lib.verify(QUOTE, garbage as never, AT.getTime() / 1000).status).to.equal("UpToDate");
      expect(await reasonOf(verifyTdxQuote(QUOTE, garbage, AT))).to.equal("crl-invalid");
      expect(await reasonOf(verifyTdxQuote(QUOTE, { ...COLLATERAL, pck_crl: COLLATERAL.root_ca_crl! }, AT))).to.equal("crl-invalid");
      // a CRL whose signature bytes were altered
      const crl = Buffer.from(COLLATERAL.pck_crl!, "hex");
      crl[crl.length - 3]! ^= 1;
      expect(await reasonOf(verifyTdxQuote(QUOTE, { ...COLLATERAL, pck_crl: crl.toString("hex") }, AT))).to.equal("crl-invalid");
    });

    it("refuses collateral whose TCB info was edited (collateral-invalid)", async () => {
      const tcb = COLLATERAL.tcb_info!.replace('"tcbEvaluationDataNumber":17', '"tcbEvaluationDataNumber":18');
      expect(await reasonOf(verifyTdxQuote(QUOTE, { ...COLLATERAL, tcb_info: tcb }, AT))).to.equal("collateral-invalid");
      expect(await reasonOf(verifyTdxQuote(QUOTE, { ...COLLATERAL, tcb_info: undefined }, AT))).to.equal("collateral-invalid");
    });

    it("refuses an MRTD off the allow-list (measurement-mismatch)", async () => {
      expect(await reasonOf(verifyTdxQuote(QUOTE, COLLATERAL, AT, { allowedMrTd: ["00".repeat(48)] }))).to.equal("measurement-mismatch");
    });

    it("in a bundle, the real quote binds nothing of ours: binding-mismatch (its report data is not our nonce)", async () => {
      const provider = privateKeyToAccount(`0x${"11".repeat(32)}`);
      const binding = keccak256("0x01");
      const bundle = Buffer.from(JSON.stringify({ version: 1, ...(await sessionProof(provider, newSessionKey(), binding)), evidence: { format: "intel-tdx", quote: QUOTE.toString("hex"), collateral: COLLATERAL } }));
      const ctx = { trust: { intelTdx: {} }, request: { provider: provider.address, binding }, challengeIssuedAt: AT, now: AT };
      expect(await reasonOf(verifyEvidenceBundle(bundle, ctx))).to.equal("binding-mismatch");
      expect(await reasonOf(verifyEvidenceBundle(bundle, { ...ctx, trust: {} }))).to.equal("untrusted-root");
    });
  });

  describe("required image measurements: RTMRs", () => {
    it("reads RTMR0..3 at their offsets; an allow-list with the quote's tuple passes, any other tuple is measurement-mismatch", async () => {
      // independent expectation: RTMR i at 48 + 328 + 48 i in the TD report of the real quote
      const rtmrs = [0, 1, 2, 3].map((i) => `0x${QUOTE.subarray(48 + 328 + 48 * i, 48 + 376 + 48 * i).toString("hex")}`);
      const v = await verifyTdxQuote(QUOTE, COLLATERAL, AT, { allowedRtmrs: [rtmrs] });
      expect(v.rtmrs).to.deep.equal(rtmrs);
      const other = [...rtmrs];
      other[3] = `0x${"00".repeat(48)}`;
      expect(await reasonOf(verifyTdxQuote(QUOTE, COLLATERAL, AT, { allowedRtmrs: [other] }))).to.equal("measurement-mismatch");
      expect((await verifyTdxQuote(QUOTE, COLLATERAL, AT, { allowedRtmrs: [other, rtmrs.map((r) => r.toUpperCase().replace("0X", "0x"))] })).rtmrs).to.deep.equal(rtmrs);
    });
  });

  describe("parser hygiene: one reading of the signed bytes", () => {
    it("a TDX quote's length is what its fields state; zero padding after it passes (the real quote has 70 bytes), any other byte is refused (quote-trailing-bytes)", async () => {
      // independent expectation: the v4 quote's auth data size at 48 + 584 in the real bytes, plus the fixed parts
      expect(QUOTE.readUInt16LE(0)).to.equal(4);
      const length = 48 + 584 + 4 + QUOTE.readUInt32LE(48 + 584);
      expect(tdxQuoteLength(QUOTE)).to.equal(length).and.to.equal(4936);
      expect(QUOTE.length - length).to.equal(70);
      expect(QUOTE.subarray(length).every((x) => x === 0)).to.equal(true);
      expect((await verifyTdxQuote(Buffer.concat([QUOTE, Buffer.alloc(8)]), COLLATERAL, AT)).tcbStatus).to.equal("UpToDate");
      expect(await reasonOf(verifyTdxQuote(Buffer.concat([QUOTE, Buffer.from([1])]), COLLATERAL, AT))).to.equal("quote-trailing-bytes");
      const smuggled = Buffer.from(QUOTE);
      smuggled[length + 10] = 0xab; // inside the padding: the signed quote is untouched
      expect(await reasonOf(verifyTdxQuote(smuggled, COLLATERAL, AT))).to.equal("quote-trailing-bytes");
    });

    it("a certificate with a negative serial number is refused (negative-serial); the same certificate with a positive one parses", async () => {
      x509.cryptoProvider.set(webcrypto as unknown as Crypto);
      const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
      const kp = (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as CryptoKeyPair;
      const make = (serialNumber: string) =>
        x509.X509CertificateGenerator.createSelfSigned({ serialNumber, name: "CN=serial test", keys: kp, signingAlgorithm: alg, notBefore: new Date("2025-01-01"), notAfter: new Date("2030-01-01") });
      // the generator encodes serials as positive integers: write the negative one into the DER (parseDer checks the
      // encoding, not the signature: chain.ts verifies that later)
      const positive = Buffer.from((await make("7f01")).rawData);
      const at = positive.indexOf(Buffer.from([0x02, 0x02, 0x7f, 0x01]));
      expect(at).to.be.greaterThan(0);
      const negative = Buffer.from(positive);
      negative[at + 2] = 0xff; // two's complement: the high bit set makes the INTEGER negative
      expect(await reasonOf(Promise.resolve().then(() => parseDer(negative, "test cert")))).to.equal("negative-serial");
      expect(parseDer(Buffer.from((await make("7f01")).rawData), "test cert").cert.serialNumber).to.equal("7f01");
    });

    it("a signed token that repeats a claim is refused (duplicate-key), in an NVIDIA GPU token and in the header", async () => {
      const nras = await makeNras();
      const nonce = "ab".repeat(32);
      const good = (await nras.eat(nonce)) as [[string, string], Record<string, string>];
      const t = Math.floor(Date.now() / 1000);
      const gpuText = (dbg: string) =>
        `{"dbgstat":"enabled",${JSON.stringify({ ...GOOD_GPU_CLAIMS, ueid: "1", eat_nonce: nonce, iss: "https://nras.attestation.nvidia.com", iat: t, nbf: t, exp: t + 600 }).slice(1, -1).replace('"dbgstat":"disabled"', `"dbgstat":"${dbg}"`)}}`;
      // JSON.parse keeps the last "dbgstat" (disabled): without the check this token would pass as a non-debug GPU
      const dupGpu = await nras.signRaw(gpuText("disabled"));
      expect((JSON.parse(Buffer.from(dupGpu.split(".")[1]!, "base64url").toString()) as { dbgstat: string }).dbgstat).to.equal("disabled");
      const platform = await nras.sign({ sub: "NVIDIA-PLATFORM-ATTESTATION", "x-nvidia-ver": "2.0", "x-nvidia-overall-att-result": true, eat_nonce: nonce, submods: { "GPU-0": ["DIGEST", ["SHA256", createHash("sha256").update(dupGpu).digest("hex")]] } });
      expect(await reasonOf(verifyNvidiaEat([["JWT", platform], { "GPU-0": dupGpu }], nras.policy, new Date()))).to.equal("duplicate-key");
      // control: the same construction without the repeated claim verifies
      const plain = JSON.stringify({ ...GOOD_GPU_CLAIMS, ueid: "1", eat_nonce: nonce, iss: "https://nras.attestation.nvidia.com", iat: t, nbf: t, exp: t + 600 });
      const okGpu = await nras.signRaw(plain);
      const okPlatform = await nras.sign({ sub: "NVIDIA-PLATFORM-ATTESTATION", "x-nvidia-ver": "2.0", "x-nvidia-overall-att-result": true, eat_nonce: nonce, submods: { "GPU-0": ["DIGEST", ["SHA256", createHash("sha256").update(okGpu).digest("hex")]] } });
      expect((await verifyNvidiaEat([["JWT", okPlatform], { "GPU-0": okGpu }], nras.policy, new Date())).gpus).to.have.length(1);
      expect(good[0][1]).to.be.a("string");
      // a repeated header key ("alg" twice) in an otherwise valid compact JWS
      const header = Buffer.from('{"alg":"none","alg":"ES384","kid":"nras-test-1"}').toString("base64url");
      expect(() => checkJwsUniqueKeys(`${header}.${Buffer.from("{}").toString("base64url")}.sig`, "token")).to.throw(/duplicate-key: token header repeats the key "alg"/);
      expect(() => checkJwsUniqueKeys(good[0][1], "platform token")).to.not.throw();
    });
  });

  describe("NVIDIA detached EAT (test JWKS of NRAS's shape)", () => {
    let nras: Nras;
    const NONCE = "ab".repeat(32);
    before(async () => {
      nras = await makeNras();
    });

    it("compares hexadecimal VBIOS versions (96.00.9F.00.04 > 96.00.5E.00.00, < 96.00.A0.00.00)", () => {
      expect(compareHexVersions("96.00.9F.00.04", "96.00.5E.00.00")).to.be.greaterThan(0);
      expect(compareHexVersions("96.00.9F.00.04", "96.00.A0.00.00")).to.be.lessThan(0);
      expect(compareHexVersions("96.00.9F.00.04", "96.00.9f.00.04")).to.equal(0);
    });

    it("verifies a good bundle: nonce, GPU versions, factors and the earliest exp", async () => {
      const v = await verifyNvidiaEat(await nras.eat(NONCE, { gpus: [{}, { "x-nvidia-gpu-driver-version": "545.1" }], ttlSeconds: 600 }), nras.policy, new Date());
      expect(v.nonce).to.equal(`0x${NONCE}`);
      expect(v.gpus.map((g) => g.vbios)).to.deep.equal(["96.00.9F.00.04", "96.00.9F.00.04"]);
      expect(v.factors).to.deep.equal({ driver: false, firmware: true }); // GPU-1's driver is below the recommended 550
      expect(v.expiresAt - Math.floor(Date.now() / 1000)).to.be.within(590, 601);
    });

    const cases: [string, (n: Nras) => Promise<unknown>, AttestationReason][] = [
      ["a bundle without GPU tokens", async (n) => [["JWT", await n.sign({ eat_nonce: NONCE })], {}], "bundle-invalid"],
      ["overall result false", (n) => n.eat(NONCE, { platform: { "x-nvidia-overall-att-result": false } }), "gpu-evidence-failed"],
      ["measurements not matched", (n) => n.eat(NONCE, { gpus: [{ measres: "fail" }] }), "measurement-mismatch"],
      ["debug enabled", (n) => n.eat(NONCE, { gpus: [{ dbgstat: "enabled" }] }), "debug-enabled"],
      ["secure boot off", (n) => n.eat(NONCE, { gpus: [{ secboot: false }] }), "gpu-evidence-failed"],
      ["a VBIOS below the hexadecimal minimum", (n) => n.eat(NONCE, { gpus: [{ "x-nvidia-gpu-vbios-version": "96.00.4A.00.01" }] }), "firmware-too-old"],
      ["an old driver", (n) => n.eat(NONCE, { gpus: [{ "x-nvidia-gpu-driver-version": "470.1" }] }), "driver-too-old"],
      ["a GPU token with another nonce", (n) => n.eat(NONCE, { gpus: [{ eat_nonce: "cd".repeat(32) }] }), "binding-mismatch"],
      ["an expired bundle", (n) => n.eat(NONCE, { iat: new Date(Date.now() - 7_200_000), ttlSeconds: 600 }), "token-expired"],
    ];
    for (const [name, make, reason] of cases) {
      it(`refuses ${name} (${reason})`, async () => {
        expect(await reasonOf(verifyNvidiaEat(await make(nras), nras.policy, new Date()))).to.equal(reason);
      });
    }

    it("refuses a platform token signed by an unpinned key (key-unknown) and a GPU token swapped in (claims-invalid)", async () => {
      const rogue = await makeNras("nras-test-1"); // same kid, another key
      const [[, platform], gpus] = (await rogue.eat(NONCE)) as [[string, string], Record<string, string>];
      expect(await reasonOf(verifyNvidiaEat([["JWT", platform], gpus], nras.policy, new Date()))).to.equal("bad-signature");
      const other = await makeNras("nras-test-2");
      expect(await reasonOf(verifyNvidiaEat(await other.eat(NONCE), nras.policy, new Date()))).to.equal("key-unknown");
      const [[, p1], g1] = (await nras.eat(NONCE)) as [[string, string], Record<string, string>];
      const [, g2] = (await nras.eat(NONCE, { gpus: [{ "x-nvidia-gpu-driver-version": "999.0" }] })) as [unknown, Record<string, string>];
      expect(g1["GPU-0"]).to.not.equal(g2["GPU-0"]);
      expect(await reasonOf(verifyNvidiaEat([["JWT", p1], g2], nras.policy, new Date()))).to.equal("claims-invalid");
    });
  });

  describe("evidence bundles: session key, relay, replay", () => {
    let nras: Nras;
    let trust: EvidenceTrust;
    const alice = privateKeyToAccount(`0x${"a1".repeat(32)}`);
    const bob = privateKeyToAccount(`0x${"b2".repeat(32)}`);
    const bindingA = keccak256("0xaa") as Hex;
    const bindingB = keccak256("0xbb") as Hex;
    // the challenge is issued when these tests start (not when Mocha loads the file: a full run loads it minutes earlier,
    // and tokens made later would then lie in the verifier's future); the verification time is each call's own
    let issued: Date;
    const ctx = (provider: typeof alice, binding: Hex, seen?: Set<string>) => ({ trust, request: { provider: provider.address, binding }, challengeIssuedAt: issued, now: new Date(), seen });
    before(async () => {
      issued = new Date();
      nras = await makeNras();
      trust = { nvidia: nras.policy };
    });

    it("gives tier 2 (GPU evidence alone: below composite evidence) to a bundle whose nonce commits to the request binding and the provider's session key", async () => {
      const key = newSessionKey();
      const bytes = await nvidiaBundle(nras, alice, bindingA, { sessionKey: key });
      const v = await verifyEvidenceBundle(bytes, ctx(alice, bindingA));
      expect([v.tier, v.band, v.evidenceType, v.format]).to.deep.equal([2, 89, "accelerator-cc-report", "nvidia-eat"]);
      expect([v.provider, v.sessionKey, v.binding, v.evidenceHash]).to.deep.equal([alice.address, key.address, bindingA, keccak256(bytes)]);
      expect(v.deviceIds).to.have.length(1);
      expect(v.deviceIds[0]).to.match(/^nvidia-ueid:\d+$/);
    });

    it("relay: Alice's bundle submitted for Bob's request is refused (binding-mismatch)", async () => {
      expect(await reasonOf(verifyEvidenceBundle(await nvidiaBundle(nras, alice, bindingA), ctx(bob, bindingB)))).to.equal("binding-mismatch");
    });

    it("relay: Bob re-signs the session key fields around Alice's evidence; the nonce still names Alice's binding (binding-mismatch)", async () => {
      const key = newSessionKey();
      const alices = JSON.parse((await nvidiaBundle(nras, alice, bindingA, { sessionKey: key })).toString()) as Record<string, unknown>;
      const forged = Buffer.from(JSON.stringify({ ...alices, ...(await sessionProof(bob, key, bindingB)) }));
      expect(await reasonOf(verifyEvidenceBundle(forged, ctx(bob, bindingB)))).to.equal("binding-mismatch");
    });

    it("a session key authorized by someone else, or a possession proof by another key, is refused (session-key-unauthorized)", async () => {
      const key = newSessionKey();
      const good = JSON.parse((await nvidiaBundle(nras, bob, bindingB, { sessionKey: key })).toString()) as Record<string, unknown>;
      const byAlice = await sessionProof(alice, key, bindingB); // Alice signs a key for Bob's binding
      expect(await reasonOf(verifyEvidenceBundle(Buffer.from(JSON.stringify({ ...good, authorization: byAlice.authorization })), ctx(bob, bindingB)))).to.equal("session-key-unauthorized");
      const notHeld = await sessionProof(bob, newSessionKey(), bindingB);
      expect(await reasonOf(verifyEvidenceBundle(Buffer.from(JSON.stringify({ ...good, possession: notHeld.possession })), ctx(bob, bindingB)))).to.equal("session-key-unauthorized");
      // a nonce for the binding alone (no session key) does not verify either
      const bare = await nras.eat(bindingB.slice(2));
      expect(await reasonOf(verifyEvidenceBundle(Buffer.from(JSON.stringify({ ...good, evidence: { format: "nvidia-eat", eat: bare } })), ctx(bob, bindingB)))).to.equal("binding-mismatch");
      expect(evidenceNonce(bindingB, key.address)).to.not.equal(bindingB);
    });

    it("replay: the same bundle twice at one verifier is refused (challenge-reused); malformed bundles are bundle-invalid", async () => {
      const seen = new Set<string>();
      const bytes = await nvidiaBundle(nras, alice, bindingA);
      await verifyEvidenceBundle(bytes, ctx(alice, bindingA, seen));
      expect(await reasonOf(verifyEvidenceBundle(bytes, ctx(alice, bindingA, seen)))).to.equal("challenge-reused");
      expect(await reasonOf(verifyEvidenceBundle(Buffer.from("not json"), ctx(alice, bindingA)))).to.equal("bundle-invalid");
      expect(await reasonOf(verifyEvidenceBundle(Buffer.from(JSON.stringify({ version: 1, evidence: { format: "amd-sev-snp" } })), ctx(alice, bindingA)))).to.equal("bundle-invalid");
    });
  });
});
