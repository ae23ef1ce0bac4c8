/**
 * Verification time per evidence type (docs/checks.md "Cost"), contenders interleaved round by round:
 *   intel-tdx         the REAL TDX quote + PCS collateral of test/checks/vendor-evidence (dcap-qvl + our CRL checks),
 *                     verified at a fixed time inside the collateral's window
 *   nvidia-eat x1/x8  detached EAT bundles with 1 and 8 GPU tokens under a test JWKS (NRAS's shape, ES384)
 *   pouw-eat          the project's EAT profile: ES256 JWT with a 3-certificate x5c chain under a test CA
 *   amd-sev-snp       a 0x4A0-byte report + VCEK <- ASK <- ARK (RSA-4096 PSS) under a TEST chain of the real shape
 *   bundle nvidia x1  the whole evidence bundle path (JSON, session key authorization + possession, nonce, EAT)
 * Then the sybil-committee rows: what one forged tier costs 2 attacker auditors of 12 (fees until a quorum is drawn,
 * plus the signers' bonds an upheld statement dispute takes) against the stake it saves (attest/forgery.ts).
 * Wall-clock ms per verification (median and p90 over rounds). Upper bounds on a shared, loaded machine.
 * Run: node bench/attestation.ts [--rounds N]   (writes bench/results/attestation.json)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { SignJWT } from "jose";
import { keccak256 } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  EVIDENCE_KEY_PURPOSES,
  loadVendorRoot,
  parseAttestationPolicy,
  verifyAttestation,
  verifyEvidenceBundle,
  verifyNvidiaEat,
  verifySevSnp,
  verifyTdxQuote,
  parseDer,
} from "../verifier/src/checks/attestation/index.ts";
import { forgedTierCost } from "../verifier/src/attest/forgery.ts";
import { makeNras, nvidiaBundle } from "../test/checks/nras-fixture.ts";
import { makeSnpChain, snpReport } from "../test/checks/snp-fixture.ts";

const arg = process.argv.indexOf("--rounds");
const ROUNDS = arg > 0 ? Number(process.argv[arg + 1]) : 30;

const dir = join(import.meta.dirname, "..", "test", "checks", "vendor-evidence", "intel-tdx");
const QUOTE = Buffer.from(readFileSync(join(dir, "quote.hex"), "utf8").trim(), "hex");
const COLLATERAL = JSON.parse(readFileSync(join(dir, "collateral.json"), "utf8"));
const TDX_AT = new Date("2025-09-15T12:00:00Z");

const nras = await makeNras();
const now = new Date();
const eat1 = await nras.eat("ab".repeat(32));
const eat8 = await nras.eat("ab".repeat(32), { gpus: Array.from({ length: 8 }, () => ({})) });
const provider = privateKeyToAccount(`0x${"a1".repeat(32)}`);
const binding = keccak256("0xaa");
const bundle = await nvidiaBundle(nras, provider, binding);

// pouw-eat: root -> intermediate -> leaf (ES256), the test CA shape of test/checks/attestation.test.ts
x509.cryptoProvider.set(webcrypto as unknown as Crypto);
const ES256 = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const gen = () => webcrypto.subtle.generateKey(ES256, true, ["sign", "verify"]) as Promise<CryptoKeyPair>;
const [rk, ik, lk] = [await gen(), await gen(), await gen()];
const day = 86_400_000;
const mk = (subject: string, issuer: string, pub: CryptoKey, signer: CryptoKey, ca: boolean, serial: string) =>
  x509.X509CertificateGenerator.create({
    serialNumber: serial,
    subject,
    issuer,
    notBefore: new Date(now.getTime() - day),
    notAfter: new Date(now.getTime() + 30 * day),
    signingAlgorithm: ES256,
    publicKey: pub,
    signingKey: signer,
    extensions: [
      new x509.BasicConstraintsExtension(ca, undefined, true),
      new x509.KeyUsagesExtension(ca ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign : x509.KeyUsageFlags.digitalSignature, true),
      ...(ca ? [] : [new x509.ExtendedKeyUsageExtension([EVIDENCE_KEY_PURPOSES["accelerator-cc-report"]], false)]),
    ],
  });
const root = await mk("CN=bench root", "CN=bench root", rk.publicKey, rk.privateKey, true, "01");
const inter = await mk("CN=bench inter", "CN=bench root", ik.publicKey, rk.privateKey, true, "02");
const leaf = await mk("CN=bench leaf", "CN=bench inter", lk.publicKey, ik.privateKey, false, "03");
const anchors = [{ type: "accelerator-cc-report" as const, root: loadVendorRoot(root.toString("pem")) }];
const policy = parseAttestationPolicy({ maxNonceAgeSeconds: 3600, measurements: { firmware: ["ab".repeat(32)] }, minDriverVersion: "535.0", minFirmwareVersion: "96.0" });
const challenge = { nonce: "bench-nonce-0123456789abcdef", issuedAt: new Date(now.getTime() - 1000) };
const t = Math.floor(now.getTime() / 1000);
const token = await new SignJWT({
  iss: "https://attest.vendor.test",
  eat_nonce: challenge.nonce,
  platform: "accelerator-cc",
  cc_mode: "on",
  debug: false,
  measurements: { firmware: "ab".repeat(32) },
  driver_version: "550.90.07",
  firmware_version: "96.0.4",
  tcb_status: "up-to-date",
  gpu_count: 1,
  device_links_encrypted: false,
  partitioning: { mode: "none" },
})
  .setProtectedHeader({ alg: "ES256", typ: "eat+jwt", x5c: [leaf, inter].map((c) => Buffer.from(c.rawData).toString("base64")) })
  .setIssuedAt(t)
  .setExpirationTime(t + 600)
  .sign(lk.privateKey);

const snp = await makeSnpChain();
const TCB = { bl: 3, tee: 0, snp: 8, ucode: 115 };
const chip = new Uint8Array(64).fill(7);
const vcek = await snp.vcek(chip, TCB);
const snpEvidence = { report: await snpReport({ reportData: new Uint8Array(64), chipId: chip, tcb: TCB }, vcek.key), vcek: new Uint8Array(vcek.cert.rawData), ask: new Uint8Array(snp.ask.rawData), ark: new Uint8Array(snp.ark.rawData), crl: new Uint8Array((await snp.crl([])).rawData) };
const snpPolicy = { arks: [parseDer(Buffer.from(snp.ark.rawData), "ARK")] };

const contenders: Record<string, () => Promise<unknown>> = {
  "intel-tdx (real quote + collateral)": () => verifyTdxQuote(QUOTE, COLLATERAL, TDX_AT),
  "nvidia-eat x1 GPU": () => verifyNvidiaEat(eat1, nras.policy, now),
  "nvidia-eat x8 GPUs": () => verifyNvidiaEat(eat8, nras.policy, now),
  "pouw-eat (x5c chain of 3)": () => verifyAttestation(token, { anchors, policy, challenge, now }),
  "amd-sev-snp (test chain, RSA-4096 PSS)": () => verifySevSnp(snpEvidence, snpPolicy, now),
  "bundle nvidia x1 (session key + nonce)": () => verifyEvidenceBundle(bundle, { trust: { nvidia: nras.policy }, request: { provider: provider.address, binding }, challengeIssuedAt: now, now }),
};

for (const f of Object.values(contenders)) for (let i = 0; i < 2; i++) await f(); // warm-up (module loads, key imports)
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, f] of Object.entries(contenders)) {
    const t0 = performance.now();
    await f();
    samples[name]!.push(performance.now() - t0);
  }
}
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const rows = Object.entries(samples).map(([name, xs]) => ({ evidence: name, medianMs: +q(xs, 0.5).toFixed(2), p90Ms: +q(xs, 0.9).toFixed(2), rounds: xs.length }));
console.log("evidence type                              median ms    p90 ms");
for (const r of rows) console.log(`${r.evidence.padEnd(42)} ${String(r.medianMs).padStart(9)} ${String(r.p90Ms).padStart(9)}`);
console.log("(wall clock on a shared, loaded machine: upper bounds)");
// The sybil-committee attack (docs/checks.md, "Forging a tier"): cost of one forged tier against the stake it saves,
// with the deployment defaults (committee 3, quorum 2, request fee 1 token, auditor bond 100 tokens).
const sybil = [1, 0.5, 0].flatMap((disputeChance) =>
  ([1, 2] as const).map((tier) => {
    const r = forgedTierCost({ eligible: 12, attacker: 2, committee: 3, quorum: 2, requestFee: 1, bond: 100, disputeChance, tier });
    return { attack: `sybil committee 2 of 12, tier ${tier}, dispute chance ${disputeChance}`, pPerRequest: +r.p.toFixed(4), feeCost: +r.feeCost.toFixed(2), forfeit: r.forfeit, cost: +r.cost.toFixed(2), breakEvenStake: +r.breakEvenStake.toFixed(2) };
  }),
);
console.log("\nsybil committee (2 of 12 eligible, committee 3, quorum 2, fee 1, bond 100; tokens)");
console.log("attack                                              p/request  fees  forfeit   cost  saves less than this stake");
for (const r of sybil) console.log(`${r.attack.padEnd(52)} ${String(r.pPerRequest).padStart(8)} ${String(r.feeCost).padStart(6)} ${String(r.forfeit).padStart(7)} ${String(r.cost).padStart(7)} ${String(r.breakEvenStake).padStart(9)}`);
writeFileSync(
  join(import.meta.dirname, "results", "attestation.json"),
  JSON.stringify({ bench: "attestation", date: new Date().toISOString(), node: process.version, rounds: ROUNDS, note: "wall-clock ms per verification, interleaved; shared loaded machine: upper bounds", rows, sybil }, null, 2) + "\n",
);
