/**
 * AMD SEV-SNP attestation reports, parsed and verified by hand (no installable package does it: @tinfoilsh/verifier's
 * dependencies are not in the registry). The layout is AMD's public ABI (SEV-SNP Firmware ABI spec, ATTESTATION_REPORT):
 * 0x4A0 bytes; POLICY at 0x08 (bit 19: debug allowed), SIGNATURE_ALGO at 0x34 (1: ECDSA P-384 with SHA-384), flags at 0x48
 * (bit 1 MASK_CHIP_KEY, bits 2..4 SIGNING_KEY: 0 = VCEK), REPORT_DATA 0x50 (64), MEASUREMENT 0x90 (48), CURRENT_TCB 0x38,
 * REPORTED_TCB 0x180 (8: bootloader, TEE, -, -, -, -, SNP, microcode SPLs), CHIP_ID 0x1A0 (64), SIGNATURE 0x2A0 (R and S,
 * 72 bytes each, little-endian) over bytes 0..0x29F.
 *
 * Chain: the VCEK (P-384, per chip and TCB) is signed by the ASK and the ASK by the ARK with RSASSA-PSS SHA-384; the ARK
 * is pinned (configuration: the PEM of AMD's ARK for the product line, e.g. Milan, Genoa). The VCEK's AMD extensions must
 * name this report: hwID (1.3.6.1.4.1.3704.1.4) = CHIP_ID and the SPLs blSPL/teeSPL/snpSPL/ucodeSPL (.3.1/.3.2/.3.3/.3.8)
 * = REPORTED_TCB, so a VCEK of another chip or TCB does not verify it.
 *
 * Revocation: AMD's KDS publishes an ARK-signed CRL of revoked ASKs; stapled (`crl`), it is verified (signed by the
 * ARK, within its dates) and the ASK must not be on it. It is mandatory unless the policy says `requireCrl: false`.
 * The auditor's own CRLs (`currentCrls`: what KDS publishes today, possibly newer than the verification time) are
 * checked too, each against the certificates its issuer (the ARK or the ASK) signed: anyone holding public revocation
 * data can so show that a statement's evidence no longer holds (attest/dispute.ts, "revoked since"). The report itself carries no
 * time, so the verdict expires at the earliest of the VCEK's notAfter, the CRL's nextUpdate and now + maxValiditySeconds
 * (short lifetimes: default 7 days).
 */
import { createPublicKey, verify as verifySignature } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { bytesToHex, type Hex } from "viem";
import { AttestationError } from "../errors.ts";
import { parseDer, type ParsedCert } from "../chain.ts";

export const SNP_REPORT_BYTES = 0x4a0;
const SIGNED_BYTES = 0x2a0;
const POLICY_DEBUG_BIT = 1n << 19n;
/** POLICY bit 18 (MIGRATE_MA): a migration agent may be associated with the guest (and so read its memory). */
const POLICY_MIGRATE_MA_BIT = 1n << 18n;
/** Default oldest stapled ASK CRL accepted (its thisUpdate), when the policy names none. */
export const DEFAULT_MAX_CRL_AGE_SECONDS = 2 * 86_400;

const OID = {
  blSPL: "1.3.6.1.4.1.3704.1.3.1",
  teeSPL: "1.3.6.1.4.1.3704.1.3.2",
  snpSPL: "1.3.6.1.4.1.3704.1.3.3",
  ucodeSPL: "1.3.6.1.4.1.3704.1.3.8",
  hwID: "1.3.6.1.4.1.3704.1.4",
} as const;

export type SevSnpPolicy = {
  /** The pinned AMD Root Keys (ARK certificates, PEM), one per product line trusted. */
  readonly arks: readonly ParsedCert[];
  /** Allowed launch measurements (48-byte hex); absent: any guest image. */
  readonly allowedMeasurements?: readonly string[];
  /**
   * Refuse a bundle without a stapled ASK CRL (default true). false turns revocation off: a provider whose ASK AMD
   * revoked simply leaves the CRL out.
   */
  readonly requireCrl?: boolean;
  /**
   * The lowest security patch levels accepted, per component of REPORTED_TCB (AMD publishes the fixed levels with each
   * security bulletin). Absent: DEFAULT_SNP_MIN_TCB (no all-zero, never-patched bootloader, SNP firmware or
   * microcode); the levels differ per product line, so composite evidence (tier 1) needs them stated in the trust file
   * (bundle.ts: requireImageMeasurements).
   */
  readonly minTcb?: { readonly bootloader?: number; readonly tee?: number; readonly snp?: number; readonly microcode?: number };
  /**
   * The oldest stapled ASK CRL accepted: now - thisUpdate at most this many seconds (default DEFAULT_MAX_CRL_AGE_SECONDS,
   * 2 days). Without it a provider staples the last CRL from before its ASK was revoked for as long as that CRL's
   * nextUpdate allows.
   */
  readonly maxCrlAgeSeconds?: number;
  /**
   * The highest VMPL the report may come from (default 0: the guest's most privileged level). A report requested at
   * VMPL 1..3 can come from a less privileged guest component under an SVSM/paravisor that sees more than it does.
   */
  readonly maxVmpl?: number;
  /**
   * CRLs the auditor holds (DER): today's public revocation data, e.g. AMD KDS's ARK-signed ASK CRL fetched now. Each
   * must be signed by the bundle's ARK or ASK; a certificate its signer issued (the ASK, resp. the VCEK) on it is
   * refused (cert-revoked). Its dates are not checked against the verification time: a dispute re-verifies at a past
   * statement's issuedAt with a CRL published after it, and a revocation is never undone. One signed by neither
   * (another product line's) is skipped.
   */
  readonly currentCrls?: readonly Uint8Array[];
  /** Accept a guest policy that allows a migration agent (POLICY bit 18). Default false. */
  readonly allowMigrationAgent?: boolean;
  /** The longest a verdict counts (the report carries no time). Default 7 days. */
  readonly maxValiditySeconds?: number;
};

/**
 * The minimum REPORTED_TCB without a configured one: every patchable component above level 0 (a level-0 bootloader,
 * SNP firmware or microcode is pre-release or never patched; the TEE SPL is 0 on current Milan parts, so it has no
 * default floor). Product-independent, so a floor, not a currency check: the tcb band factor still needs
 * REPORTED_TCB == CURRENT_TCB.
 */
export const DEFAULT_SNP_MIN_TCB = { bootloader: 1, tee: 0, snp: 1, microcode: 1 } as const;

export type SevSnpEvidence = { readonly report: Uint8Array; readonly vcek: Uint8Array; readonly ask: Uint8Array; readonly ark: Uint8Array; readonly crl?: Uint8Array };

export type SevSnpReport = {
  readonly version: number;
  readonly policy: bigint;
  /** The VMPL the report was requested from (0..3). */
  readonly vmpl: number;
  readonly signatureAlgo: number;
  readonly signingKey: number;
  readonly maskChipKey: boolean;
  readonly reportData: Hex;
  readonly measurement: Hex;
  readonly currentTcb: Uint8Array;
  readonly reportedTcb: Uint8Array;
  readonly chipId: Uint8Array;
};

export type SevSnpVerdict = { readonly evidenceType: "cvm-quote"; readonly reportData: Hex; readonly measurement: Hex; readonly chipId: Hex; readonly tcbCurrent: boolean; readonly expiresAt: number };

/** Parses the fixed 0x4A0-byte layout; throws AttestationError("quote-invalid"). */
export function parseSevSnpReport(b: Uint8Array): SevSnpReport {
  if (b.length !== SNP_REPORT_BYTES) throw new AttestationError("quote-invalid", `an SEV-SNP report is 0x4A0 bytes, got ${b.length}`);
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const flags = v.getUint32(0x48, true);
  return {
    version: v.getUint32(0x00, true),
    policy: v.getBigUint64(0x08, true),
    vmpl: v.getUint32(0x30, true),
    signatureAlgo: v.getUint32(0x34, true),
    signingKey: (flags >> 2) & 0x7,
    maskChipKey: (flags & 0x2) !== 0,
    reportData: bytesToHex(b.subarray(0x50, 0x90)),
    measurement: bytesToHex(b.subarray(0x90, 0xc0)),
    currentTcb: b.slice(0x38, 0x40),
    reportedTcb: b.slice(0x180, 0x188),
    chipId: b.slice(0x1a0, 0x1e0),
  };
}

/** The raw value of extension `oid`, or undefined. */
function extValue(c: ParsedCert, oid: string): Uint8Array | undefined {
  const e = c.cert.extensions.find((x) => x.type === oid);
  return e ? new Uint8Array(e.value) : undefined;
}

/** A DER INTEGER (02 len bytes) small enough for an SPL. */
function derSmallInt(v: Uint8Array | undefined): number | undefined {
  if (!v || v.length < 3 || v[0] !== 0x02 || v[1] !== v.length - 2 || v.length > 4) return undefined;
  let n = 0;
  for (const x of v.subarray(2)) n = n * 256 + x;
  return n;
}

async function signedBy(cert: ParsedCert, issuer: ParsedCert): Promise<boolean> {
  if (cert.cert.issuer !== issuer.cert.subject) return false;
  return cert.cert.verify({ publicKey: issuer.cert.publicKey, signatureOnly: true }).catch(() => false);
}

function checkValidity(c: ParsedCert, label: string, now: Date): void {
  if (now < c.cert.notBefore) throw new AttestationError("cert-not-yet-valid", `${label} is not valid before ${c.cert.notBefore.toISOString()}`);
  if (now > c.cert.notAfter) throw new AttestationError("cert-expired", `${label} expired at ${c.cert.notAfter.toISOString()}`);
}

const isPss = (c: ParsedCert) => (c.cert.signatureAlgorithm as { name?: string }).name === "RSA-PSS";

/** Verifies an SEV-SNP report and its VCEK <- ASK <- ARK chain at `now`; the caller checks the report data. */
export async function verifySevSnp(ev: SevSnpEvidence, policy: SevSnpPolicy, now: Date): Promise<SevSnpVerdict> {
  const r = parseSevSnpReport(ev.report);
  if (r.version < 2) throw new AttestationError("quote-invalid", `SEV-SNP report version ${r.version} (at least 2)`);
  if (r.signatureAlgo !== 1) throw new AttestationError("quote-invalid", `signature algorithm ${r.signatureAlgo} is not ECDSA P-384 SHA-384 (1)`);
  if (r.signingKey !== 0) throw new AttestationError("quote-invalid", `the report is signed by signing key ${r.signingKey} (0 = VCEK is supported)`);
  if (r.maskChipKey) throw new AttestationError("quote-invalid", "MASK_CHIP_KEY is set: no chip-bound signature");

  const ark = parseDer(Buffer.from(ev.ark), "ARK");
  const ask = parseDer(Buffer.from(ev.ask), "ASK");
  const vcek = parseDer(Buffer.from(ev.vcek), "VCEK");
  // INVARIANT: the chain ends at a pinned AMD root, by its exact bytes
  if (!policy.arks.some((a) => a.der.equals(ark.der))) throw new AttestationError("untrusted-root", `the ARK "${ark.cert.subject}" is not a pinned AMD root`);
  for (const [c, label] of [[ark, "ARK"], [ask, "ASK"], [vcek, "VCEK"]] as const) checkValidity(c, label, now);
  if (!(await signedBy(ark, ark)) || !isPss(ark)) throw new AttestationError("chain-broken", "the ARK is not self-signed with RSASSA-PSS");
  if (!(await signedBy(ask, ark)) || !isPss(ask)) throw new AttestationError("chain-broken", "the ASK is not signed by the ARK with RSASSA-PSS");
  if (!(await signedBy(vcek, ask)) || !isPss(vcek)) throw new AttestationError("chain-broken", "the VCEK is not signed by the ASK with RSASSA-PSS");
  for (const [c, label] of [[ark, "ARK"], [ask, "ASK"]] as const) {
    if (!c.cert.getExtension(x509.BasicConstraintsExtension)?.ca) throw new AttestationError("not-a-ca", `the ${label} is not a CA certificate`);
  }
  if (vcek.cert.getExtension(x509.BasicConstraintsExtension)?.ca) throw new AttestationError("leaf-not-end-entity", "the VCEK is a CA certificate");

  let crlNext: Date | undefined;
  if (ev.crl) {
    let crl: x509.X509Crl;
    try {
      crl = new x509.X509Crl(Buffer.from(ev.crl));
    } catch (err) {
      throw new AttestationError("crl-invalid", "the stapled ASK CRL is not a DER CRL", { cause: err });
    }
    if (crl.issuer !== ark.cert.subject || !(await crl.verify({ publicKey: ark.cert.publicKey }).catch(() => false))) {
      throw new AttestationError("crl-invalid", "the stapled ASK CRL is not signed by the ARK");
    }
    if (crl.nextUpdate === undefined || now < crl.thisUpdate || now > crl.nextUpdate) throw new AttestationError("collateral-expired", "the stapled ASK CRL is outside its validity window");
    const maxAge = policy.maxCrlAgeSeconds ?? DEFAULT_MAX_CRL_AGE_SECONDS;
    // INVARIANT: revocation news reaches a verdict within maxAge: an older (still unexpired) CRL is refused
    if (now.getTime() - crl.thisUpdate.getTime() > maxAge * 1000) {
      throw new AttestationError("collateral-expired", `the stapled ASK CRL was issued ${crl.thisUpdate.toISOString()}, more than ${maxAge} s before the verification time`);
    }
    if (crl.entries.some((e) => e.serialNumber.toLowerCase() === ask.cert.serialNumber.toLowerCase())) throw new AttestationError("cert-revoked", "the ASK is on the ARK's CRL");
    crlNext = crl.nextUpdate;
  } else if (policy.requireCrl ?? true) {
    // INVARIANT: revocation is off only where the auditor said so, never by the provider leaving the CRL out
    throw new AttestationError("crl-invalid", "no ASK CRL stapled (the policy requires one unless requireCrl is false)");
  }
  for (const [i, bytes] of (policy.currentCrls ?? []).entries()) {
    let crl: x509.X509Crl;
    try {
      crl = new x509.X509Crl(Buffer.from(bytes));
    } catch (err) {
      throw new AttestationError("policy-invalid", `the trust's current CRL #${i} is not a DER CRL`, { cause: err });
    }
    // NOTE: @peculiar/x509 parses the revoked entries of a CRL without nextUpdate as none (the optional field before
    // them confuses its schema): such a list would revoke nothing, so it is refused instead of read as empty
    if (crl.nextUpdate === undefined) throw new AttestationError("policy-invalid", `the trust's current CRL #${i} (issuer "${crl.issuer}") has no nextUpdate`);
    // INVARIANT: a CRL revokes only what its signer issued (the ARK's lists ASKs, the ASK's lists VCEKs), and counts
    // only under that signer's key: an unsigned list must not revoke a genuine chain
    for (const [issuer, subject, label] of [[ark, ask, "ASK"], [ask, vcek, "VCEK"]] as const) {
      if (crl.issuer !== issuer.cert.subject || !(await crl.verify({ publicKey: issuer.cert.publicKey }).catch(() => false))) continue;
      const hit = crl.entries.find((e) => e.serialNumber.toLowerCase() === subject.cert.serialNumber.toLowerCase());
      if (hit) throw new AttestationError("cert-revoked", `the ${label} (serial ${subject.cert.serialNumber}) is on the current CRL of ${crl.thisUpdate.toISOString()}, revoked ${hit.revocationDate.toISOString()}`);
    }
  }

  // INVARIANT: the VCEK is this chip's key at this TCB, not any VCEK under the ASK
  const hw = extValue(vcek, OID.hwID);
  const hwId = hw && hw.length === 66 && hw[0] === 0x04 && hw[1] === 0x40 ? hw.subarray(2) : hw;
  if (!hwId || Buffer.compare(Buffer.from(hwId), Buffer.from(r.chipId)) !== 0) throw new AttestationError("quote-invalid", "the VCEK's hwID is not the report's CHIP_ID");
  const spl = { blSPL: r.reportedTcb[0], teeSPL: r.reportedTcb[1], snpSPL: r.reportedTcb[6], ucodeSPL: r.reportedTcb[7] };
  for (const [name, want] of Object.entries(spl)) {
    const got = derSmallInt(extValue(vcek, OID[name as keyof typeof spl]));
    if (got !== want) throw new AttestationError("quote-invalid", `the VCEK's ${name} is ${got ?? "missing"}, the report's REPORTED_TCB says ${want}`);
  }

  // INVARIANT: the TCB the VCEK (and so AMD) vouches for is at least the auditor's minimum, component by component
  const min = policy.minTcb ?? DEFAULT_SNP_MIN_TCB;
  for (const [name, got] of [["bootloader", r.reportedTcb[0]!], ["tee", r.reportedTcb[1]!], ["snp", r.reportedTcb[6]!], ["microcode", r.reportedTcb[7]!]] as const) {
    const want = min[name];
    if (want !== undefined && got < want) throw new AttestationError("tcb-invalid", `REPORTED_TCB ${name} SPL ${got} is below the accepted ${want}`);
  }

  // signature: R and S little-endian in 72-byte fields; P-384 uses the low 48 bytes
  const sig = ev.report.subarray(SIGNED_BYTES, SIGNED_BYTES + 144);
  // INVARIANT: one byte string per signature: the 24 bytes above each 48-byte P-384 scalar are zero
  if (sig.subarray(48, 72).some((x) => x !== 0) || sig.subarray(120, 144).some((x) => x !== 0)) {
    throw new AttestationError("quote-invalid", "the report signature's R or S has nonzero bytes above its 48 P-384 bytes");
  }
  const be = (x: Uint8Array) => Buffer.from(x.subarray(0, 48)).reverse();
  const p1363 = Buffer.concat([be(sig.subarray(0, 72)), be(sig.subarray(72, 144))]);
  const key = createPublicKey({ key: Buffer.from(vcek.cert.publicKey.rawData), format: "der", type: "spki" });
  if (!verifySignature("sha384", ev.report.subarray(0, SIGNED_BYTES), { key, dsaEncoding: "ieee-p1363" }, p1363)) {
    throw new AttestationError("quote-invalid", "the report signature does not verify with the VCEK");
  }
  if ((r.policy & POLICY_DEBUG_BIT) !== 0n) throw new AttestationError("debug-enabled", "the guest policy allows debugging (POLICY bit 19)");
  // INVARIANT: the report speaks for the whole guest: requested at VMPL 0 (unless the auditor allows more) and no
  // migration agent that could carry the guest's memory elsewhere
  if (r.vmpl > (policy.maxVmpl ?? 0)) throw new AttestationError("guest-privilege", `the report was requested at VMPL ${r.vmpl} (accepted: up to ${policy.maxVmpl ?? 0})`);
  if ((r.policy & POLICY_MIGRATE_MA_BIT) !== 0n && policy.allowMigrationAgent !== true) {
    throw new AttestationError("guest-privilege", "the guest policy allows a migration agent (POLICY bit 18, MIGRATE_MA)");
  }
  if (policy.allowedMeasurements && !policy.allowedMeasurements.some((m) => m.toLowerCase().replace(/^0x/, "") === r.measurement.slice(2))) {
    throw new AttestationError("measurement-mismatch", `MEASUREMENT ${r.measurement} is not on the allow-list`);
  }
  const ceiling = Math.floor(now.getTime() / 1000) + (policy.maxValiditySeconds ?? 7 * 86_400);
  const dates = [ceiling, Math.floor(vcek.cert.notAfter.getTime() / 1000), ...(crlNext ? [Math.floor(crlNext.getTime() / 1000)] : [])];
  return {
    evidenceType: "cvm-quote",
    reportData: r.reportData,
    measurement: r.measurement,
    chipId: bytesToHex(r.chipId),
    tcbCurrent: Buffer.compare(Buffer.from(r.reportedTcb), Buffer.from(r.currentTcb)) === 0,
    expiresAt: Math.min(...dates),
  };
}
