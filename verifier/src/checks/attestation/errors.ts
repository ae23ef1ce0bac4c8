import { InputError, type PouwErrorOptions } from "../../errors/index.ts";

/**
 * Why a piece of attestation evidence was rejected. One code per failure a caller (or an operator
 * reading logs) can act on; docs/checks.md ("Attestation") lists what each one means.
 */
export const ATTESTATION_REASONS = [
  // token
  "malformed-token", // not a compact JWS/JWT (truncated, bad base64, bad JSON)
  "duplicate-key", // a signed token's header or payload repeats a key in one object (two readings of one signature)
  "unsupported-algorithm", // JWS alg not in the allow-list
  "bad-signature", // token signature does not verify with the leaf certificate's key
  "token-expired", // token exp in the past
  "token-not-yet-valid", // token nbf/iat in the future beyond the clock skew
  // certificate chain
  "missing-chain", // no x5c header, or an empty / too long one
  "bad-certificate", // an x5c entry does not parse as DER X.509, or has an unknown critical extension
  "negative-serial", // a certificate's serial number is negative (RFC 5280 4.1.2.2: a positive integer)
  "certificate-not-der", // an entry is not exact DER: first byte not 0x30, trailing bytes (PEM text), re-encoding differs
  "chain-broken", // a certificate is not signed by the next one in the chain
  "untrusted-root", // the chain does not end at the configured vendor root
  "not-a-ca", // an issuing certificate lacks CA basic constraints / keyCertSign, or path length exceeded
  "cert-expired", // a certificate (or the root) is past notAfter
  "cert-not-yet-valid", // a certificate (or the root) is before notBefore
  "leaf-not-end-entity", // the evidence signing certificate is a CA (basic constraints) or may sign certificates
  "leaf-key-usage", // the evidence signing certificate has no key usage or lacks digitalSignature
  "leaf-key-purpose", // the signing key names no (or more than one) evidence type, or an issuer is constrained to others
  // freshness
  "nonce-mismatch", // eat_nonce is not the verifier's challenge
  "nonce-stale", // the challenge is older than the policy's max age
  "binding-mismatch", // the nonce is not this provider's request binding (relay), or a statement for another provider
  "challenge-reused", // this verifier already accepted evidence for this challenge (replay)
  "device-reused", // this auditor attested the same device for another provider, and that statement has not expired
  "device-undeclared", // the request's declared devices (ProviderRegistry.devicesOf) are not exactly the evidence's
  "session-key-undeclared", // the request declared a session key (ProviderRegistry.sessionKeyOf) other than the bundle's
  "session-key-unauthorized", // the session key is not authorized by the provider's address, or its possession proof fails
  // evidence formats (bundle.ts, formats/)
  "bundle-invalid", // the evidence bundle is not JSON of the bundle schema, or names an unknown format
  "quote-invalid", // a binary quote / report does not parse or its signature (or its signing chain) does not verify
  "quote-trailing-bytes", // non-zero bytes follow the end of a TDX quote as its own length fields state it (zero padding is allowed)
  "collateral-invalid", // stapled collateral (TCB info, QE identity, issuer chains) does not verify or does not fit the quote
  "collateral-expired", // stapled collateral (TCB info, QE identity, a CRL) is outside its validity window at `now`
  "crl-invalid", // a stapled CRL does not parse, is not signed by its CA, or is for another issuer
  "cert-revoked", // a certificate of the chain is on a stapled CRL
  "tcb-invalid", // the platform's TCB level is Revoked or matches no level of the TCB info
  "key-unknown", // the token's `kid` is not in the pinned JWKS
  "gpu-evidence-failed", // an NVIDIA verdict claim says the GPU did not attest (overall result, measres, secure boot, architecture)
  // claims policy
  "claims-invalid", // claims missing or of the wrong shape
  "confidential-mode-off",
  "debug-enabled",
  "guest-privilege", // SEV-SNP: a report from VMPL above the accepted one, or a guest policy that allows a migration agent
  "tcb-out-of-date", // the platform's TCB status is one the policy refuses (TDX: OutOfDate, ConfigurationNeeded by default)
  "measurement-mismatch",
  "driver-too-old",
  "firmware-too-old",
  "device-links-unencrypted", // multi-GPU without encrypted device links
  "partitioning-not-allowed", // MIG / partition profile not on the allow-list
  // configuration
  "policy-invalid", // the verifier's own policy or vendor root is unusable
] as const;

export type AttestationReason = (typeof ATTESTATION_REASONS)[number];

/** Evidence rejected; `reason` says why. Subclass of InputError: the evidence is the provider's input. */
export class AttestationError extends InputError {
  override name = "AttestationError";
  override readonly code: string = "ATTESTATION";
  readonly reason: AttestationReason;

  constructor(reason: AttestationReason, shortMessage: string, options: PouwErrorOptions = {}) {
    super(`${reason}: ${shortMessage}`, options);
    this.reason = reason;
  }
}
