/**
 * The EAT-style token check (verifyAttestation): the provider answers the verifier's challenge with a JWT signed by a key
 * whose X.509 chain (JWS `x5c` header) ends at a configured vendor root. See index.ts for the order of the checks.
 */
import { createHash, randomBytes } from "node:crypto";
import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from "jose";
import { checkJwsUniqueKeys } from "./json.ts";
import { keccak256, toHex, type Address, type Hex } from "viem";
import type { BoundChallenge } from "./binding.ts";
import { logger } from "../../log/index.ts";
import { AttestationError } from "./errors.ts";
import { keyPurposes, parseX5c, validateChain, type ParsedCert, type ValidatedChain, type VendorRoot } from "./chain.ts";
import { compareVersions, EvidenceClaimsSchema, type AttestationPolicy, type EvidenceClaims } from "./policy.ts";
import {
  attestedBand,
  bandFactors,
  EVIDENCE_KEY_PURPOSES,
  EVIDENCE_TIER,
  EVIDENCE_TYPES,
  tierOf,
  type BandFactors,
  type EvidenceType,
  type Tier,
} from "./tiers.ts";

const log = logger("attestation");

export type Challenge = {
  /** base64url, at least 128 bits of randomness. */
  readonly nonce: string;
  readonly issuedAt: Date;
};

/** A fresh 256-bit challenge. */
export function createChallenge(now: Date): Challenge {
  return { nonce: randomBytes(32).toString("base64url"), issuedAt: now };
}

/** A root trusted for one evidence type: a key chained to it mints at most that type's tier. */
export type TrustAnchor = { readonly type: EvidenceType; readonly root: VendorRoot };

export type VerifyContext = {
  /** Roots per evidence type. The same root may appear for several types; the leaf's key purpose picks one. */
  readonly anchors: readonly TrustAnchor[];
  readonly policy: AttestationPolicy;
  /** A plain challenge, or one bound to a provider's request (bindingChallenge): then the nonce is the binding. */
  readonly challenge: Challenge | BoundChallenge;
  readonly now: Date;
  /** Nonces this verifier already accepted; an accepted nonce is added, a second one is challenge-reused. */
  readonly seen?: Set<string>;
};

export type AttestationVerdict = {
  /** The weaker of the verified evidence type's tier and the tier the claims describe. */
  readonly tier: Exclude<Tier, 4>;
  /** What the verified key may attest (its key purpose under a root trusted for that type). */
  readonly evidenceType: EvidenceType;
  readonly band: number;
  readonly factors: BandFactors;
  /** keccak256 of the token bytes, as recorded on chain. */
  readonly evidenceHash: Hex;
  /** Unix seconds: the earlier of the token's exp and the chain's earliest notAfter. */
  readonly expiresAt: bigint;
  readonly claims: EvidenceClaims;
  /** SHA-256 of the signing (leaf) certificate's public key: the attested device's identity. */
  readonly leafKeyHash: Hex;
  /** For a bound challenge: the provider the evidence is bound to, and the binding. */
  readonly provider?: Address;
  readonly binding?: Hex;
};

function mapJoseError(err: unknown): AttestationError {
  if (err instanceof joseErrors.JWTExpired) return new AttestationError("token-expired", "evidence token has expired", { cause: err });
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new AttestationError("bad-signature", "evidence token signature does not verify with the leaf certificate key", { cause: err });
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed || err instanceof joseErrors.JOSENotSupported) {
    return new AttestationError("unsupported-algorithm", "evidence token algorithm not allowed", { cause: err });
  }
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === "nbf" || err.claim === "iat") {
      return new AttestationError("token-not-yet-valid", `evidence token ${err.claim} is in the future`, { cause: err });
    }
    return new AttestationError("claims-invalid", `evidence token claim ${err.claim} is invalid`, { cause: err });
  }
  if (err instanceof AttestationError) return err;
  return new AttestationError("malformed-token", "evidence token is not a valid compact JWT", { cause: err });
}

function enforcePolicy(c: EvidenceClaims, policy: AttestationPolicy): void {
  if (!policy.allowedPlatforms.includes(c.platform)) {
    throw new AttestationError("claims-invalid", `platform ${c.platform} is not accepted by policy`);
  }
  if (c.cc_mode !== "on") throw new AttestationError("confidential-mode-off", `confidential computing mode is "${c.cc_mode}"`);
  if (c.debug) throw new AttestationError("debug-enabled", "device reports debug mode enabled");
  for (const [component, allowed] of Object.entries(policy.measurements)) {
    const got = c.measurements[component];
    const norm = (h: string) => h.toLowerCase().replace(/^0x/, "");
    if (got === undefined) throw new AttestationError("measurement-mismatch", `measurement "${component}" is missing`);
    if (!allowed.some((a) => norm(a) === norm(got))) {
      throw new AttestationError("measurement-mismatch", `measurement "${component}" is not on the allow-list`, { details: `got ${got}` });
    }
  }
  if (compareVersions(c.driver_version, policy.minDriverVersion) < 0) {
    throw new AttestationError("driver-too-old", `driver ${c.driver_version} is older than ${policy.minDriverVersion}`);
  }
  if (compareVersions(c.firmware_version, policy.minFirmwareVersion) < 0) {
    throw new AttestationError("firmware-too-old", `firmware ${c.firmware_version} is older than ${policy.minFirmwareVersion}`);
  }
  // INVARIANT: data crossing between devices of a multi-GPU job is encrypted
  if (c.gpu_count > 1 && !c.device_links_encrypted) {
    throw new AttestationError("device-links-unencrypted", `${c.gpu_count} devices without encrypted device links`);
  }
  const part = c.partitioning.mode === "none" ? "none" : `mig:${c.partitioning.profile}`;
  const partOk = policy.allowedPartitioning.some((a) => a === part || (a === "mig:*" && part.startsWith("mig:")));
  if (!partOk) throw new AttestationError("partitioning-not-allowed", `partitioning ${part} is not allowed by policy`);
}

const ANY_PURPOSE = "2.5.29.37.0";

/** The one evidence type the leaf key may sign, from its extended key usage. */
function evidenceTypeOf(leaf: ParsedCert): EvidenceType {
  const purposes = keyPurposes(leaf) ?? [];
  const types = EVIDENCE_TYPES.filter((t) => purposes.includes(EVIDENCE_KEY_PURPOSES[t]));
  // INVARIANT: a key mints a tier only for the one evidence purpose its certificate names
  if (types.length === 0) throw new AttestationError("leaf-key-purpose", "the signing key is not an evidence key (no evidence-type extended key usage)", { details: `EKU ${purposes.join(", ") || "none"}` });
  if (types.length > 1) throw new AttestationError("leaf-key-purpose", `the signing key names ${types.length} evidence types (${types.join(", ")})`);
  return types[0]!;
}

/** Validates the chain against the roots trusted for `type`; the first that the chain ends at. */
async function validateForType(certs: readonly ParsedCert[], type: EvidenceType, anchors: readonly TrustAnchor[], now: Date): Promise<ValidatedChain> {
  const roots = anchors.filter((a) => a.type === type);
  if (roots.length === 0) throw new AttestationError("untrusted-root", `no root is trusted for evidence type ${type}`);
  let last: unknown;
  for (const { root } of roots) {
    try {
      return await validateChain(certs, root, now);
    } catch (err) {
      if (!(err instanceof AttestationError) || err.reason !== "untrusted-root") throw err;
      last = err;
    }
  }
  throw last;
}

/** An issuer whose EKU is constrained must allow the leaf's purpose (EKU chaining). */
function checkIssuerPurposes(certs: readonly ParsedCert[], type: EvidenceType): void {
  for (let i = 1; i < certs.length; i++) {
    const p = keyPurposes(certs[i]!);
    if (p && !p.includes(ANY_PURPOSE) && !p.includes(EVIDENCE_KEY_PURPOSES[type])) {
      throw new AttestationError("leaf-key-purpose", `x5c[${i}] is constrained to other key purposes than ${type}`);
    }
  }
}

/** Verifies attestation evidence; returns the tier and band or throws AttestationError. */
export async function verifyAttestation(token: string, ctx: VerifyContext): Promise<AttestationVerdict> {
  const { policy, anchors, challenge, now } = ctx;
  try {
    if (typeof token !== "string" || token.split(".").length !== 3) {
      throw new AttestationError("malformed-token", "evidence is not a compact JWS (three dot-separated parts)");
    }
    checkJwsUniqueKeys(token, "evidence token");
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch (err) {
      throw new AttestationError("malformed-token", "evidence token header does not decode", { cause: err });
    }
    if (typeof header.alg !== "string" || !(policy.algorithms as readonly string[]).includes(header.alg)) {
      throw new AttestationError("unsupported-algorithm", `algorithm ${String(header.alg)} is not allowed`);
    }
    const certs = parseX5c(header.x5c, policy.maxChainLength);
    const evidenceType = evidenceTypeOf(certs[0]!);
    const { leafKey, notAfter } = await validateForType(certs, evidenceType, anchors, now);
    checkIssuerPurposes(certs, evidenceType);

    let payload: unknown;
    try {
      ({ payload } = await jwtVerify(token, leafKey, {
        algorithms: [...policy.algorithms],
        currentDate: now,
        clockTolerance: policy.clockSkewSeconds,
        requiredClaims: ["iat", "exp"],
      }));
    } catch (err) {
      throw mapJoseError(err);
    }

    const parsed = EvidenceClaimsSchema.safeParse(payload);
    // nonce first: a token for another challenge is stale/mismatched evidence whatever its shape
    const nonce = (payload as { eat_nonce?: unknown }).eat_nonce;
    if (nonce !== challenge.nonce) {
      if ("bound" in challenge) {
        throw new AttestationError("binding-mismatch", `eat_nonce is not the binding of ${challenge.bound.provider}'s request (evidence for another provider, registry, chain or challenge)`);
      }
      throw new AttestationError("nonce-mismatch", "eat_nonce is not this verifier's challenge");
    }
    const ageSeconds = (now.getTime() - challenge.issuedAt.getTime()) / 1000;
    if (ageSeconds > policy.maxNonceAgeSeconds) {
      throw new AttestationError("nonce-stale", `challenge is ${Math.round(ageSeconds)} s old, policy allows ${policy.maxNonceAgeSeconds} s`);
    }
    if (!parsed.success) throw new AttestationError("claims-invalid", "evidence claims do not match the EAT profile", { details: parsed.error.message });
    const claims = parsed.data;
    if (claims.iat > Math.floor(now.getTime() / 1000) + policy.clockSkewSeconds) {
      throw new AttestationError("token-not-yet-valid", "evidence token iat is in the future");
    }
    if (claims.iat + policy.clockSkewSeconds < Math.floor(challenge.issuedAt.getTime() / 1000)) {
      throw new AttestationError("nonce-stale", "evidence was issued before the challenge");
    }
    enforcePolicy(claims, policy);

    // INVARIANT: the tier is what verified (the key's evidence type); a claim can lower it, never raise it
    const tier = Math.max(EVIDENCE_TIER[evidenceType], tierOf(claims.platform)) as Exclude<Tier, 4>;
    const factors = bandFactors(claims, policy);
    const expiresAt = BigInt(Math.min(claims.exp, Math.floor(notAfter.getTime() / 1000)));
    // INVARIANT: one accepted piece of evidence per challenge at this verifier (the chain spends the binding once too)
    if (ctx.seen?.has(challenge.nonce)) throw new AttestationError("challenge-reused", "evidence for this challenge was already accepted");
    ctx.seen?.add(challenge.nonce);
    const bound = "bound" in challenge ? { provider: challenge.bound.provider, binding: challenge.nonce as Hex } : {};
    const leafKeyHash = `0x${createHash("sha256").update(leafKey.export({ type: "spki", format: "der" })).digest("hex")}` as Hex;
    return { tier, evidenceType, band: attestedBand(tier, factors), factors, evidenceHash: keccak256(toHex(token)), expiresAt, claims, leafKeyHash, ...bound };
  } catch (err) {
    const e = err instanceof AttestationError ? err : new AttestationError("malformed-token", "evidence could not be processed", { cause: err });
    log.info({ reason: e.reason }, "attestation evidence rejected");
    throw e;
  }
}
