/**
 * Intel TDX quotes (v4/v5, ECDSA-256 attestation key), verified offline with @phala/dcap-qvl against Intel's SGX root CA
 * (pinned here by its SHA-256, checked against the one the package ships) and collateral stapled to the evidence
 * (TCB info, QE identity, their issuer chains, the root CA CRL and the PCK CA CRL, as Intel's PCS / a PCCS serves them).
 * Whoever staples the collateral, Intel signed it; what a stapler could still do is staple stale or foreign CRLs, so:
 *
 * IMPORTANT: @phala/dcap-qvl 0.3.9 matches certificate serials against the CRLs but never checks a CRL's signature, its
 * issuer or its validity window, and skips a CRL it cannot parse (utils.js checkCrlRevocation: "Ignore CRL parse
 * errors"): garbage in `pck_crl` turns revocation off. checkCrls below verifies both CRLs first (signed by the pinned
 * root / by the PCK CA that issued the quote's PCK certificate, which itself chains to the pinned root; thisUpdate <= now
 * <= nextUpdate), then dcap-qvl verifies the quote: PCK chain, QE report signature and identity, the quote signature
 * over header + TD report, TCB level from the TCB info (Revoked refused), TD attributes (debug refused).
 *
 * Short lifetimes: the verdict expires at the earliest of the TCB info's and QE identity's nextUpdate, both CRLs'
 * nextUpdate and the PCK chain's notAfter, so a record never outlives the revocation data it was checked against.
 */
import { createHash } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { z } from "zod";
import { bytesToHex, type Hex } from "viem";
import { AttestationError, type AttestationReason } from "../errors.ts";
import { parseDer, type ParsedCert } from "../chain.ts";

/** SHA-256 of the DER of "Intel SGX Root CA" (valid 2018-05-21 .. 2049-12-31), the root of every PCK and TCB chain. */
export const INTEL_SGX_ROOT_CA_SHA256 = "44a0196b2b99f889b8e149e95b807a350e7424964399e885a7cbb8ccfab674d3";

export const TdxCollateralSchema = z
  .object({
    pck_crl_issuer_chain: z.string().min(1),
    root_ca_crl: z.string().regex(/^[0-9a-fA-F]+$/, "hex DER"),
    pck_crl: z.string().regex(/^[0-9a-fA-F]+$/, "hex DER"),
    tcb_info_issuer_chain: z.string().min(1),
    tcb_info: z.string().min(1),
    tcb_info_signature: z.string().regex(/^[0-9a-fA-F]{128}$/, "64-byte hex signature"),
    qe_identity_issuer_chain: z.string().min(1),
    qe_identity: z.string().min(1),
    qe_identity_signature: z.string().regex(/^[0-9a-fA-F]{128}$/, "64-byte hex signature"),
  })
  .strict();
export type TdxCollateral = z.output<typeof TdxCollateralSchema>;

export type TdxPolicy = {
  /** Allowed MRTD values (48-byte hex); absent: any TD image (then the tier says "a TDX VM", not "this VM image"). */
  readonly allowedMrTd?: readonly string[];
  /**
   * Allowed runtime measurement registers: each entry is one accepted [RTMR0, RTMR1, RTMR2, RTMR3] (48-byte hex each:
   * firmware configuration, kernel and command line, application). Absent: any runtime (then the TD image is only the
   * MRTD's initial contents).
   */
  readonly allowedRtmrs?: readonly (readonly string[])[];
  /**
   * The oldest TCB evaluation (tcbEvaluationDataNumber of the TCB info and the QE identity) accepted. Intel keeps an
   * older evaluation signed and inside its 30-day window after a TCB recovery, so without this a provider staples the
   * collateral in which its unpatched platform was still UpToDate. Absent: any evaluation inside its window.
   */
  readonly minTcbEvaluationDataNumber?: number;
  /**
   * TCB statuses (dcap-qvl's names) refused outright; default DEFAULT_REFUSED_TDX_TCB_STATUSES. An OutOfDate platform
   * has a published, unpatched advisory; ConfigurationNeeded means a BIOS setting the advisory needs is off. [] accepts
   * every status a valid quote can have (Revoked always fails).
   */
  readonly refusedTcbStatuses?: readonly string[];
};

/** The TCB statuses a TDX quote is refused with unless the auditor's policy says otherwise. */
export const DEFAULT_REFUSED_TDX_TCB_STATUSES: readonly string[] = ["OutOfDate", "OutOfDateConfigurationNeeded", "ConfigurationNeeded", "ConfigurationAndSWHardeningNeeded"];

/** Throws tcb-out-of-date when `status` is one `policy` refuses (default DEFAULT_REFUSED_TDX_TCB_STATUSES). */
export function checkTdxTcbStatus(status: string, policy: Pick<TdxPolicy, "refusedTcbStatuses">): void {
  const refused = policy.refusedTcbStatuses ?? DEFAULT_REFUSED_TDX_TCB_STATUSES;
  // INVARIANT: a platform with a known unpatched advisory gets no attested tier unless the auditor accepts its status
  if (refused.includes(status)) throw new AttestationError("tcb-out-of-date", `the platform's TCB status is ${status} (refused: ${refused.join(", ")})`);
}

export type TdxVerdict = {
  readonly evidenceType: "cvm-quote";
  /** The 64 report-data bytes of the TD report. */
  readonly reportData: Hex;
  /** Intel's TCB status of the platform (dcap-qvl), e.g. "UpToDate", "OutOfDate", "SWHardeningNeeded". */
  readonly tcbStatus: string;
  readonly advisoryIds: readonly string[];
  readonly mrTd: Hex;
  /** RTMR0..RTMR3 of the TD report. */
  readonly rtmrs: readonly Hex[];
  /** SHA-256 of the PCK certificate's public key: one per platform AND TCB level, so not a device identity. */
  readonly pckKeyHash: Hex;
  /**
   * The platform's PPID (16 bytes, in the PCK certificate's SGX extension, OID 1.2.840.113741.1.13.1.1): the device
   * identity. The PCE derives a PCK key for any TCB level at or below the platform's own, so one platform can sign
   * quotes under several PCK keys and certificates, all naming one PPID.
   */
  readonly ppid: Hex;
  /** Unix seconds: the earliest expiry of the collateral and chain it was verified against. */
  readonly expiresAt: number;
};

type Dcap = typeof import("@phala/dcap-qvl");
let dcap: Promise<Dcap> | undefined;
/** Loaded on first use: the CLI's other commands never pay for it. */
const loadDcap = (): Promise<Dcap> => (dcap ??= import("@phala/dcap-qvl").then((m) => ((m as unknown as { default?: Dcap }).default ?? m) as Dcap));

/**
 * @phala/dcap-qvl's own PEM reader (utils.extractCerts): a block counts only when its body is base64 characters and line
 * breaks. IMPORTANT: the PCK chain sits in the quote's certification data, which the quote signature does not cover, so
 * a provider can put anything there; every block must be read the same way by the library and by us.
 */
const DCAP_PEM = /-----BEGIN CERTIFICATE-----\r?\n?([A-Za-z0-9+/=\r\n]+)\r?\n?-----END CERTIFICATE-----/g;

function pemChain(text: string, label: string, reason: AttestationReason = "collateral-invalid"): ParsedCert[] {
  const blocks = [...text.matchAll(DCAP_PEM)];
  if (blocks.length === 0) throw new AttestationError(reason, `${label} holds no PEM certificate`);
  // INVARIANT: one reading of the chain: a block the library would skip (a decoy read first by a looser reader) is refused
  const begins = text.split("-----BEGIN CERTIFICATE-----").length - 1;
  if (begins !== blocks.length) throw new AttestationError(reason, `${label} has ${begins} PEM blocks, ${blocks.length} of them well-formed (a block of other characters)`);
  return blocks.map((b, i) => {
    const body = b[1]!.replace(/\r?\n/g, "");
    const der = Buffer.from(body, "base64");
    if (der.toString("base64") !== body) throw new AttestationError(reason, `${label}[${i}] is not canonical base64`);
    return parseDer(der, `${label}[${i}]`);
  });
}

async function signedBy(cert: ParsedCert, issuer: ParsedCert): Promise<boolean> {
  if (cert.cert.issuer !== issuer.cert.subject) return false;
  return cert.cert.verify({ publicKey: issuer.cert.publicKey, signatureOnly: true }).catch(() => false);
}

function checkTime(what: string, from: Date, until: Date | undefined, now: Date): void {
  if (now < from) throw new AttestationError("collateral-expired", `${what} is not valid before ${from.toISOString()}`);
  if (until === undefined) throw new AttestationError("crl-invalid", `${what} has no nextUpdate`);
  if (now > until) throw new AttestationError("collateral-expired", `${what} expired at ${until.toISOString()}`);
}

async function checkCrl(hex: string, issuer: ParsedCert, what: string, now: Date): Promise<{ crl: x509.X509Crl; nextUpdate: Date }> {
  let crl: x509.X509Crl;
  try {
    crl = new x509.X509Crl(Buffer.from(hex, "hex"));
  } catch (err) {
    throw new AttestationError("crl-invalid", `${what} is not a DER CRL`, { cause: err });
  }
  // INVARIANT: a CRL counts only when its CA signed it: a stale, foreign or forged list must not turn revocation off
  if (crl.issuer !== issuer.cert.subject) throw new AttestationError("crl-invalid", `${what} is issued by "${crl.issuer}", not by "${issuer.cert.subject}"`);
  const ok = await crl.verify({ publicKey: issuer.cert.publicKey }).catch(() => false);
  if (!ok) throw new AttestationError("crl-invalid", `${what} is not signed by ${issuer.cert.subject}`);
  checkTime(what, crl.thisUpdate, crl.nextUpdate, now);
  return { crl, nextUpdate: crl.nextUpdate! };
}

const isRevoked = (crl: x509.X509Crl, c: ParsedCert) => crl.entries.some((e) => e.serialNumber.toLowerCase() === c.cert.serialNumber.toLowerCase());

/** dcap-qvl reports failures as message text only; each maps to the reason a caller can act on. */
function reasonOf(message: string): AttestationReason {
  if (/revoked/i.test(message) && !/TCB status/.test(message)) return "cert-revoked";
  if (/TCBInfo expired|QE Identity expired|issue date is in the future/.test(message)) return "collateral-expired";
  if (/Certificate is expired or not yet valid/.test(message)) return "cert-expired";
  if (/TCB status is invalid|No matching TCB level/.test(message)) return "tcb-invalid";
  if (/Debug mode/.test(message)) return "debug-enabled";
  if (/tcb_info|qe_identity|TcbInfo|QeIdentity|QE Identity|Fmspc mismatch|non-TDX TCB info|non-SGX TCB info|QE MRSIGNER|QE ISVPRODID/.test(message)) return "collateral-invalid";
  return "quote-invalid";
}

/**
 * The byte length of a TDX quote (v4, or v5 with its body size) as its own fields state it: the 48-byte header, the
 * TD report (584 bytes in v4; v5: a 2-byte body type, a 4-byte body size and the body), a 4-byte little-endian auth
 * data size and the auth data. Call on a quote Quote.parse accepted (the fields are in range).
 */
export function tdxQuoteLength(quote: Uint8Array): number {
  const b = Buffer.from(quote.buffer, quote.byteOffset, quote.byteLength);
  const version = b.readUInt16LE(0);
  let at = 48;
  if (version === 5) at += 6 + b.readUInt32LE(50);
  else at += 584;
  return at + 4 + b.readUInt32LE(at);
}

/**
 * Verifies a TDX quote at `now` against its stapled collateral; throws AttestationError with the reason. The caller
 * checks what the report data must commit to (bundle.ts).
 */
export async function verifyTdxQuote(quote: Uint8Array, collateralRaw: unknown, now: Date, policy: TdxPolicy = {}): Promise<TdxVerdict> {
  const parsed = TdxCollateralSchema.safeParse(collateralRaw);
  if (!parsed.success) throw new AttestationError("collateral-invalid", "TDX collateral does not match the PCS collateral shape", { details: z.prettifyError(parsed.error) });
  const collateral = parsed.data;
  const lib = await loadDcap();
  const rootDer = Buffer.from(lib.constants.TRUSTED_ROOT_CA_DER);
  // INVARIANT: the one trusted Intel root is the pinned one, whatever a package update ships
  if (createHash("sha256").update(rootDer).digest("hex") !== INTEL_SGX_ROOT_CA_SHA256) {
    throw new AttestationError("policy-invalid", "the Intel SGX root CA shipped by @phala/dcap-qvl is not the pinned one");
  }
  const root = parseDer(rootDer, "Intel SGX Root CA");

  let q: InstanceType<Dcap["Quote"]>;
  try {
    q = lib.Quote.parse(quote);
  } catch (err) {
    throw new AttestationError("quote-invalid", "the TDX quote does not parse", { cause: err });
  }
  if (q.header.teeType !== lib.constants.TEE_TYPE_TDX) throw new AttestationError("quote-invalid", `the quote is not a TDX quote (TEE type 0x${q.header.teeType.toString(16)})`);
  const length = tdxQuoteLength(quote);
  // INVARIANT: the bytes the evidence hash fixes are the quote and nothing else: what follows it may only be the zero
  // padding of the quote buffer (real quotes come padded: the sample has 70 zero bytes), never data a second reader sees
  const tail = quote.subarray(length);
  const nonZero = tail.findIndex((x) => x !== 0);
  if (nonZero >= 0) throw new AttestationError("quote-trailing-bytes", `${tail.length} bytes follow the ${length}-byte TDX quote, not all zero padding (byte ${nonZero} of them is 0x${tail[nonZero]!.toString(16).padStart(2, "0")})`);
  const pck = (() => {
    try {
      // utf-8: what the library decodes the certification data as
      return pemChain(Buffer.from(q.authData.intoV3().certificationData.body).toString("utf8"), "quote PCK chain", "quote-invalid");
    } catch (err) {
      if (err instanceof AttestationError && err.reason === "quote-invalid") throw err;
      throw new AttestationError("quote-invalid", "the quote's PCK certificate chain does not parse", { cause: err });
    }
  })();

  // INVARIANT: the provider does not pick an older TCB evaluation than the auditor accepts (stale but unexpired collateral)
  if (policy.minTcbEvaluationDataNumber !== undefined) {
    for (const [what, text] of [["TCB info", collateral.tcb_info], ["QE identity", collateral.qe_identity]] as const) {
      let n: unknown;
      try {
        n = (JSON.parse(text) as { tcbEvaluationDataNumber?: unknown }).tcbEvaluationDataNumber;
      } catch (err) {
        throw new AttestationError("collateral-invalid", `the ${what} is not JSON`, { cause: err });
      }
      if (typeof n !== "number" || n < policy.minTcbEvaluationDataNumber) {
        throw new AttestationError("collateral-expired", `the ${what}'s TCB evaluation ${String(n)} is older than the accepted ${policy.minTcbEvaluationDataNumber}`);
      }
    }
  }

  // Revocation data first (the library does not check it): root CRL by the root, PCK CRL by the quote's PCK CA.
  const rootCrl = await checkCrl(collateral.root_ca_crl, root, "root CA CRL", now);
  const [pckCa] = pemChain(collateral.pck_crl_issuer_chain, "pck_crl_issuer_chain");
  if (!(await signedBy(pckCa!, root))) throw new AttestationError("crl-invalid", "the PCK CRL issuer is not signed by the Intel SGX root CA");
  if (isRevoked(rootCrl.crl, pckCa!)) throw new AttestationError("cert-revoked", `${pckCa!.cert.subject} is on the root CA CRL`);
  if (pck[0]!.cert.issuer !== pckCa!.cert.subject) {
    throw new AttestationError("crl-invalid", `the PCK CRL is for "${pckCa!.cert.subject}", the quote's PCK certificate is issued by "${pck[0]!.cert.issuer}"`);
  }
  const pckCrl = await checkCrl(collateral.pck_crl, pckCa!, "PCK CRL", now);

  let report: ReturnType<InstanceType<Dcap["QuoteVerifier"]>["verify"]>;
  try {
    report = lib.QuoteVerifier.newWithRootCa(rootDer).verify(quote, collateral, Math.floor(now.getTime() / 1000));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new AttestationError(reasonOf(message), `TDX quote rejected: ${message}`, { cause: err });
  }
  let ppid: Hex;
  try {
    const u = lib as unknown as { utils: { getIntelExtension(der: Buffer): unknown; findExtension(path: string[], ext: unknown): Buffer }; oids: { PPID: string } };
    ppid = bytesToHex(u.utils.findExtension([u.oids.PPID], u.utils.getIntelExtension(pck[0]!.der)));
  } catch (err) {
    throw new AttestationError("quote-invalid", "the PCK certificate has no PPID in its SGX extension", { cause: err });
  }
  if (ppid.length !== 34) throw new AttestationError("quote-invalid", `the PCK certificate's PPID is ${(ppid.length - 2) / 2} bytes, not 16`);
  checkTdxTcbStatus(report.status, policy);
  const td = report.report.asTd10();
  if (!td) throw new AttestationError("quote-invalid", "the verified quote carries no TD report");
  const mrTd = bytesToHex(td.mrTd);
  if (policy.allowedMrTd && !policy.allowedMrTd.some((m) => m.toLowerCase().replace(/^0x/, "") === mrTd.slice(2))) {
    throw new AttestationError("measurement-mismatch", `MRTD ${mrTd} is not on the allow-list`);
  }
  const rtmrs = [td.rtMr0, td.rtMr1, td.rtMr2, td.rtMr3].map((r) => bytesToHex(r));
  const norm = (m: string) => `0x${m.toLowerCase().replace(/^0x/, "")}`;
  if (policy.allowedRtmrs && !policy.allowedRtmrs.some((a) => a.length === 4 && a.every((m, i) => norm(m) === rtmrs[i]))) {
    throw new AttestationError("measurement-mismatch", `RTMRs ${rtmrs.join(", ")} are not an allowed runtime`);
  }
  const dates = [
    new Date(JSON.parse(collateral.tcb_info).nextUpdate as string),
    new Date(JSON.parse(collateral.qe_identity).nextUpdate as string),
    rootCrl.nextUpdate,
    pckCrl.nextUpdate,
    ...pck.map((c) => c.cert.notAfter),
  ].map((d) => Math.floor(d.getTime() / 1000));
  return {
    evidenceType: "cvm-quote",
    reportData: bytesToHex(td.reportData),
    tcbStatus: report.status,
    advisoryIds: [...report.advisory_ids],
    mrTd,
    rtmrs,
    ppid,
    pckKeyHash: `0x${createHash("sha256").update(Buffer.from(pck[0]!.cert.publicKey.rawData)).digest("hex")}`,
    expiresAt: Math.min(...dates),
  };
}
