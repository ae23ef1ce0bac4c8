/**
 * PoUW receipts: EIP-712 AuditReceipt (signed by an auditor after auditing a segment, anchored by
 * JobMarket.recordReceipt) and AttestationVerified (signed by the members of a ProviderRegistry request's drawn
 * committee who verified a provider's attestation locally, recorded by ProviderRegistry.record; see docs/panels.md). Sign with any viem account, verify by
 * recovering the signer. docs/checks.md ("Receipts") describes the fields.
 *
 * @example
 *   const domain = jobMarketDomain(31337n, jobMarketAddress);
 *   const sig = await signAuditReceipt(account, domain, receipt);
 *   const signer = await recoverAuditReceiptSigner(domain, receipt, sig); // == account.address
 */
import {
  getAddress,
  hashTypedData,
  isAddress,
  isHex,
  recoverTypedDataAddress,
  type Address,
  type Hex,
  type LocalAccount,
} from "viem";
import { InputError, PouwError } from "../errors/index.ts";
import {
  ATTESTATION_VERIFIED_TYPES,
  AUDIT_RECEIPT_TYPES,
  CHECK_BITS,
  CHECKS_MASK,
  DOMAIN_VERSION,
  JOB_MARKET_DOMAIN_NAME,
  PROVIDER_REGISTRY_DOMAIN_NAME,
  type CheckName,
} from "./types.ts";

export * from "./types.ts";

export type Eip712Domain = {
  readonly name: string;
  readonly version: string;
  readonly chainId: bigint;
  readonly verifyingContract: Address;
};

export type AuditReceipt = {
  readonly jobId: bigint;
  readonly segment: number;
  readonly traceRoot: Hex;
  /** Bitmask of CHECK_BITS. */
  readonly checks: number;
  readonly sampledSteps: number;
  /** 0 = ok, 1 = fault. */
  readonly verdict: number;
};

export type AttestationVerified = {
  readonly provider: Address;
  /** The ProviderRegistry request (requestAttestation) whose drawn committee the signer sits on. */
  readonly requestId: bigint;
  /** 1..4, see checks/attestation. */
  readonly tier: number;
  /** Trust band 10..100 within the tier's range. */
  readonly band: number;
  readonly evidenceHash: Hex;
  /** Unix seconds after which the verification no longer counts. */
  readonly expiresAt: bigint;
  /** Unix seconds at which the committee verified the evidence: the registry keeps the newest statement. */
  readonly issuedAt: bigint;
};

/** A receipt or message field is out of range for its Solidity type. */
export class ReceiptFieldError extends InputError {
  override name = "ReceiptFieldError";
  override readonly code: string = "RECEIPT_FIELD";
}

/** The signature is malformed or was not produced by the expected signer for this message and domain. */
export class ReceiptSignatureError extends PouwError {
  override name = "ReceiptSignatureError";
  override readonly code: string = "RECEIPT_SIGNATURE";
}

function uint(name: string, v: bigint | number, bits: number): void {
  const b = typeof v === "number" ? (Number.isInteger(v) ? BigInt(v) : -1n) : v;
  if (b < 0n || b >= 1n << BigInt(bits)) throw new ReceiptFieldError(`${name} must be a uint${bits}, got ${v}`);
}

function bytes32(name: string, v: Hex): void {
  if (!isHex(v, { strict: true }) || v.length !== 66) throw new ReceiptFieldError(`${name} must be a 0x-prefixed 32-byte hex, got ${v}`);
}

export function jobMarketDomain(chainId: bigint, jobMarket: Address): Eip712Domain {
  if (!isAddress(jobMarket)) throw new ReceiptFieldError(`verifyingContract is not an address: ${jobMarket}`);
  return { name: JOB_MARKET_DOMAIN_NAME, version: DOMAIN_VERSION, chainId, verifyingContract: getAddress(jobMarket) };
}

export function providerRegistryDomain(chainId: bigint, registry: Address): Eip712Domain {
  if (!isAddress(registry)) throw new ReceiptFieldError(`verifyingContract is not an address: ${registry}`);
  return { name: PROVIDER_REGISTRY_DOMAIN_NAME, version: DOMAIN_VERSION, chainId, verifyingContract: getAddress(registry) };
}

/** Bitmask for a list of check names. */
export function checksMask(names: readonly CheckName[]): number {
  let mask = 0;
  for (const n of names) {
    const bit = CHECK_BITS[n];
    if (bit === undefined) throw new ReceiptFieldError(`unknown check "${n}"`);
    mask |= bit;
  }
  return mask;
}

/** Check names set in a mask; throws on reserved bits. */
export function checkNames(mask: number): CheckName[] {
  validateChecks(mask);
  return (Object.keys(CHECK_BITS) as CheckName[]).filter((n) => (mask & CHECK_BITS[n]) !== 0);
}

function validateChecks(mask: number): void {
  uint("checks", mask, 32);
  if ((mask & ~CHECKS_MASK) !== 0) throw new ReceiptFieldError(`checks has reserved bits set: 0x${mask.toString(16)}`);
}

export function validateAuditReceipt(r: AuditReceipt): void {
  uint("jobId", r.jobId, 256);
  uint("segment", r.segment, 32);
  bytes32("traceRoot", r.traceRoot);
  validateChecks(r.checks);
  uint("sampledSteps", r.sampledSteps, 32);
  if (r.verdict !== 0 && r.verdict !== 1) throw new ReceiptFieldError(`verdict must be 0 (ok) or 1 (fault), got ${r.verdict}`);
}

export function validateAttestationVerified(a: AttestationVerified): void {
  if (!isAddress(a.provider)) throw new ReceiptFieldError(`provider is not an address: ${a.provider}`);
  uint("requestId", a.requestId, 256);
  if (!Number.isInteger(a.tier) || a.tier < 1 || a.tier > 4) throw new ReceiptFieldError(`tier must be 1..4, got ${a.tier}`);
  if (!Number.isInteger(a.band) || a.band < 10 || a.band > 100) throw new ReceiptFieldError(`band must be 10..100, got ${a.band}`);
  bytes32("evidenceHash", a.evidenceHash);
  uint("expiresAt", a.expiresAt, 64);
  uint("issuedAt", a.issuedAt, 64);
}

function receiptMessage(r: AuditReceipt) {
  return {
    jobId: r.jobId,
    segment: r.segment,
    traceRoot: r.traceRoot,
    checks: r.checks,
    sampledSteps: r.sampledSteps,
    verdict: r.verdict,
  };
}

function attestationMessage(a: AttestationVerified) {
  return { provider: getAddress(a.provider), requestId: a.requestId, tier: a.tier, band: a.band, evidenceHash: a.evidenceHash, expiresAt: a.expiresAt, issuedAt: a.issuedAt };
}

/** The EIP-712 digest (what ECDSA signs) of an audit receipt. */
export function auditReceiptDigest(domain: Eip712Domain, r: AuditReceipt): Hex {
  validateAuditReceipt(r);
  return hashTypedData({ domain, types: AUDIT_RECEIPT_TYPES, primaryType: "AuditReceipt", message: receiptMessage(r) });
}

export function attestationVerifiedDigest(domain: Eip712Domain, a: AttestationVerified): Hex {
  validateAttestationVerified(a);
  return hashTypedData({ domain, types: ATTESTATION_VERIFIED_TYPES, primaryType: "AttestationVerified", message: attestationMessage(a) });
}

export async function signAuditReceipt(account: LocalAccount, domain: Eip712Domain, r: AuditReceipt): Promise<Hex> {
  validateAuditReceipt(r);
  return account.signTypedData({ domain, types: AUDIT_RECEIPT_TYPES, primaryType: "AuditReceipt", message: receiptMessage(r) });
}

export async function signAttestationVerified(account: LocalAccount, domain: Eip712Domain, a: AttestationVerified): Promise<Hex> {
  validateAttestationVerified(a);
  return account.signTypedData({
    domain,
    types: ATTESTATION_VERIFIED_TYPES,
    primaryType: "AttestationVerified",
    message: attestationMessage(a),
  });
}

async function recover(digestFn: () => Hex, recoverFn: () => Promise<Address>, signature: Hex): Promise<Address> {
  if (!isHex(signature, { strict: true }) || signature.length !== 132) {
    throw new ReceiptSignatureError("malformed signature", { details: `expected 65 bytes of 0x-hex, got ${signature.length} chars` });
  }
  digestFn(); // validates fields before any crypto
  try {
    return getAddress(await recoverFn());
  } catch (err) {
    throw new ReceiptSignatureError("signature does not recover to a signer", { cause: err });
  }
}

/** The address that signed `r` under `domain`. Throws ReceiptSignatureError when unrecoverable. */
export async function recoverAuditReceiptSigner(domain: Eip712Domain, r: AuditReceipt, signature: Hex): Promise<Address> {
  return recover(
    () => auditReceiptDigest(domain, r),
    () =>
      recoverTypedDataAddress({ domain, types: AUDIT_RECEIPT_TYPES, primaryType: "AuditReceipt", message: receiptMessage(r), signature }),
    signature,
  );
}

export async function recoverAttestationVerifiedSigner(domain: Eip712Domain, a: AttestationVerified, signature: Hex): Promise<Address> {
  return recover(
    () => attestationVerifiedDigest(domain, a),
    () =>
      recoverTypedDataAddress({
        domain,
        types: ATTESTATION_VERIFIED_TYPES,
        primaryType: "AttestationVerified",
        message: attestationMessage(a),
        signature,
      }),
    signature,
  );
}

/** Throws ReceiptSignatureError unless `signature` over (domain, r) was made by `expected`. */
export async function verifyAuditReceipt(domain: Eip712Domain, r: AuditReceipt, signature: Hex, expected: Address): Promise<void> {
  const signer = await recoverAuditReceiptSigner(domain, r, signature);
  if (signer !== getAddress(expected)) {
    throw new ReceiptSignatureError("audit receipt not signed by the expected auditor", { details: `recovered ${signer}, expected ${getAddress(expected)}` });
  }
}

export async function verifyAttestationVerified(domain: Eip712Domain, a: AttestationVerified, signature: Hex, expected: Address): Promise<void> {
  const signer = await recoverAttestationVerifiedSigner(domain, a, signature);
  if (signer !== getAddress(expected)) {
    throw new ReceiptSignatureError("attestation message not signed by the expected auditor", {
      details: `recovered ${signer}, expected ${getAddress(expected)}`,
    });
  }
}
