/**
 * X.509 chain validation for the evidence signing key: leaf (signs the token) -> intermediates ->
 * configured vendor root.
 *
 * IMPORTANT: every certificate is parsed exactly once, by one library (@peculiar/x509 over
 * @peculiar/asn1-schema), and every decision (signature, issuer, key, constraints, validity) reads
 * that one parse. Two parsers disagreeing about one byte string is how a DER entry with PEM text
 * appended can be read as two different certificates, so an entry is accepted only
 * when it is exact DER: canonical base64, first byte 0x30 (SEQUENCE), and re-encoding the parsed
 * structure gives back exactly the input bytes (no trailing data, no BER-only encodings).
 *
 * Per link: the leaf is an end entity (no CA basic constraints) whose key usage includes
 * digitalSignature and not keyCertSign; every issuer (intermediates and root) is a CA with
 * keyCertSign, within its path length; issuer name equals the issuer's subject; the signature
 * verifies with the issuer's key; unknown critical extensions are refused; validity at `now`.
 * No revocation service is contacted (docs/checks.md says why and what that means).
 */
import { createPublicKey, webcrypto, type KeyObject } from "node:crypto";
import * as x509 from "@peculiar/x509";
// NOTE: @peculiar/asn1-schema and @peculiar/asn1-x509 are @peculiar/x509's own (pinned) dependencies; they are not
// listed in package.json yet (adding them needs an npm install, which this change did not run).
import { AsnConvert } from "@peculiar/asn1-schema";
import { Certificate } from "@peculiar/asn1-x509";
import { AttestationError } from "./errors.ts";

// NOTE: one crypto provider for every signature check (node's WebCrypto), set where the parser lives.
x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export type ParsedCert = {
  readonly cert: x509.X509Certificate;
  /** The exact DER bytes (equal to the re-encoding of `cert`). */
  readonly der: Buffer;
};

/** A trusted vendor root, loaded once from configuration (PEM). */
export type VendorRoot = ParsedCert;

/** Extensions this verifier understands; a critical extension outside this list rejects the certificate. */
const KNOWN_CRITICAL = new Set([
  "2.5.29.19", // basicConstraints
  "2.5.29.15", // keyUsage
  "2.5.29.37", // extKeyUsage
  "2.5.29.32", // certificatePolicies
]);

/** Parses exact DER once; throws AttestationError("certificate-not-der" | "bad-certificate"). */
export function parseDer(der: Buffer, label: string): ParsedCert {
  // INVARIANT: the bytes checked are the bytes parsed, and there is only one way to read them.
  if (der.length === 0 || der[0] !== 0x30) {
    throw new AttestationError("certificate-not-der", `${label} does not start with a DER SEQUENCE (0x30)`);
  }
  let asn: Certificate;
  let cert: x509.X509Certificate;
  try {
    asn = AsnConvert.parse(der, Certificate);
    // built from the parsed structure: @peculiar/x509 does not parse the bytes a second time
    cert = new x509.X509Certificate(asn);
  } catch (err) {
    throw new AttestationError("bad-certificate", `${label} is not a DER X.509 certificate`, { cause: err });
  }
  let reencoded: Buffer;
  try {
    reencoded = Buffer.from(AsnConvert.serialize(asn));
  } catch (err) {
    throw new AttestationError("bad-certificate", `${label} does not re-encode`, { cause: err });
  }
  if (!reencoded.equals(der)) {
    throw new AttestationError("certificate-not-der", `${label} is not exact DER (${der.length} bytes, ${reencoded.length} re-encoded: trailing data or non-canonical encoding)`);
  }
  const serial = new Uint8Array(asn.tbsCertificate.serialNumber);
  // INVARIANT: a serial is a positive integer (RFC 5280 4.1.2.2); a negative one would match a CRL entry by its
  // magnitude in one reader and not in another
  if (serial.length === 0 || (serial[0]! & 0x80) !== 0) throw new AttestationError("negative-serial", `${label} has a negative serial number`);
  const inner = Buffer.from(AsnConvert.serialize(asn.tbsCertificate.signature));
  const outer = Buffer.from(AsnConvert.serialize(asn.signatureAlgorithm));
  if (!inner.equals(outer)) throw new AttestationError("bad-certificate", `${label}: signature algorithm inside and outside the signed part differ`);
  for (const ext of cert.extensions) {
    if (ext.critical && !KNOWN_CRITICAL.has(ext.type)) {
      throw new AttestationError("bad-certificate", `${label} has an unknown critical extension ${ext.type}`);
    }
  }
  return { cert, der };
}

/** Loads the configured vendor root. A bad root is a configuration error (policy-invalid). */
export function loadVendorRoot(pem: string): VendorRoot {
  const blocks = [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/g)];
  if (blocks.length !== 1) throw new AttestationError("policy-invalid", `vendor root must be exactly one PEM certificate (found ${blocks.length})`);
  let root: ParsedCert;
  try {
    root = parseDer(Buffer.from(blocks[0]![1]!.replace(/\s+/g, ""), "base64"), "vendor root");
  } catch (err) {
    throw new AttestationError("policy-invalid", "vendor root does not parse", { cause: err });
  }
  if (caProblem(root) !== undefined) throw new AttestationError("policy-invalid", "vendor root is not a CA certificate");
  return root;
}

/** Parses the x5c header: canonical base64 (not base64url) of exact DER, leaf first. */
export function parseX5c(x5c: unknown, maxLength: number): ParsedCert[] {
  if (!Array.isArray(x5c) || x5c.length === 0) throw new AttestationError("missing-chain", "token header has no x5c certificate chain");
  if (x5c.length > maxLength) throw new AttestationError("missing-chain", `x5c has ${x5c.length} certificates, policy allows ${maxLength}`);
  return x5c.map((entry, i) => {
    if (typeof entry !== "string" || !/^[A-Za-z0-9+/]+={0,2}$/.test(entry)) {
      throw new AttestationError("bad-certificate", `x5c[${i}] is not base64`);
    }
    const der = Buffer.from(entry, "base64");
    // Node's base64 decoder skips what it does not understand; only the canonical spelling is one byte string.
    if (der.toString("base64") !== entry) throw new AttestationError("certificate-not-der", `x5c[${i}] is not canonical base64`);
    return parseDer(der, `x5c[${i}]`);
  });
}

export function basicConstraints(c: ParsedCert): x509.BasicConstraintsExtension | undefined {
  return c.cert.getExtension(x509.BasicConstraintsExtension) ?? undefined;
}

export function keyUsage(c: ParsedCert): number | undefined {
  return c.cert.getExtension(x509.KeyUsagesExtension)?.usages;
}

/** The extended key usage OIDs of `c`, or undefined when it has no EKU extension. */
export function keyPurposes(c: ParsedCert): readonly string[] | undefined {
  const eku = c.cert.getExtension(x509.ExtendedKeyUsageExtension);
  return eku ? eku.usages.map(String) : undefined;
}

/** Why `c` cannot issue certificates, or undefined when it can. */
function caProblem(c: ParsedCert): string | undefined {
  if (!basicConstraints(c)?.ca) return "no CA basic constraints";
  const ku = keyUsage(c);
  // INVARIANT: an issuer states keyCertSign; a CA certificate without a key usage extension is refused
  if (ku === undefined) return "no key usage extension";
  if ((ku & x509.KeyUsageFlags.keyCertSign) === 0) return "key usage lacks keyCertSign";
  return undefined;
}

function checkValidity(c: ParsedCert, label: string, now: Date): void {
  if (now < c.cert.notBefore) {
    throw new AttestationError("cert-not-yet-valid", `${label} is not valid before ${c.cert.notBefore.toISOString()}`);
  }
  if (now > c.cert.notAfter) {
    throw new AttestationError("cert-expired", `${label} expired at ${c.cert.notAfter.toISOString()}`);
  }
}

/** The leaf may sign evidence: an end entity with digitalSignature (and not keyCertSign). */
function checkLeaf(leaf: ParsedCert): void {
  // INVARIANT: only an end-entity key signs evidence; a CA key (an intermediate) mints nothing
  if (basicConstraints(leaf)?.ca) throw new AttestationError("leaf-not-end-entity", "the evidence signing certificate is a CA certificate");
  const ku = keyUsage(leaf);
  if (ku === undefined) throw new AttestationError("leaf-key-usage", "the evidence signing certificate has no key usage extension");
  if ((ku & x509.KeyUsageFlags.keyCertSign) !== 0) throw new AttestationError("leaf-not-end-entity", "the evidence signing certificate may sign certificates (keyCertSign)");
  if ((ku & x509.KeyUsageFlags.digitalSignature) === 0) throw new AttestationError("leaf-key-usage", "the evidence signing certificate lacks digitalSignature");
}

async function signedBy(cert: ParsedCert, issuer: ParsedCert): Promise<boolean> {
  if (cert.cert.issuer !== issuer.cert.subject) return false;
  try {
    return await cert.cert.verify({ publicKey: issuer.cert.publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}

export type ValidatedChain = {
  readonly leaf: ParsedCert;
  readonly leafKey: KeyObject;
  /** The earliest notAfter of the chain, root included. */
  readonly notAfter: Date;
};

/**
 * Validates the chain at `now`. `certs` is leaf first; a trailing copy of the root is allowed and ignored.
 */
export async function validateChain(certs: readonly ParsedCert[], root: VendorRoot, now: Date): Promise<ValidatedChain> {
  const chain = [...certs];
  if (chain.length > 1 && chain[chain.length - 1]!.der.equals(root.der)) chain.pop();
  checkValidity(root, "vendor root", now);
  let notAfter = root.cert.notAfter;
  for (let i = 0; i < chain.length; i++) {
    const cert = chain[i]!;
    const label = i === 0 ? "leaf certificate" : `intermediate x5c[${i}]`;
    const issuerIsRoot = i === chain.length - 1;
    const issuer = issuerIsRoot ? root : chain[i + 1]!;
    const problem = caProblem(issuer);
    if (problem !== undefined) throw new AttestationError("not-a-ca", `issuer of ${label} is not a CA (${problem})`);
    if (!(await signedBy(cert, issuer))) {
      // INVARIANT: the last certificate must be issued and signed by the configured vendor root
      if (issuerIsRoot) throw new AttestationError("untrusted-root", `${label} is not signed by the configured vendor root`, { details: `issuer ${cert.cert.issuer}` });
      throw new AttestationError("chain-broken", `${label} is not signed by x5c[${i + 1}]`);
    }
    // path length: the issuer at position i+1 has i intermediates (non-leaf certs) below it
    const pathLen = basicConstraints(issuer)?.pathLength;
    if (pathLen !== undefined && i > pathLen) {
      throw new AttestationError("not-a-ca", `path length constraint ${pathLen} of the issuer of ${label} exceeded`);
    }
    checkValidity(cert, label, now);
    if (cert.cert.notAfter < notAfter) notAfter = cert.cert.notAfter;
  }
  const leaf = chain[0]!;
  checkLeaf(leaf);
  const leafKey = createPublicKey({ key: Buffer.from(leaf.cert.publicKey.rawData), format: "der", type: "spki" });
  return { leaf, leafKey, notAfter };
}
