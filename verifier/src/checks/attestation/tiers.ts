/**
 * Attestation tiers and trust bands (seed design): the tier is fixed by the platform class the
 * evidence proves; the band is a score inside the tier's range. docs/checks.md has the table.
 *
 *   tier 1  confidential VM + attested accelerator       90..100
 *   tier 2  attested accelerator, host unattested         70..89
 *   tier 3  device enclave                               50..69
 *   tier 4  no attestation: stake substitutes            10..49
 *
 * The vendor formats (bundle.ts) rank by evidence strength, never weaker evidence above stronger: a pinned-image CVM
 * quote plus NVIDIA GPU evidence bound to one session key (composite) is tier 1, NVIDIA GPU evidence alone tier 2, a
 * CVM quote alone at most tier 3. The EKU mapping below is the test CA's (pouw-eat) only.
 *
 * Band inside tiers 1-3 (evidence already passed every policy check):
 *   q = mean of four factors in {0, 1}:
 *     driver    driver_version   >= policy.recommendedDriverVersion   (1 when no recommendation is set)
 *     firmware  firmware_version >= policy.recommendedFirmwareVersion (1 when no recommendation is set)
 *     tcb       tcb_status == "up-to-date"
 *     exclusive partitioning.mode == "none" (the device is not shared with other tenants' partitions)
 *   band = lo + floor((hi - lo) * q)
 * Band in tier 4: band = 10 + floor(39 * min(1, stake / referenceStake)).
 */
import { compareVersions, type AttestationPolicy, type EvidenceClaims, type Platform } from "./policy.ts";
import { AttestationError } from "./errors.ts";

export type Tier = 1 | 2 | 3 | 4;

/**
 * Evidence types, one per attested tier: what a verified signing key proves, whatever the claims say.
 *   accelerator-cc-report  a GPU's own attestation report key, chained to the GPU vendor's device identity root (tier 1)
 *   cvm-quote              a confidential VM's quote key (CPU TEE), whose report data binds the provider (tier 2)
 *   device-enclave         a device enclave key (phone / laptop secure element) (tier 3)
 */
export const EVIDENCE_TYPES = ["accelerator-cc-report", "cvm-quote", "device-enclave"] as const;
export type EvidenceType = (typeof EVIDENCE_TYPES)[number];

export const EVIDENCE_TIER: Readonly<Record<EvidenceType, Exclude<Tier, 4>>> = {
  "accelerator-cc-report": 1,
  "cvm-quote": 2,
  "device-enclave": 3,
};

/**
 * Extended key usage OIDs that say which evidence type a leaf key may sign. IMPORTANT: these sit under IANA's
 * documentation enterprise number 32473 (RFC 5612), so they can never collide with a vendor's; they are used by the
 * test CA that mirrors the shape of the vendors' chains. (A UUID arc under 2.25 was tried: asn1js cannot encode arcs
 * above 2^53.) Real vendor chains do not carry them: each real format's verifier (formats/) maps its own pinned root
 * onto an evidence type instead (nvidia-eat: accelerator-cc-report; intel-tdx, amd-sev-snp: cvm-quote; bundle.ts).
 */
const PURPOSE_ARC = "1.3.6.1.4.1.32473.17";
export const EVIDENCE_KEY_PURPOSES: Readonly<Record<EvidenceType, string>> = {
  "accelerator-cc-report": `${PURPOSE_ARC}.1`,
  "cvm-quote": `${PURPOSE_ARC}.2`,
  "device-enclave": `${PURPOSE_ARC}.3`,
};

export const TIER_BANDS: Readonly<Record<Tier, { lo: number; hi: number; label: string }>> = {
  1: { lo: 90, hi: 100, label: "confidential VM + attested accelerator" },
  2: { lo: 70, hi: 89, label: "attested accelerator, host unattested" },
  3: { lo: 50, hi: 69, label: "device enclave" },
  4: { lo: 10, hi: 49, label: "no attestation (stake substitutes)" },
};

const PLATFORM_TIER: Readonly<Record<Platform, Tier>> = {
  "accelerator-cc": 1,
  "cvm-accelerator": 2,
  "device-enclave": 3,
};

export function tierOf(platform: Platform): Tier {
  return PLATFORM_TIER[platform];
}

export type BandFactors = { driver: boolean; firmware: boolean; tcb: boolean; exclusive: boolean };

export function bandFactors(claims: EvidenceClaims, policy: AttestationPolicy): BandFactors {
  return {
    driver: !policy.recommendedDriverVersion || compareVersions(claims.driver_version, policy.recommendedDriverVersion) >= 0,
    firmware: !policy.recommendedFirmwareVersion || compareVersions(claims.firmware_version, policy.recommendedFirmwareVersion) >= 0,
    tcb: claims.tcb_status === "up-to-date",
    exclusive: claims.partitioning.mode === "none",
  };
}

/** Band of an attested tier (1..3) from its factors. */
export function attestedBand(tier: Exclude<Tier, 4>, f: BandFactors): number {
  const { lo, hi } = TIER_BANDS[tier];
  const q = [f.driver, f.firmware, f.tcb, f.exclusive].filter(Boolean).length / 4;
  return lo + Math.floor((hi - lo) * q);
}

/** Band of tier 4 (no attestation) from the stake a provider posts relative to the policy's reference stake. */
export function stakeBand(stake: bigint, referenceStake: bigint): number {
  if (stake < 0n || referenceStake <= 0n) throw new AttestationError("policy-invalid", "stake must be >= 0 and the reference stake > 0");
  const { lo, hi } = TIER_BANDS[4];
  if (stake >= referenceStake) return hi;
  // floor(39 * stake / reference) in integers: no float rounding at the band edges
  return lo + Number((BigInt(hi - lo) * stake) / referenceStake);
}
