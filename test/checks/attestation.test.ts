import { expect } from "chai";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { SignJWT } from "jose";
import {
  AttestationError,
  attestedBand,
  attestationStatement,
  bindingChallenge,
  createChallenge,
  EVIDENCE_KEY_PURPOSES,
  loadVendorRoot,
  parseAttestationPolicy,
  stakeBand,
  verifyAttestation,
  type AttestationPolicy,
  type AttestationReason,
  type Challenge,
  type TrustAnchor,
  type VendorRoot,
} from "../../verifier/src/checks/attestation/index.ts";
import { InputError } from "../../verifier/src/errors/index.ts";

// The test CA lives only here: a vendor root, an intermediate and a leaf that signs evidence tokens.
x509.cryptoProvider.set(webcrypto as unknown as Crypto);
const ES256 = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const ES384 = { name: "ECDSA", namedCurve: "P-384", hash: "SHA-384" } as const;
const DAY = 86_400_000;
const NOW = new Date("2026-06-01T12:00:00Z");

type KeyPair = CryptoKeyPair;
type Cert = { cert: x509.X509Certificate; keys: KeyPair };

async function keys(alg: typeof ES256 | typeof ES384 = ES256): Promise<KeyPair> {
  return (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as KeyPair;
}

let serial = 1;
async function issue(opts: {
  subject: string;
  issuer?: Cert;
  ca: boolean;
  pathLength?: number;
  notBefore?: Date;
  notAfter?: Date;
  alg?: typeof ES256 | typeof ES384;
  keyPair?: KeyPair;
  /** key usage flags; null: no key usage extension */
  ku?: number | null;
  eku?: string[];
  extra?: x509.Extension[];
}): Promise<Cert> {
  const kp = opts.keyPair ?? (await keys(opts.alg));
  const ku = opts.ku === undefined ? (opts.ca ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign : x509.KeyUsageFlags.digitalSignature) : opts.ku;
  const extensions: x509.Extension[] = [new x509.BasicConstraintsExtension(opts.ca, opts.pathLength, true)];
  if (ku !== null) extensions.push(new x509.KeyUsagesExtension(ku, true));
  const eku = opts.eku ?? (opts.ca ? undefined : [EVIDENCE_KEY_PURPOSES["accelerator-cc-report"]]);
  if (eku && eku.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(eku, false));
  extensions.push(...(opts.extra ?? []));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: (serial++).toString(16).padStart(2, "0"),
    subject: opts.subject,
    issuer: opts.issuer ? opts.issuer.cert.subject : opts.subject,
    notBefore: opts.notBefore ?? new Date(NOW.getTime() - 30 * DAY),
    notAfter: opts.notAfter ?? new Date(NOW.getTime() + 365 * DAY),
    signingAlgorithm: opts.issuer ? ES256 : (opts.alg ?? ES256),
    publicKey: kp.publicKey,
    signingKey: opts.issuer ? opts.issuer.keys.privateKey : kp.privateKey,
    extensions,
  });
  return { cert, keys: kp };
}

const b64 = (c: x509.X509Certificate) => Buffer.from(c.rawData).toString("base64");

const MEAS = { firmware: "ab".repeat(32), vbios: "cd".repeat(32) };

function goodClaims(challenge: Challenge): Record<string, unknown> {
  return {
    iss: "https://attest.vendor.test",
    eat_nonce: challenge.nonce,
    platform: "accelerator-cc",
    cc_mode: "on",
    debug: false,
    measurements: { ...MEAS, extra: "ef".repeat(32) },
    driver_version: "550.90.07",
    firmware_version: "96.00.9F.00.04".replace(/[A-F]/g, "1"),
    tcb_status: "up-to-date",
    gpu_count: 1,
    device_links_encrypted: false,
    partitioning: { mode: "none" },
  };
}

async function sign(claims: Record<string, unknown>, chain: x509.X509Certificate[], key: CryptoKey, alg = "ES256", iat = NOW, ttlSeconds = 600): Promise<string> {
  const t = Math.floor(iat.getTime() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg, typ: "eat+jwt", x5c: chain.map(b64) })
    .setIssuedAt(t)
    .setExpirationTime(t + ttlSeconds)
    .sign(key);
}

describe("checks/attestation: local verification of signed evidence against a configured vendor root", function () {
  let root: Cert, inter: Cert, leaf: Cert, otherRoot: Cert, enclaveRoot: Cert, enclaveInter: Cert;
  let vendorRoot: VendorRoot;
  let anchors: TrustAnchor[];
  let policy: AttestationPolicy;
  let challenge: Challenge;

  async function expectReason(p: Promise<unknown>, reason: AttestationReason): Promise<void> {
    try {
      await p;
    } catch (err) {
      expect(err, String(err)).to.be.instanceOf(AttestationError);
      expect(err).to.be.instanceOf(InputError);
      expect((err as AttestationError).reason).to.equal(reason);
      return;
    }
    expect.fail(`expected rejection with ${reason}`);
  }

  const verify = (token: string, over: Partial<{ root: VendorRoot; anchors: TrustAnchor[]; now: Date; challenge: Challenge; policy: AttestationPolicy }> = {}) => {
    const a = over.anchors ?? (over.root ? anchors.map((x) => (x.type === "accelerator-cc-report" ? { ...x, root: over.root! } : x)) : anchors);
    return verifyAttestation(token, { anchors: a, policy: over.policy ?? policy, challenge: over.challenge ?? challenge, now: over.now ?? NOW });
  };
  const good = (patch: Record<string, unknown> = {}) => sign({ ...goodClaims(challenge), ...patch }, [leaf.cert, inter.cert], leaf.keys.privateKey);

  before(async () => {
    root = await issue({ subject: "CN=Test Vendor Root", ca: true, alg: ES384 });
    inter = await issue({ subject: "CN=Test Vendor Attestation CA", issuer: root, ca: true, pathLength: 0 });
    leaf = await issue({ subject: "CN=Device 0001", issuer: inter, ca: false });
    otherRoot = await issue({ subject: "CN=Test Vendor Root", ca: true });
    vendorRoot = loadVendorRoot(root.cert.toString("pem"));
    // a second vendor, trusted only for device-enclave keys (tier 3)
    enclaveRoot = await issue({ subject: "CN=Test Enclave Vendor Root", ca: true });
    enclaveInter = await issue({ subject: "CN=Test Enclave Attestation CA", issuer: enclaveRoot, ca: true, pathLength: 0 });
    anchors = [
      { type: "accelerator-cc-report", root: vendorRoot },
      { type: "device-enclave", root: loadVendorRoot(enclaveRoot.cert.toString("pem")) },
    ];
    policy = parseAttestationPolicy({
      maxNonceAgeSeconds: 300,
      measurements: { firmware: [MEAS.firmware], vbios: ["00".repeat(32), MEAS.vbios.toUpperCase()] },
      minDriverVersion: "550.54.15",
      minFirmwareVersion: "96.0.0",
      recommendedDriverVersion: "550.90.0",
      recommendedFirmwareVersion: "96.0.5",
      allowedPartitioning: ["none", "mig:3g.40gb"],
    });
    challenge = createChallenge(new Date(NOW.getTime() - 60_000));
  });

  it("accepts good evidence: tier 1, band 100, evidence hash and expiry", async () => {
    const token = await good();
    const v = await verify(token);
    expect(v.tier).to.equal(1);
    expect(v.band).to.equal(100);
    expect(v.evidenceHash).to.match(/^0x[0-9a-f]{64}$/);
    expect(v.expiresAt).to.equal(BigInt(Math.floor(NOW.getTime() / 1000) + 600));
    // the root may also be included at the end of x5c
    const withRoot = await sign(goodClaims(challenge), [leaf.cert, inter.cert, root.cert], leaf.keys.privateKey);
    expect((await verify(withRoot)).tier).to.equal(1);
  });

  it("maps platforms to tiers and computes the band from the four factors", async () => {
    expect((await verify(await good({ platform: "cvm-accelerator" }))).band).to.equal(89);
    expect((await verify(await good({ platform: "device-enclave" }))).band).to.equal(69);
    const v = await verify(await good({ tcb_status: "out-of-date", partitioning: { mode: "mig", profile: "3g.40gb" } }));
    expect(v.tier).to.equal(1);
    expect(v.band).to.equal(95); // 90 + floor(10 * 2/4)
    expect((await verify(await good({ driver_version: "550.54.15" }))).band).to.equal(97); // 90 + floor(10 * 3/4)
    expect(attestedBand(2, { driver: false, firmware: false, tcb: false, exclusive: false })).to.equal(70);
    expect(stakeBand(0n, 100n)).to.equal(10);
    expect(stakeBand(50n, 100n)).to.equal(29);
    expect(stakeBand(500n, 100n)).to.equal(49);
  });

  it("rejects a chain from another root (wrong root)", async () => {
    await expectReason(verify(await good(), { root: loadVendorRoot(otherRoot.cert.toString("pem")) }), "untrusted-root");
    const rogueInter = await issue({ subject: "CN=Test Vendor Attestation CA", issuer: otherRoot, ca: true });
    const rogueLeaf = await issue({ subject: "CN=Device 0001", issuer: rogueInter, ca: false });
    await expectReason(verify(await sign(goodClaims(challenge), [rogueLeaf.cert, rogueInter.cert], rogueLeaf.keys.privateKey)), "untrusted-root");
  });

  it("rejects an expired and a not-yet-valid certificate", async () => {
    const old = await issue({ subject: "CN=Old", issuer: inter, ca: false, notAfter: new Date(NOW.getTime() - DAY) });
    await expectReason(verify(await sign(goodClaims(challenge), [old.cert, inter.cert], old.keys.privateKey)), "cert-expired");
    const future = await issue({ subject: "CN=Future", issuer: inter, ca: false, notBefore: new Date(NOW.getTime() + DAY) });
    await expectReason(verify(await sign(goodClaims(challenge), [future.cert, inter.cert], future.keys.privateKey)), "cert-not-yet-valid");
    // the whole chain expires with time
    await expectReason(verify(await good(), { now: new Date(NOW.getTime() + 400 * DAY) }), "cert-expired");
  });

  it("rejects a stale nonce and a nonce for another challenge", async () => {
    const token = await good();
    await expectReason(verify(token, { now: new Date(challenge.issuedAt.getTime() + 301_000) }), "nonce-stale");
    await expectReason(verify(token, { challenge: createChallenge(NOW) }), "nonce-mismatch");
  });

  it("rejects a bad signature (other key, edited payload) and a truncated token", async () => {
    const stranger = await keys();
    await expectReason(verify(await sign(goodClaims(challenge), [leaf.cert, inter.cert], stranger.privateKey)), "bad-signature");
    const token = await good();
    const [h, p, s] = token.split(".");
    const edited = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, "base64url").toString()), debug: false, gpu_count: 2 })).toString("base64url");
    await expectReason(verify(`${h}.${edited}.${s}`), "bad-signature");
    await expectReason(verify(token.slice(0, Math.floor(token.length / 2))), "malformed-token");
    await expectReason(verify(`${h}.${p}`), "malformed-token");
    await expectReason(verify("not a token"), "malformed-token");
    await expectReason(verify(`${h}.${p}.${s!.slice(0, 20)}`), "bad-signature");
  });

  it("rejects each claims-policy violation with its own reason", async () => {
    const cases: [Record<string, unknown>, AttestationReason][] = [
      [{ debug: true }, "debug-enabled"],
      [{ cc_mode: "off" }, "confidential-mode-off"],
      [{ cc_mode: "devtools" }, "confidential-mode-off"],
      [{ measurements: { ...MEAS, firmware: "00".repeat(32) } }, "measurement-mismatch"],
      [{ measurements: { firmware: MEAS.firmware } }, "measurement-mismatch"],
      [{ driver_version: "535.129.03" }, "driver-too-old"],
      [{ firmware_version: "95.99" }, "firmware-too-old"],
      [{ gpu_count: 8, device_links_encrypted: false }, "device-links-unencrypted"],
      [{ partitioning: { mode: "mig", profile: "1g.10gb" } }, "partitioning-not-allowed"],
      [{ platform: "quantum" }, "claims-invalid"],
      [{ gpu_count: undefined }, "claims-invalid"],
    ];
    for (const [patch, reason] of cases) await expectReason(verify(await good(patch)), reason);
    // eight GPUs with encrypted links are fine
    expect((await verify(await good({ gpu_count: 8, device_links_encrypted: true }))).tier).to.equal(1);
  });

  it("rejects an expired token, a disallowed algorithm and chain structure faults", async () => {
    await expectReason(verify(await sign(goodClaims(challenge), [leaf.cert, inter.cert], leaf.keys.privateKey, "ES256", new Date(NOW.getTime() - 3600_000), 600)), "token-expired");
    await expectReason(verify(await sign(goodClaims(challenge), [leaf.cert, inter.cert], leaf.keys.privateKey, "ES256", new Date(NOW.getTime() + 3600_000), 7200)), "token-not-yet-valid");
    // a token issued before the challenge cannot answer it (even with the right nonce)
    await expectReason(verify(await sign(goodClaims(challenge), [leaf.cert, inter.cert], leaf.keys.privateKey, "ES256", new Date(challenge.issuedAt.getTime() - 120_000), 7200)), "nonce-stale");
    const p384 = await issue({ subject: "CN=P384 device", issuer: inter, ca: false, alg: ES384 });
    const es384Token = await sign(goodClaims(challenge), [p384.cert, inter.cert], p384.keys.privateKey, "ES384");
    await expectReason(verify(es384Token, { policy: { ...policy, algorithms: ["ES256"] } }), "unsupported-algorithm");
    expect((await verify(es384Token)).tier).to.equal(1);
    // intermediate that did not sign the leaf
    const sibling = await issue({ subject: "CN=Test Vendor Attestation CA", issuer: root, ca: true });
    await expectReason(verify(await sign(goodClaims(challenge), [leaf.cert, sibling.cert], leaf.keys.privateKey)), "chain-broken");
    // an end-entity certificate used as an issuer
    const notCa = await issue({ subject: "CN=Not a CA", issuer: root, ca: false });
    const underNotCa = await issue({ subject: "CN=Device 2", issuer: notCa, ca: false });
    await expectReason(verify(await sign(goodClaims(challenge), [underNotCa.cert, notCa.cert], underNotCa.keys.privateKey)), "not-a-ca");
    // path length 0 on the intermediate forbids another CA below it
    const sub = await issue({ subject: "CN=Sub CA", issuer: inter, ca: true });
    const underSub = await issue({ subject: "CN=Device 3", issuer: sub, ca: false });
    await expectReason(verify(await sign(goodClaims(challenge), [underSub.cert, sub.cert, inter.cert], underSub.keys.privateKey)), "not-a-ca");
    // no chain, garbage chain
    const noChain = await new SignJWT(goodClaims(challenge)).setProtectedHeader({ alg: "ES256" }).setIssuedAt(Math.floor(NOW.getTime() / 1000)).setExpirationTime(Math.floor(NOW.getTime() / 1000) + 600).sign(leaf.keys.privateKey);
    await expectReason(verify(noChain), "missing-chain");
    const garbage = await new SignJWT(goodClaims(challenge)).setProtectedHeader({ alg: "ES256", x5c: ["AAAA"] }).setIssuedAt(Math.floor(NOW.getTime() / 1000)).setExpirationTime(Math.floor(NOW.getTime() / 1000) + 600).sign(leaf.keys.privateKey);
    await expectReason(verify(garbage), "certificate-not-der"); // 00 00 00: not a SEQUENCE
    const emptySeq = await new SignJWT(goodClaims(challenge)).setProtectedHeader({ alg: "ES256", x5c: ["MAA="] }).setIssuedAt(Math.floor(NOW.getTime() / 1000)).setExpirationTime(Math.floor(NOW.getTime() / 1000) + 600).sign(leaf.keys.privateKey);
    await expectReason(verify(emptySeq), "bad-certificate"); // 30 00: DER, but not a certificate
  });

  // one entry, two readings. node:crypto reads the PEM text appended to the DER bytes, @peculiar/x509
  // reads the DER prefix: the decoy (valid) passes the validity checks, the expired device key signs the token.
  it("rejects a DER entry carrying PEM text (the expired device certificate behind a valid decoy)", async () => {
    const expired = await issue({ subject: "CN=Expired device", issuer: inter, ca: false, notAfter: new Date(NOW.getTime() - DAY) });
    const entry = Buffer.concat([Buffer.from(leaf.cert.rawData), Buffer.from(`\n${expired.cert.toString("pem")}\n`)]).toString("base64");
    const t = Math.floor(NOW.getTime() / 1000);
    const token = await new SignJWT(goodClaims(challenge))
      .setProtectedHeader({ alg: "ES256", typ: "eat+jwt", x5c: [entry, b64(inter.cert)] })
      .setIssuedAt(t)
      .setExpirationTime(t + 600)
      .sign(expired.keys.privateKey);
    await expectReason(verify(token), "certificate-not-der");
    // trailing bytes of any kind, and a PEM entry where DER is required, are refused the same way
    const trailing = await sign(goodClaims(challenge), [leaf.cert, inter.cert], leaf.keys.privateKey);
    const [h, p, s] = trailing.split(".");
    const hdr = JSON.parse(Buffer.from(h!, "base64url").toString());
    for (const bad of [Buffer.concat([Buffer.from(leaf.cert.rawData), Buffer.from([0])]), Buffer.from(leaf.cert.toString("pem"))]) {
      const forged = Buffer.from(JSON.stringify({ ...hdr, x5c: [bad.toString("base64"), hdr.x5c[1]] })).toString("base64url");
      await expectReason(verify(`${forged}.${p}.${s}`), "certificate-not-der");
    }
  });

  it("checks key usage and end-entity rules per link", async () => {
    const token = (c: Cert, chain: Cert[]) => sign(goodClaims(challenge), [c.cert, ...chain.map((x) => x.cert)], c.keys.privateKey);
    // the leaf is an intermediate CA's own key: a CA key mints nothing, even with digitalSignature
    const caLeaf = await issue({ subject: "CN=CA as device", issuer: inter, ca: true, ku: x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, eku: [EVIDENCE_KEY_PURPOSES["accelerator-cc-report"]] });
    await expectReason(verify(await token(caLeaf, [inter])), "leaf-not-end-entity");
    // end entity (ca: false) that may still sign certificates
    const signer = await issue({ subject: "CN=Cert signer", issuer: inter, ca: false, ku: x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature });
    await expectReason(verify(await token(signer, [inter])), "leaf-not-end-entity");
    // a key-agreement-only key, and a leaf with no key usage at all
    const kex = await issue({ subject: "CN=Key agreement", issuer: inter, ca: false, ku: x509.KeyUsageFlags.keyAgreement });
    await expectReason(verify(await token(kex, [inter])), "leaf-key-usage");
    const noKu = await issue({ subject: "CN=No KU", issuer: inter, ca: false, ku: null });
    await expectReason(verify(await token(noKu, [inter])), "leaf-key-usage");
    // an intermediate with CA basic constraints but without keyCertSign, or without any key usage
    for (const ku of [x509.KeyUsageFlags.digitalSignature, null]) {
      const weak = await issue({ subject: "CN=Weak CA", issuer: root, ca: true, ku });
      const under = await issue({ subject: "CN=Device W", issuer: weak, ca: false });
      await expectReason(verify(await token(under, [weak])), "not-a-ca");
    }
    // an unknown critical extension on the leaf
    const odd = await issue({ subject: "CN=Odd", issuer: inter, ca: false, extra: [new x509.Extension("1.2.3.4.5", true, new Uint8Array([5, 0]))] });
    await expectReason(verify(await token(odd, [inter])), "bad-certificate");
  });

  // the tier comes from which evidence key verified, not from claims.platform
  it("takes the tier from the verified key's evidence type: a claim lowers it, never raises it", async () => {
    const enclaveKey = await issue({ subject: "CN=Phone enclave", issuer: enclaveInter, ca: false, eku: [EVIDENCE_KEY_PURPOSES["device-enclave"]] });
    const raise = await sign({ ...goodClaims(challenge), platform: "accelerator-cc" }, [enclaveKey.cert, enclaveInter.cert], enclaveKey.keys.privateKey);
    const v = await verify(raise);
    expect(v.tier, "an enclave key claiming accelerator-cc").to.equal(3);
    expect(v.evidenceType).to.equal("device-enclave");
    expect(v.band).to.equal(69);
    // the tier-1 key claiming a weaker platform is recorded at the weaker tier
    const lower = await verify(await good({ platform: "device-enclave" }));
    expect([lower.tier, lower.evidenceType]).to.deep.equal([3, "accelerator-cc-report"]);
  });

  it("mints nothing for a key that is not an evidence key of a configured type", async () => {
    const token = (c: Cert, chain: Cert[]) => sign(goodClaims(challenge), [c.cert, ...chain.map((x) => x.cert)], c.keys.privateKey);
    // a TLS server key under the same vendor root (no evidence purpose), and one with no EKU at all
    const tls = await issue({ subject: "CN=vendor.example", issuer: inter, ca: false, eku: ["1.3.6.1.5.5.7.3.1"] });
    await expectReason(verify(await token(tls, [inter])), "leaf-key-purpose");
    const bare = await issue({ subject: "CN=No EKU", issuer: inter, ca: false, eku: [] });
    await expectReason(verify(await token(bare, [inter])), "leaf-key-purpose");
    // one key claiming two evidence purposes is ambiguous
    const both = await issue({ subject: "CN=Both", issuer: inter, ca: false, eku: [EVIDENCE_KEY_PURPOSES["accelerator-cc-report"], EVIDENCE_KEY_PURPOSES["device-enclave"]] });
    await expectReason(verify(await token(both, [inter])), "leaf-key-purpose");
    // a tier-1 purpose under the root trusted only for enclaves
    const forged = await issue({ subject: "CN=Forged GPU", issuer: enclaveInter, ca: false });
    await expectReason(verify(await token(forged, [enclaveInter])), "untrusted-root");
    // a type with no anchor configured at all
    await expectReason(verify(await good(), { anchors: anchors.filter((a) => a.type !== "accelerator-cc-report") }), "untrusted-root");
    // an intermediate whose EKU constrains it to another purpose cannot issue tier-1 keys
    const narrow = await issue({ subject: "CN=Enclave-only CA", issuer: root, ca: true, eku: [EVIDENCE_KEY_PURPOSES["device-enclave"]] });
    const underNarrow = await issue({ subject: "CN=Device N", issuer: narrow, ca: false });
    await expectReason(verify(await token(underNarrow, [narrow])), "leaf-key-purpose");
  });

  // evidence bound to one provider's request; relay and replay
  it("binds evidence to the provider's request: relay and replay are rejected, the statement names the bound provider", async () => {
    const A = "0x00000000000000000000000000000000000000a1" as const;
    const B = "0x00000000000000000000000000000000000000b2" as const;
    const registry = "0x5FbDB2315678afecb367f032d93F642f64180aa3" as const;
    const blockhash = `0x${"17".repeat(32)}` as const;
    const forA = bindingChallenge({ provider: A, chainId: 31337n, registry, challenge: blockhash }, challenge.issuedAt);
    const forB = bindingChallenge({ provider: B, chainId: 31337n, registry, challenge: blockhash }, challenge.issuedAt);
    const token = await sign({ ...goodClaims(challenge), eat_nonce: forA.nonce }, [leaf.cert, inter.cert], leaf.keys.privateKey);
    const seen = new Set<string>();
    const v = await verifyAttestation(token, { anchors, policy, challenge: forA, now: NOW, seen });
    expect([v.tier, v.provider, v.binding]).to.deep.equal([1, A, forA.nonce]);
    // relay: A's evidence submitted for B, or for another chain or registry
    await expectReason(verifyAttestation(token, { anchors, policy, challenge: forB, now: NOW }), "binding-mismatch");
    const otherChain = bindingChallenge({ provider: A, chainId: 1n, registry, challenge: blockhash }, challenge.issuedAt);
    await expectReason(verifyAttestation(token, { anchors, policy, challenge: otherChain, now: NOW }), "binding-mismatch");
    // replay: the same token again, 200 s later, at the same verifier
    await expectReason(verifyAttestation(token, { anchors, policy, challenge: forA, now: new Date(NOW.getTime() + 200_000), seen }), "challenge-reused");
    // the statement names the bound provider and only for the request with that binding
    const att = attestationStatement(v, { requestId: 7n, provider: A, binding: forA.nonce as `0x${string}` }, 1_780_000_000n);
    expect([att.provider.toLowerCase(), att.requestId, att.tier, att.issuedAt]).to.deep.equal([A, 7n, 1, 1_780_000_000n]);
    expect(() => attestationStatement(v, { requestId: 8n, provider: B, binding: forB.nonce as `0x${string}` }, 1n)).to.throw(AttestationError).with.property("reason", "binding-mismatch");
    expect(() => attestationStatement(v, { requestId: 9n, provider: A, binding: otherChain.nonce as `0x${string}` }, 1n)).to.throw(AttestationError).with.property("reason", "binding-mismatch");
    // an unbound verdict signs nothing
    const unbound = await verify(await good());
    expect(() => attestationStatement(unbound, { requestId: 7n, provider: A, binding: forA.nonce as `0x${string}` }, 1n)).to.throw(AttestationError).with.property("reason", "binding-mismatch");
  });

  it("rejects the expired device certificate itself (cert-expired), whatever else is valid", async () => {
    const expired = await issue({ subject: "CN=Expired device", issuer: inter, ca: false, notAfter: new Date(NOW.getTime() - DAY) });
    await expectReason(verify(await sign(goodClaims(challenge), [expired.cert, inter.cert], expired.keys.privateKey)), "cert-expired");
  });

  it("rejects a bad policy and a vendor root that is not a CA as policy-invalid", async () => {
    expect(() => parseAttestationPolicy({ maxNonceAgeSeconds: 0 })).to.throw(AttestationError).with.property("reason", "policy-invalid");
    expect(() => parseAttestationPolicy({ maxNonceAgeSeconds: 60, measurements: {}, minDriverVersion: "1", minFirmwareVersion: "1" })).to.throw(AttestationError);
    expect(() => loadVendorRoot(leaf.cert.toString("pem"))).to.throw(AttestationError).with.property("reason", "policy-invalid");
    expect(() => loadVendorRoot("hello")).to.throw(AttestationError).with.property("reason", "policy-invalid");
  });
});
