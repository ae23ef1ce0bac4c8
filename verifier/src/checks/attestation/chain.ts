/**
 * X.509 chain validation for the evidence signing key: leaf (signs the token) -> intermediates ->
 * configured vendor root. Every link is checked for signature, CA basic constraints (with path
 * length) and key usage on the issuer, and validity window at `now`. No revocation service is
 * contacted (docs/checks.md says why and what that means).
 */
import { X509Certificate as NodeCert, type KeyObject } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { AttestationError } from "./errors.ts";

export type ParsedCert = {
  readonly node: NodeCert;
  readonly peculiar: x509.X509Certificate;
  readonly der: Buffer;
};

/** A trusted vendor root, loaded once from configuration (PEM). */
export type VendorRoot = ParsedCert;

function parseDer(der: Buffer, label: string): ParsedCert {
  try {
    return { node: new NodeCert(der), peculiar: new x509.X509Certificate(new Uint8Array(der).buffer), der };
  } catch (err) {
    throw new AttestationError("bad-certificate", `${label} is not a DER X.509 certificate`, { cause: err });
  }
}

/** Loads the configured vendor root. A bad root is a configuration error (policy-invalid). */
export function loadVendorRoot(pem: string): VendorRoot {
  const m = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/.exec(pem);
  if (!m) throw new AttestationError("policy-invalid", "vendor root is not a PEM certificate");
  let root: ParsedCert;
  try {
    root = parseDer(Buffer.from(m[1]!.replace(/\s+/g, ""), "base64"), "vendor root");
  } catch (err) {
    throw new AttestationError("policy-invalid", "vendor root does not parse", { cause: err });
  }
  if (!isCa(root)) throw new AttestationError("policy-invalid", "vendor root is not a CA certificate");
  return root;
}

/** Parses the x5c header: base64 (not base64url) DER, leaf first. */
export function parseX5c(x5c: unknown, maxLength: number): ParsedCert[] {
  if (!Array.isArray(x5c) || x5c.length === 0) throw new AttestationError("missing-chain", "token header has no x5c certificate chain");
  if (x5c.length > maxLength) throw new AttestationError("missing-chain", `x5c has ${x5c.length} certificates, policy allows ${maxLength}`);
  return x5c.map((entry, i) => {
    if (typeof entry !== "string" || !/^[A-Za-z0-9+/]+=*$/.test(entry)) {
      throw new AttestationError("bad-certificate", `x5c[${i}] is not base64`);
    }
    return parseDer(Buffer.from(entry, "base64"), `x5c[${i}]`);
  });
}

function basicConstraints(c: ParsedCert): x509.BasicConstraintsExtension | undefined {
  return c.peculiar.getExtension(x509.BasicConstraintsExtension) ?? undefined;
}

function isCa(c: ParsedCert): boolean {
  const bc = basicConstraints(c);
  if (!bc?.ca) return false;
  const ku = c.peculiar.getExtension(x509.KeyUsagesExtension);
  // INVARIANT: an issuer with a key usage extension must allow certificate signing
  return !ku || (ku.usages & x509.KeyUsageFlags.keyCertSign) !== 0;
}

function checkValidity(c: ParsedCert, label: string, now: Date): void {
  if (now < c.peculiar.notBefore) {
    throw new AttestationError("cert-not-yet-valid", `${label} is not valid before ${c.peculiar.notBefore.toISOString()}`);
  }
  if (now > c.peculiar.notAfter) {
    throw new AttestationError("cert-expired", `${label} expired at ${c.peculiar.notAfter.toISOString()}`);
  }
}

/**
 * Validates the chain at `now` and returns the leaf's public key and the earliest notAfter.
 * `certs` is leaf first; a trailing copy of the root is allowed and ignored.
 */
export function validateChain(certs: readonly ParsedCert[], root: VendorRoot, now: Date): { leafKey: KeyObject; notAfter: Date } {
  const chain = [...certs];
  if (chain.length > 1 && chain[chain.length - 1]!.der.equals(root.der)) chain.pop();
  checkValidity(root, "vendor root", now);
  let notAfter = root.peculiar.notAfter;
  for (let i = 0; i < chain.length; i++) {
    const cert = chain[i]!;
    const label = i === 0 ? "leaf certificate" : `intermediate x5c[${i}]`;
    const issuerIsRoot = i === chain.length - 1;
    const issuer = issuerIsRoot ? root : chain[i + 1]!;
    // NOTE: checked before the signature because OpenSSL's checkIssued also refuses non-CA issuers
    if (!isCa(issuer)) {
      throw new AttestationError("not-a-ca", `issuer of ${label} is not a CA (basic constraints / keyCertSign)`);
    }
    if (issuerIsRoot) {
      // INVARIANT: the last certificate must be issued and signed by the configured vendor root
      if (!cert.node.checkIssued(root.node) || !cert.node.verify(root.node.publicKey)) {
        throw new AttestationError("untrusted-root", `${label} is not signed by the configured vendor root`, {
          details: `issuer ${cert.node.issuer}`,
        });
      }
    } else if (!cert.node.checkIssued(issuer.node) || !cert.node.verify(issuer.node.publicKey)) {
      throw new AttestationError("chain-broken", `${label} is not signed by x5c[${i + 1}]`);
    }
    // path length: the issuer at position i+1 has i intermediates (non-leaf certs) below it
    const pathLen = basicConstraints(issuer)?.pathLength;
    if (pathLen !== undefined && i > pathLen) {
      throw new AttestationError("not-a-ca", `path length constraint ${pathLen} of the issuer of ${label} exceeded`);
    }
    if (i > 0 && !isCa(cert)) throw new AttestationError("not-a-ca", `${label} issues certificates but is not a CA`);
    checkValidity(cert, label, now);
    if (cert.peculiar.notAfter < notAfter) notAfter = cert.peculiar.notAfter;
  }
  return { leafKey: chain[0]!.node.publicKey, notAfter };
}
