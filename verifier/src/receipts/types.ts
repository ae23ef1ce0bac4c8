/**
 * EIP-712 type definitions shared by every off-chain user of PoUW receipts. The Solidity side reads
 * the same definitions from contracts/libraries/Receipts.sol; test/receipts/receipts.test.ts checks
 * that both give the same type hashes and digests. Change both together.
 *
 * Canonical type strings (EIP-712 encodeType):
 *   AuditReceipt(uint256 jobId,uint32 segment,bytes32 traceRoot,uint32 checks,uint32 sampledSteps,uint8 verdict)
 *   AttestationVerified(address provider,uint256 requestId,uint8 tier,uint8 band,bytes32 evidenceHash,uint64 expiresAt,uint64 issuedAt)
 */
import { keccak256, toHex, type Hex } from "viem";

export const AUDIT_RECEIPT_FIELDS = [
  { name: "jobId", type: "uint256" },
  { name: "segment", type: "uint32" },
  { name: "traceRoot", type: "bytes32" },
  { name: "checks", type: "uint32" },
  { name: "sampledSteps", type: "uint32" },
  { name: "verdict", type: "uint8" },
] as const;

export const ATTESTATION_VERIFIED_FIELDS = [
  { name: "provider", type: "address" },
  { name: "requestId", type: "uint256" },
  { name: "tier", type: "uint8" },
  { name: "band", type: "uint8" },
  { name: "evidenceHash", type: "bytes32" },
  { name: "expiresAt", type: "uint64" },
  { name: "issuedAt", type: "uint64" },
] as const;

/** viem `types` objects for signTypedData / hashTypedData. */
export const AUDIT_RECEIPT_TYPES = { AuditReceipt: AUDIT_RECEIPT_FIELDS } as const;
export const ATTESTATION_VERIFIED_TYPES = { AttestationVerified: ATTESTATION_VERIFIED_FIELDS } as const;

function encodeType(name: string, fields: readonly { name: string; type: string }[]): string {
  return `${name}(${fields.map((f) => `${f.type} ${f.name}`).join(",")})`;
}

export const AUDIT_RECEIPT_TYPE = encodeType("AuditReceipt", AUDIT_RECEIPT_FIELDS);
export const ATTESTATION_VERIFIED_TYPE = encodeType("AttestationVerified", ATTESTATION_VERIFIED_FIELDS);
export const AUDIT_RECEIPT_TYPEHASH: Hex = keccak256(toHex(AUDIT_RECEIPT_TYPE));
export const ATTESTATION_VERIFIED_TYPEHASH: Hex = keccak256(toHex(ATTESTATION_VERIFIED_TYPE));

/** EIP-712 domain names and version; chainId and verifyingContract come from the deployment. */
export const JOB_MARKET_DOMAIN_NAME = "PoUW JobMarket";
export const PROVIDER_REGISTRY_DOMAIN_NAME = "PoUW ProviderRegistry";
export const DOMAIN_VERSION = "1";

/**
 * Bits of AuditReceipt.checks: which checks the auditor ran on the segment. Bits not listed are
 * reserved and must be zero.
 */
export const CHECK_BITS = {
  /** bit-exact recompute of the segment's steps against the committed leaves */
  recompute: 1 << 0,
  /** tolerance-mode recompute (calibrated distance instead of hash equality) */
  tolerance: 1 << 1,
  /** Freivalds verification of every matrix product of the sampled steps' witnesses */
  freivalds: 1 << 2,
  /** progress check: loss of committed checkpoints on a verifier-held batch */
  progress: 1 << 3,
  /** magnitude check: each step's update norm against the optimizer's bound */
  magnitude: 1 << 4,
  /** the provider's attestation evidence was verified for this job */
  attestation: 1 << 5,
} as const;

export type CheckName = keyof typeof CHECK_BITS;
export const CHECKS_MASK = Object.values(CHECK_BITS).reduce((a, b) => a | b, 0);

export const VERDICT = { ok: 0, fault: 1 } as const;
export type Verdict = (typeof VERDICT)[keyof typeof VERDICT];
