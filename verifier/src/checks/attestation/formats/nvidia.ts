/**
 * NVIDIA GPU evidence as the remote attestation service (NRAS) returns it: a detached EAT bundle
 *
 *   [["JWT", <platform token>], { "GPU-0": <GPU token>, "GPU-1": ... }]
 *
 * every token ES384-signed by a key named by its `kid` in NRAS's JWKS, which the verifier pins (configuration: the JWKS
 * document, so a key rotation is a configuration change, never a fetch). The platform token carries
 * `x-nvidia-overall-att-result`, `eat_nonce` and `submods` { "GPU-i": ["DIGEST", ["SHA256", hex sha256(GPU token)]] }, so
 * the GPU tokens are bound to it; each GPU token carries `measres` (reference measurements matched), `dbgstat`,
 * `secboot`, `x-nvidia-gpu-arch-check`, the driver version (decimal, 550.90.07) and the VBIOS version (hexadecimal fields,
 * 96.00.9F.00.04) and the same `eat_nonce`.
 *
 * What a verdict here proves: NVIDIA's service checked the GPU's SPDM report against the GPU's device certificate chain
 * (NVIDIA device identity root, OCSP at NVIDIA) and its reference measurements, for this nonce. The root of trust is the
 * pinned NRAS signing key, not the device key: this verifier does not re-check the SPDM report itself. Revocation: NRAS
 * tokens are short-lived and the record expires with the earliest `exp`.
 */
import { createHash } from "node:crypto";
import { decodeProtectedHeader, importJWK, jwtVerify, errors as joseErrors, type JWK } from "jose";
import { checkJwsUniqueKeys } from "../json.ts";
import { z } from "zod";
import { AttestationError } from "../errors.ts";
import { compareVersions } from "../policy.ts";

export const NRAS_ISSUER = "https://nras.attestation.nvidia.com";

const decimalVersion = z.string().regex(/^\d+(\.\d+)*$/, "dotted decimal version, e.g. 550.90.07");
const hexVersion = z.string().regex(/^[0-9A-Fa-f]+(\.[0-9A-Fa-f]+)*$/, "dotted hexadecimal version, e.g. 96.00.9F.00.04");

export const NvidiaPolicySchema = z
  .object({
    /** The NRAS JWKS document ({ keys: [...] }), pinned: a kid outside it is refused. */
    jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1) }),
    issuer: z.string().min(1).default(NRAS_ISSUER),
    minDriverVersion: decimalVersion,
    minVbiosVersion: hexVersion,
    recommendedDriverVersion: decimalVersion.optional(),
    recommendedVbiosVersion: hexVersion.optional(),
    clockSkewSeconds: z.number().int().min(0).max(600).default(30),
    maxGpus: z.number().int().min(1).max(64).default(8),
  })
  .strict();
export type NvidiaPolicy = z.output<typeof NvidiaPolicySchema>;

/** Compares dotted hexadecimal versions (VBIOS: 96.00.9F.00.04): negative, zero or positive like a comparator. */
export function compareHexVersions(a: string, b: string): number {
  const pa = a.split(".").map((x) => parseInt(x, 16));
  const pb = b.split(".").map((x) => parseInt(x, 16));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const DetachedEatSchema = z.tuple([z.tuple([z.literal("JWT"), z.string().min(1)]), z.record(z.string().regex(/^GPU-\d+$/), z.string().min(1))]);

const GpuClaimsSchema = z
  .object({
    eat_nonce: z.string().min(1),
    measres: z.string(),
    dbgstat: z.string(),
    secboot: z.boolean(),
    "x-nvidia-gpu-arch-check": z.boolean(),
    "x-nvidia-gpu-driver-version": decimalVersion,
    "x-nvidia-gpu-vbios-version": hexVersion,
    /**
     * The GPU's unique device id (EAT ueid). Required: a verdict that names no device cannot show one GPU attesting for
     * several providers (the auditor's device ledger keys on it).
     */
    ueid: z.string().min(1),
    exp: z.number().int(),
  })
  .loose();

const PlatformClaimsSchema = z
  .object({
    eat_nonce: z.string().min(1),
    "x-nvidia-overall-att-result": z.boolean(),
    submods: z.record(z.string(), z.tuple([z.literal("DIGEST"), z.tuple([z.literal("SHA256"), z.string().regex(/^[0-9a-fA-F]{64}$/)])])),
    exp: z.number().int(),
  })
  .loose();

export type NvidiaVerdict = {
  readonly evidenceType: "accelerator-cc-report";
  /** The nonce every token carries (lowercase hex, 0x-prefixed). */
  readonly nonce: string;
  readonly gpus: readonly { readonly id: string; readonly driver: string; readonly vbios: string; readonly ueid: string }[];
  readonly factors: { driver: boolean; firmware: boolean };
  readonly expiresAt: number;
};

async function verifyToken(token: string, what: string, policy: NvidiaPolicy, now: Date): Promise<Record<string, unknown>> {
  checkJwsUniqueKeys(token, what);
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch (err) {
    throw new AttestationError("malformed-token", `${what} header does not decode`, { cause: err });
  }
  if (header.alg !== "ES384") throw new AttestationError("unsupported-algorithm", `${what} is signed ${String(header.alg)}, NRAS signs ES384`);
  const jwk = policy.jwks.keys.find((k) => k.kid === header.kid) as JWK | undefined;
  // INVARIANT: only a key of the pinned JWKS speaks for NVIDIA
  if (jwk === undefined) throw new AttestationError("key-unknown", `${what} kid ${JSON.stringify(header.kid)} is not in the pinned JWKS`);
  let key: Awaited<ReturnType<typeof importJWK>>;
  try {
    key = await importJWK(jwk, "ES384");
  } catch (err) {
    throw new AttestationError("policy-invalid", `JWKS key ${String(header.kid)} does not import as an ES384 key`, { cause: err });
  }
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ["ES384"], issuer: policy.issuer, currentDate: now, clockTolerance: policy.clockSkewSeconds, requiredClaims: ["iat", "exp"] });
    return payload as Record<string, unknown>;
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw new AttestationError("token-expired", `${what} has expired`, { cause: err });
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) throw new AttestationError("bad-signature", `${what} signature does not verify with JWKS key ${String(header.kid)}`, { cause: err });
    if (err instanceof joseErrors.JWTClaimValidationFailed) {
      if (err.claim === "iat" || err.claim === "nbf") throw new AttestationError("token-not-yet-valid", `${what} ${err.claim} is in the future`, { cause: err });
      throw new AttestationError("claims-invalid", `${what} claim ${err.claim} is invalid (${err.reason})`, { cause: err });
    }
    throw new AttestationError("malformed-token", `${what} is not a valid compact JWT`, { cause: err });
  }
}

const normNonce = (n: string) => `0x${n.toLowerCase().replace(/^0x/, "")}`;

/** Verifies a detached EAT bundle at `now`; the caller checks the nonce it returns. */
export async function verifyNvidiaEat(eat: unknown, policy: NvidiaPolicy, now: Date): Promise<NvidiaVerdict> {
  const shape = DetachedEatSchema.safeParse(eat);
  if (!shape.success) throw new AttestationError("bundle-invalid", "NVIDIA evidence is not a detached EAT bundle [[\"JWT\", token], {\"GPU-0\": token, ...}]", { details: shape.error.message });
  const [[, platformToken], gpuTokens] = shape.data;
  const ids = Object.keys(gpuTokens).sort();
  if (ids.length === 0) throw new AttestationError("bundle-invalid", "the detached EAT bundle has no GPU token");
  if (ids.length > policy.maxGpus) throw new AttestationError("bundle-invalid", `${ids.length} GPU tokens, policy allows ${policy.maxGpus}`);

  const platform = PlatformClaimsSchema.safeParse(await verifyToken(platformToken, "platform token", policy, now));
  if (!platform.success) throw new AttestationError("claims-invalid", "the platform token's claims are not NRAS's", { details: platform.error.message });
  const p = platform.data;
  if (p["x-nvidia-overall-att-result"] !== true) throw new AttestationError("gpu-evidence-failed", "x-nvidia-overall-att-result is false");
  // INVARIANT: the GPU tokens are exactly the ones the signed platform token names, by digest
  const named = Object.keys(p.submods).sort();
  if (named.join(",") !== ids.join(",")) throw new AttestationError("claims-invalid", `the platform token names GPUs [${named.join(", ")}], the bundle holds [${ids.join(", ")}]`);
  const nonce = normNonce(p.eat_nonce);
  const gpus: { id: string; driver: string; vbios: string; ueid: string }[] = [];
  let expiresAt = p.exp;
  const factors = { driver: true, firmware: true };
  for (const id of ids) {
    const token = gpuTokens[id]!;
    const digest = createHash("sha256").update(token, "utf8").digest("hex");
    if (digest !== p.submods[id]![1][1].toLowerCase()) throw new AttestationError("claims-invalid", `${id}'s token is not the one the platform token's digest names`);
    const parsed = GpuClaimsSchema.safeParse(await verifyToken(token, `${id} token`, policy, now));
    if (!parsed.success) throw new AttestationError("claims-invalid", `${id}'s claims are not NRAS's GPU claims`, { details: parsed.error.message });
    const g = parsed.data;
    if (normNonce(g.eat_nonce) !== nonce) throw new AttestationError("binding-mismatch", `${id}'s eat_nonce is not the platform token's`);
    if (g.measres !== "success") throw new AttestationError("measurement-mismatch", `${id} measres is ${JSON.stringify(g.measres)}`);
    if (g.dbgstat !== "disabled") throw new AttestationError("debug-enabled", `${id} dbgstat is ${JSON.stringify(g.dbgstat)}`);
    if (!g.secboot) throw new AttestationError("gpu-evidence-failed", `${id} secure boot is off`);
    if (!g["x-nvidia-gpu-arch-check"]) throw new AttestationError("gpu-evidence-failed", `${id} failed the architecture check`);
    const driver = g["x-nvidia-gpu-driver-version"];
    const vbios = g["x-nvidia-gpu-vbios-version"];
    if (compareVersions(driver, policy.minDriverVersion) < 0) throw new AttestationError("driver-too-old", `${id} driver ${driver} is older than ${policy.minDriverVersion}`);
    if (compareHexVersions(vbios, policy.minVbiosVersion) < 0) throw new AttestationError("firmware-too-old", `${id} VBIOS ${vbios} is older than ${policy.minVbiosVersion}`);
    if (policy.recommendedDriverVersion && compareVersions(driver, policy.recommendedDriverVersion) < 0) factors.driver = false;
    if (policy.recommendedVbiosVersion && compareHexVersions(vbios, policy.recommendedVbiosVersion) < 0) factors.firmware = false;
    expiresAt = Math.min(expiresAt, g.exp);
    // INVARIANT: each GPU token is a distinct device (one GPU counted twice is one device)
    if (gpus.some((x) => x.ueid === g.ueid)) throw new AttestationError("claims-invalid", `${id} has the ueid of another GPU token of this bundle`);
    gpus.push({ id, driver, vbios, ueid: g.ueid });
  }
  return { evidenceType: "accelerator-cc-report", nonce, gpus, factors, expiresAt };
}
