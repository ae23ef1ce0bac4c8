/**
 * The verifier's attestation policy (parsed once from configuration) and the evidence claims format.
 * Evidence is an EAT-style JWT whose claims follow `EvidenceClaims` below.
 */
import { z } from "zod";
import { AttestationError } from "./errors.ts";

const version = z.string().regex(/^\d+(\.\d+)*$/, "dotted numeric version, e.g. 550.54.15");
const hexDigest = z.string().regex(/^(0x)?[0-9a-fA-F]{32,128}$/, "hex digest");

/** Platform classes, in decreasing strength; they map to tiers 1..3 (no evidence is tier 4). */
export const PLATFORMS = ["accelerator-cc", "cvm-accelerator", "device-enclave"] as const;
export type Platform = (typeof PLATFORMS)[number];

export const AttestationPolicySchema = z
  .object({
    /** Max age of the verifier's challenge when the evidence is checked. */
    maxNonceAgeSeconds: z.number().int().positive().max(86_400),
    /** Tolerated clock difference for token iat/nbf/exp. */
    clockSkewSeconds: z.number().int().min(0).max(600).default(30),
    /** JWS algorithms accepted for the evidence token. */
    algorithms: z.array(z.enum(["ES256", "ES384", "ES512", "EdDSA", "PS256", "PS384", "RS256", "RS384"])).min(1).default(["ES256", "ES384"]),
    /** Max certificates in x5c (leaf first, the root may be included or not). */
    maxChainLength: z.number().int().min(1).max(8).default(5),
    /** Allowed measurement values per component: every listed component must be present and match. */
    measurements: z.record(z.string().min(1), z.array(hexDigest).min(1)).refine((m) => Object.keys(m).length > 0, "at least one measured component"),
    minDriverVersion: version,
    minFirmwareVersion: version,
    /** Versions at or above these raise the trust band within the tier (docs/checks.md). */
    recommendedDriverVersion: version.optional(),
    recommendedFirmwareVersion: version.optional(),
    /** Allowed partitioning: "none" (whole device) and/or "mig:<profile>", or "mig:*" for any profile. */
    allowedPartitioning: z.array(z.string().regex(/^(none|mig:[A-Za-z0-9.*_-]+)$/)).min(1).default(["none"]),
    /** Platforms accepted at all (default: all three). */
    allowedPlatforms: z.array(z.enum(PLATFORMS)).min(1).default([...PLATFORMS]),
  })
  .strict();

export type AttestationPolicy = z.output<typeof AttestationPolicySchema>;

/** Parses and validates a policy object; throws AttestationError("policy-invalid"). */
export function parseAttestationPolicy(raw: unknown): AttestationPolicy {
  const r = AttestationPolicySchema.safeParse(raw);
  if (!r.success) {
    throw new AttestationError("policy-invalid", "attestation policy is invalid", { details: z.prettifyError(r.error) });
  }
  return r.data;
}

export const EvidenceClaimsSchema = z
  .object({
    iss: z.string().min(1),
    iat: z.number().int().nonnegative(),
    exp: z.number().int().positive(),
    /** EAT nonce: the verifier's challenge, echoed. */
    eat_nonce: z.string().min(16),
    platform: z.enum(PLATFORMS),
    /** Confidential-computing mode of the device (or enclave). */
    cc_mode: z.enum(["on", "off", "devtools"]),
    debug: z.boolean(),
    measurements: z.record(z.string().min(1), hexDigest),
    driver_version: version,
    firmware_version: version,
    /** "up-to-date" when the vendor's TCB (microcode, firmware, driver) has no known advisory. */
    tcb_status: z.enum(["up-to-date", "out-of-date"]),
    gpu_count: z.number().int().min(1).max(64),
    /** NVLink/PCIe link encryption between devices (required when gpu_count > 1). */
    device_links_encrypted: z.boolean(),
    partitioning: z.union([z.object({ mode: z.literal("none") }).strict(), z.object({ mode: z.literal("mig"), profile: z.string().min(1) }).strict()]),
  })
  .loose();

export type EvidenceClaims = z.output<typeof EvidenceClaimsSchema>;

/** Compares dotted numeric versions: negative, zero or positive like a comparator. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
