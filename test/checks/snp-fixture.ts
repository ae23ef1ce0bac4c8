/**
 * A TEST AMD SEV-SNP chain and reports that mirror the real shape (no real report + VCEK ships with any installed
 * package): ARK (RSA-4096, self-signed, RSASSA-PSS SHA-384) -> ASK (RSA-4096, RSASSA-PSS by the ARK) -> VCEK (P-384,
 * RSASSA-PSS by the ASK, AMD extensions hwID and bl/tee/snp/ucode SPLs), and 0x4A0-byte reports signed by the VCEK
 * (ECDSA P-384 SHA-384 over bytes 0..0x29F, R and S little-endian in 72-byte fields), laid out per AMD's SEV-SNP ABI.
 */
import { createSign, randomBytes, webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto as unknown as Crypto);
const PSS = { name: "RSA-PSS", hash: "SHA-384", saltLength: 48 } as RsaPssParams & { hash: string };
const RSA = { name: "RSA-PSS", hash: "SHA-384", publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 4096 } as const;
const P384 = { name: "ECDSA", namedCurve: "P-384" } as const;
const DAY = 86_400_000;

export type Tcb = { bl: number; tee: number; snp: number; ucode: number };
export type SnpChain = {
  ark: x509.X509Certificate;
  ask: x509.X509Certificate;
  arkKeys: CryptoKeyPair;
  askKeys: CryptoKeyPair;
  /** A VCEK for `chipId` at `tcb` (signed by `signer`, default the ASK). */
  vcek(chipId: Uint8Array, tcb: Tcb, signer?: { cert: x509.X509Certificate; keys: CryptoKeyPair }): Promise<{ cert: x509.X509Certificate; key: CryptoKey }>;
  /** An ASK CRL signed by `by` (default the ARK) listing `revoked` serials. */
  crl(revoked: string[], by?: CryptoKeyPair): Promise<x509.X509Crl>;
};

const der = (n: number) => new Uint8Array([0x02, 0x01, n]); // a DER INTEGER below 128

export async function makeSnpChain(product = "Milan", now = new Date()): Promise<SnpChain> {
  const arkKeys = (await webcrypto.subtle.generateKey(RSA, true, ["sign", "verify"])) as CryptoKeyPair;
  const askKeys = (await webcrypto.subtle.generateKey(RSA, true, ["sign", "verify"])) as CryptoKeyPair;
  const base = "O=Advanced Micro Devices, OU=Engineering, L=Santa Clara, ST=CA, C=US";
  const ca = [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true)];
  const validity = { notBefore: new Date(now.getTime() - 365 * DAY), notAfter: new Date(now.getTime() + 25 * 365 * DAY) };
  const ark = await x509.X509CertificateGenerator.createSelfSigned({ serialNumber: "01", name: `CN=ARK-${product}, ${base}`, keys: arkKeys, signingAlgorithm: PSS, extensions: ca, ...validity });
  const ask = await x509.X509CertificateGenerator.create({
    serialNumber: "02",
    subject: `CN=SEV-${product}, ${base}`,
    issuer: ark.subject,
    publicKey: askKeys.publicKey,
    signingKey: arkKeys.privateKey,
    signingAlgorithm: PSS,
    extensions: ca,
    ...validity,
  });
  let serial = 16;
  return {
    ark,
    ask,
    arkKeys,
    askKeys,
    async vcek(chipId, tcb, signer = { cert: ask, keys: askKeys }) {
      const kp = (await webcrypto.subtle.generateKey(P384, true, ["sign", "verify"])) as CryptoKeyPair;
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: (serial++).toString(16),
        subject: `CN=SEV-VCEK, ${base}`,
        issuer: signer.cert.subject,
        publicKey: kp.publicKey,
        signingKey: signer.keys.privateKey,
        signingAlgorithm: PSS,
        notBefore: new Date(now.getTime() - DAY),
        notAfter: new Date(now.getTime() + 7 * 365 * DAY),
        extensions: [
          new x509.Extension("1.3.6.1.4.1.3704.1.3.1", false, der(tcb.bl)),
          new x509.Extension("1.3.6.1.4.1.3704.1.3.2", false, der(tcb.tee)),
          new x509.Extension("1.3.6.1.4.1.3704.1.3.3", false, der(tcb.snp)),
          new x509.Extension("1.3.6.1.4.1.3704.1.3.8", false, der(tcb.ucode)),
          new x509.Extension("1.3.6.1.4.1.3704.1.4", false, Uint8Array.from(chipId)),
        ],
      });
      return { cert, key: kp.privateKey };
    },
    async crl(revoked, by = arkKeys) {
      return x509.X509CrlGenerator.create({
        issuer: ark.subject,
        thisUpdate: new Date(now.getTime() - DAY),
        nextUpdate: new Date(now.getTime() + 3 * DAY),
        entries: revoked.map((s) => ({ serialNumber: s, revocationDate: new Date(now.getTime() - DAY) })),
        signingKey: by.privateKey,
        signingAlgorithm: PSS,
      });
    },
  };
}

export type ReportFields = { reportData: Uint8Array; chipId: Uint8Array; tcb: Tcb; policy?: bigint; measurement?: Uint8Array; currentTcb?: Tcb; vmpl?: number };

const tcbBytes = (t: Tcb) => new Uint8Array([t.bl, t.tee, 0, 0, 0, 0, t.snp, t.ucode]);

/** A 0x4A0-byte report with `f` at the ABI's offsets, signed by `vcekKey`. */
export async function snpReport(f: ReportFields, vcekKey: CryptoKey): Promise<Buffer> {
  const b = Buffer.alloc(0x4a0);
  b.writeUInt32LE(2, 0x00); // VERSION
  b.writeUInt32LE(1, 0x04); // GUEST_SVN
  b.writeBigUInt64LE(f.policy ?? 0x30000n, 0x08); // POLICY: SMT allowed, reserved bit 17
  b.writeUInt32LE(f.vmpl ?? 0, 0x30); // VMPL
  b.writeUInt32LE(1, 0x34); // SIGNATURE_ALGO: ECDSA P-384 with SHA-384
  Buffer.from(tcbBytes(f.currentTcb ?? f.tcb)).copy(b, 0x38); // CURRENT_TCB
  b.writeUInt32LE(0, 0x48); // AUTHOR_KEY_EN 0, MASK_CHIP_KEY 0, SIGNING_KEY 0 (VCEK)
  Buffer.from(f.reportData).copy(b, 0x50);
  Buffer.from(f.measurement ?? randomBytes(48)).copy(b, 0x90);
  Buffer.from(tcbBytes(f.tcb)).copy(b, 0x180); // REPORTED_TCB
  Buffer.from(f.chipId).copy(b, 0x1a0);
  Buffer.from(tcbBytes(f.tcb)).copy(b, 0x1e0); // COMMITTED_TCB
  Buffer.from(tcbBytes(f.tcb)).copy(b, 0x1f0); // LAUNCH_TCB
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", vcekKey));
  const sig = createSign("sha384").update(b.subarray(0, 0x2a0)).sign({ key: pkcs8, format: "der", type: "pkcs8", dsaEncoding: "ieee-p1363" });
  Buffer.from(sig.subarray(0, 48)).reverse().copy(b, 0x2a0); // R, little-endian, in 72 bytes
  Buffer.from(sig.subarray(48, 96)).reverse().copy(b, 0x2a0 + 72); // S
  return b;
}
