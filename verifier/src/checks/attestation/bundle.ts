/**
 * The evidence bundle a provider submits for an attestation request (its keccak256 is the request's evidenceHash), and
 * the one entry point that verifies it for a request: `verifyEvidenceBundle`.
 *
 *   { "version": 1, "provider": "0x..", "sessionKey": "0x..", "authorization": "0x..", "possession": "0x..",
 *     "evidence": { "format": "pouw-eat", "token": "<compact JWS>" }
 *              | { "format": "intel-tdx", "quote": "<hex>", "collateral": { PCS collateral, stapled } }
 *              | { "format": "nvidia-eat", "eat": [["JWT", "<platform token>"], { "GPU-0": "<token>" }] }
 *              | { "format": "amd-sev-snp", "report": "<hex, 0x4A0 bytes>", "vcek"|"ask"|"ark": "<base64 DER>", "crl"?: "<hex>" }
 *              | { "format": "composite", "cvm": <an intel-tdx or amd-sev-snp evidence>, "gpu": <a nvidia-eat evidence> } }
 *
 * Every format's nonce must be evidenceNonce(request binding, sessionKey) (session.ts): the EAT's `eat_nonce`, or the
 * TD / SNP report's report data (nonce in bytes 0..31, bytes 32..63 zero). The tier is the format's, never a claim,
 * and stronger evidence never gets a worse tier: composite (a CVM quote and NVIDIA GPU evidence, both carrying the one
 * nonce, so both bound to the one session key made inside the CVM) -> 1, only under a trust file that pins the CVM
 * image (requireImageMeasurements); nvidia-eat alone -> 2 (GPU_ONLY_REASON: the GPUs are attested, the host that holds
 * the session key and feeds them is not); intel-tdx or amd-sev-snp alone -> at most 3 (CVM_ONLY_REASON); pouw-eat ->
 * the EKU (eat.ts). A format the verifier has no trust configuration for mints nothing (`untrusted-root`).
 *
 * @example
 *   const q = await getAttestationRequest(client, { providerRegistry, requestId });
 *   const v = await verifyEvidenceBundle(bytes, { trust, request: q, challengeIssuedAt, now: new Date() });
 *   const att = attestationStatement(v, q, BigInt(nowSeconds));
 */
import { getAddress, isAddress, keccak256, type Address, type Hex } from "viem";
import { z } from "zod";
import { AttestationError } from "./errors.ts";
import { checkSessionKey, evidenceNonce } from "./session.ts";
import { duplicateJsonKey } from "./json.ts";
import { attestedBand, type EvidenceType } from "./tiers.ts";
import { verifyAttestation, type TrustAnchor } from "./eat.ts";
import type { AttestationPolicy } from "./policy.ts";
import { verifyTdxQuote, type TdxPolicy } from "./formats/tdx.ts";
import { verifyNvidiaEat, type NvidiaPolicy } from "./formats/nvidia.ts";
import { verifySevSnp, type SevSnpPolicy } from "./formats/sev-snp.ts";

export const EVIDENCE_FORMATS = ["pouw-eat", "intel-tdx", "nvidia-eat", "amd-sev-snp", "composite"] as const;
export type EvidenceFormat = (typeof EVIDENCE_FORMATS)[number];

const address = z.string().refine((s) => isAddress(s), "an address");
/** Whole bytes only: Node's hex decoder drops an odd last nibble, so "ab0" and "ab" would be one quote under two hashes. */
const hexBytes = z.string().regex(/^(0x)?([0-9a-fA-F]{2})+$/, "hex, whole bytes");
const signature = z.string().regex(/^0x[0-9a-fA-F]{130}$/, "a 65-byte signature");

const TdxEvidenceSchema = z.object({ format: z.literal("intel-tdx"), quote: hexBytes, collateral: z.unknown() }).strict();
const SevSnpEvidenceSchema = z
  .object({
    format: z.literal("amd-sev-snp"),
    report: hexBytes,
    vcek: z.base64(),
    ask: z.base64(),
    ark: z.base64(),
    crl: hexBytes.optional(),
  })
  .strict();
const NvidiaEvidenceSchema = z.object({ format: z.literal("nvidia-eat"), eat: z.unknown() }).strict();

export const EvidenceBundleSchema = z
  .object({
    version: z.literal(1),
    provider: address,
    sessionKey: address,
    authorization: signature,
    possession: signature,
    evidence: z.discriminatedUnion("format", [
      z.object({ format: z.literal("pouw-eat"), token: z.string().min(1) }).strict(),
      TdxEvidenceSchema,
      NvidiaEvidenceSchema,
      SevSnpEvidenceSchema,
      /** A CVM quote and the GPU evidence of the GPUs it drives, both bound to the one session key (tier 1). */
      z.object({ format: z.literal("composite"), cvm: z.discriminatedUnion("format", [TdxEvidenceSchema, SevSnpEvidenceSchema]), gpu: NvidiaEvidenceSchema }).strict(),
    ]),
  })
  .strict();
export type EvidenceBundle = z.output<typeof EvidenceBundleSchema>;

/** What this verifier trusts, per format; a format left out mints nothing. */
export type EvidenceTrust = {
  readonly pouwEat?: { readonly anchors: readonly TrustAnchor[]; readonly policy: AttestationPolicy };
  readonly intelTdx?: TdxPolicy;
  readonly nvidia?: NvidiaPolicy;
  readonly amdSevSnp?: SevSnpPolicy;
};

export type BundleContext = {
  readonly trust: EvidenceTrust;
  /** The request the bundle answers (getAttestationRequest): its provider and binding. */
  readonly request: { readonly provider: Address; readonly binding: Hex };
  /** When the challenge became known (the challenge block's time): evidence older than it is refused where dated. */
  readonly challengeIssuedAt: Date;
  readonly now: Date;
  /** Evidence nonces this verifier already accepted (replay across requests is also refused on chain). */
  readonly seen?: Set<string>;
};

export type BundleVerdict = {
  readonly format: EvidenceFormat;
  readonly evidenceType: EvidenceType;
  readonly tier: 1 | 2 | 3;
  readonly band: number;
  /** keccak256 of the bundle bytes: the request's evidenceHash. */
  readonly evidenceHash: Hex;
  /** Unix seconds: the earliest expiry of the evidence, its chain and its revocation data. */
  readonly expiresAt: bigint;
  readonly provider: Address;
  /** The request binding (not the evidence nonce): what attestationStatement checks against the request. */
  readonly binding: Hex;
  readonly sessionKey: Address;
  /**
   * The attested devices' identities, as far as the format states them: "nvidia-ueid:<ueid>" per GPU, "amd-chip:<hex>",
   * "intel-ppid:<PPID>", "x5c-leaf:<sha256 of the leaf key>". One device attesting for several providers
   * shows as the same id (attest/ keeps a ledger).
   */
  readonly deviceIds: readonly string[];
  /** Format-specific facts for the operator (TCB status, GPU versions, ...). */
  readonly details: Record<string, unknown>;
};

export { duplicateJsonKey } from "./json.ts";

/** Parses bundle bytes; throws AttestationError("bundle-invalid"). */
export function parseEvidenceBundle(bytes: Uint8Array): EvidenceBundle {
  let raw: unknown;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    raw = JSON.parse(text);
  } catch (err) {
    throw new AttestationError("bundle-invalid", "the evidence bundle is not JSON (UTF-8)", { cause: err });
  }
  // INVARIANT: one reading of the bytes the request's evidenceHash fixes
  const dup = duplicateJsonKey(text);
  if (dup !== undefined) throw new AttestationError("bundle-invalid", `the evidence bundle repeats the key ${JSON.stringify(dup)} in one object`);
  const r = EvidenceBundleSchema.safeParse(raw);
  if (!r.success) throw new AttestationError("bundle-invalid", "the evidence bundle does not match the bundle schema", { details: z.prettifyError(r.error) });
  return r.data;
}

function untrusted(format: EvidenceFormat): never {
  throw new AttestationError("untrusted-root", `this verifier has no trust configuration for ${format} evidence`);
}

/** The tier of NVIDIA GPU evidence without a CVM quote, and why: below composite evidence, which proves the same GPUs
 * plus the confidential VM that holds the session key. */
export const GPU_ONLY_TIER = 2;
export const GPU_ONLY_REASON = "NVIDIA GPU evidence without a CVM quote bound to the same session key attests the GPUs, not the host that holds the session key and feeds them: tier 2 (tier 1 needs the composite format)";
/** The tier of composite evidence (a pinned-image CVM quote and NVIDIA GPU evidence bound to one session key). */
export const COMPOSITE_TIER = 1;

/** The highest tier a CVM quote without GPU evidence gets, and why. */
export const CVM_ONLY_TIER = 3;
export const CVM_ONLY_REASON = "a CVM quote without NVIDIA GPU evidence bound to the same session key proves no accelerator: at most tier 3 (tiers 1-2 need GPU evidence)";

/**
 * Throws policy-invalid when the trust configuration of CVM format `format` names no required image measurements: a
 * tier 1-2 statement says "this image", so an auditor that accepts any image cannot sign one.
 */
export function requireImageMeasurements(format: "intel-tdx" | "amd-sev-snp", trust: EvidenceTrust): void {
  if (format === "intel-tdx") {
    const t = trust.intelTdx;
    if (t && (!t.allowedMrTd?.length || !t.allowedRtmrs?.length)) {
      throw new AttestationError("policy-invalid", "the trust file's intelTdx names no required image measurements (allowedMrTd and allowedRtmrs): refused for tiers 1-2");
    }
  } else {
    const t = trust.amdSevSnp;
    if (t && !t.allowedMeasurements?.length) {
      throw new AttestationError("policy-invalid", "the trust file's amdSevSnp names no required image measurement (allowedMeasurements): refused for tiers 1-2");
    }
    // INVARIANT: a top tier names the patch levels it accepts; the product-independent default floor is for tier 3
    if (t && t.minTcb === undefined) {
      throw new AttestationError("policy-invalid", "the trust file's amdSevSnp names no minimum TCB (minTcb, from AMD's security bulletins for the product line): refused for tiers 1-2");
    }
  }
}

type Mismatch = (what: string) => AttestationError;
type Part = { expiresAt: bigint; details: Record<string, unknown>; deviceIds: string[] };

/** A CVM quote whose report data is `nonce` followed by 32 zero bytes. */
async function verifyCvm(ev: z.output<typeof TdxEvidenceSchema> | z.output<typeof SevSnpEvidenceSchema>, ctx: BundleContext, nonce: Hex, mismatch: Mismatch): Promise<Part & { tcbOk: boolean }> {
  if (ev.format === "intel-tdx") {
    const t = ctx.trust.intelTdx ?? untrusted(ev.format);
    const v = await verifyTdxQuote(Buffer.from(ev.quote.replace(/^0x/, ""), "hex"), ev.collateral, ctx.now, t);
    // INVARIANT: the TD's report data is exactly the nonce followed by zeros: no other reading of the 64 bytes binds
    if (v.reportData.toLowerCase() !== `${nonce}${"0".repeat(64)}`) throw mismatch("the TD report data");
    return {
      tcbOk: v.tcbStatus === "UpToDate",
      expiresAt: BigInt(v.expiresAt),
      details: { format: ev.format, tcbStatus: v.tcbStatus, advisoryIds: v.advisoryIds, mrTd: v.mrTd, rtmrs: v.rtmrs, pckKeyHash: v.pckKeyHash },
      // the PPID, not the PCK key: one platform has a PCK key per TCB level at or below its own
      deviceIds: [`intel-ppid:${v.ppid}`],
    };
  }
  const t = ctx.trust.amdSevSnp ?? untrusted(ev.format);
  const hex = (x: string) => Buffer.from(x.replace(/^0x/, ""), "hex");
  const v = await verifySevSnp({ report: hex(ev.report), vcek: Buffer.from(ev.vcek, "base64"), ask: Buffer.from(ev.ask, "base64"), ark: Buffer.from(ev.ark, "base64"), ...(ev.crl ? { crl: hex(ev.crl) } : {}) }, t, ctx.now);
  if (v.reportData.toLowerCase() !== `${nonce}${"0".repeat(64)}`) throw mismatch("the SNP report data");
  return { tcbOk: v.tcbCurrent, expiresAt: BigInt(v.expiresAt), details: { format: ev.format, measurement: v.measurement, tcbCurrent: v.tcbCurrent }, deviceIds: [`amd-chip:${v.chipId}`] };
}

/** NVIDIA GPU evidence whose every token's nonce is `nonce`. */
async function verifyGpu(ev: z.output<typeof NvidiaEvidenceSchema>, ctx: BundleContext, nonce: Hex, mismatch: Mismatch): Promise<Part & { factors: { driver: boolean; firmware: boolean } }> {
  const t = ctx.trust.nvidia ?? untrusted(ev.format);
  const v = await verifyNvidiaEat(ev.eat, t, ctx.now);
  if (v.nonce !== nonce) throw mismatch("eat_nonce");
  return { factors: v.factors, expiresAt: BigInt(v.expiresAt), details: { gpus: v.gpus }, deviceIds: v.gpus.map((g) => `nvidia-ueid:${g.ueid}`) };
}

/** Verifies `bytes` (an evidence bundle) for `ctx.request`; throws AttestationError with the reason. */
export async function verifyEvidenceBundle(bytes: Uint8Array, ctx: BundleContext): Promise<BundleVerdict> {
  const bundle = parseEvidenceBundle(bytes);
  const provider = getAddress(ctx.request.provider);
  const binding = ctx.request.binding.toLowerCase() as Hex;
  // INVARIANT: a bundle speaks for the provider whose request it answers (relay: A's bundle submitted for B)
  if (getAddress(bundle.provider) !== provider) throw new AttestationError("binding-mismatch", `the bundle is ${getAddress(bundle.provider)}'s, the request is ${provider}'s`);
  const sessionKey = getAddress(bundle.sessionKey);
  await checkSessionKey({ sessionKey, authorization: bundle.authorization as Hex, possession: bundle.possession as Hex }, provider, binding);
  const nonce = evidenceNonce(binding, sessionKey);
  const mismatch = (what: string) =>
    new AttestationError("binding-mismatch", `${what} is not evidenceNonce(binding, session key) of ${provider}'s request (evidence for another provider, request or session key)`);
  const ev = bundle.evidence;
  let evidenceType: EvidenceType;
  let tier: 1 | 2 | 3;
  let band: number;
  let expiresAt: bigint;
  let details: Record<string, unknown>;
  let deviceIds: string[];
  if (ev.format === "pouw-eat") {
    const t = ctx.trust.pouwEat ?? untrusted(ev.format);
    try {
      const v = await verifyAttestation(ev.token, { anchors: t.anchors, policy: t.policy, challenge: { nonce, issuedAt: ctx.challengeIssuedAt }, now: ctx.now });
      ({ evidenceType, tier, band, expiresAt } = v);
      details = { platform: v.claims.platform, factors: v.factors };
      deviceIds = [`x5c-leaf:${v.leafKeyHash}`];
    } catch (err) {
      if (err instanceof AttestationError && err.reason === "nonce-mismatch") throw mismatch("eat_nonce");
      throw err;
    }
  } else if (ev.format === "intel-tdx" || ev.format === "amd-sev-snp") {
    // INVARIANT: a CVM quote alone proves no accelerator: at most tier 3, whatever the CVM
    const c = await verifyCvm(ev, ctx, nonce, mismatch);
    evidenceType = "cvm-quote";
    tier = CVM_ONLY_TIER;
    band = attestedBand(tier, { driver: true, firmware: true, tcb: c.tcbOk, exclusive: true });
    expiresAt = c.expiresAt;
    details = { ...c.details, tierCap: CVM_ONLY_REASON };
    deviceIds = c.deviceIds;
  } else if (ev.format === "nvidia-eat") {
    const g = await verifyGpu(ev, ctx, nonce, mismatch);
    evidenceType = "accelerator-cc-report";
    // INVARIANT: GPU evidence alone ranks below composite evidence of the same GPUs (stronger evidence, better tier)
    tier = GPU_ONLY_TIER;
    band = attestedBand(tier, { ...g.factors, tcb: true, exclusive: true });
    expiresAt = g.expiresAt;
    details = { ...g.details, tierCap: GPU_ONLY_REASON };
    deviceIds = g.deviceIds;
  } else {
    // INVARIANT: tier 1 names a CVM image the auditor pinned, and GPUs attested for the same session key as the CVM
    requireImageMeasurements(ev.cvm.format, ctx.trust);
    const c = await verifyCvm(ev.cvm, ctx, nonce, mismatch);
    const g = await verifyGpu(ev.gpu, ctx, nonce, mismatch);
    evidenceType = "cvm-quote";
    tier = COMPOSITE_TIER;
    band = attestedBand(tier, { ...g.factors, tcb: c.tcbOk, exclusive: true });
    expiresAt = c.expiresAt < g.expiresAt ? c.expiresAt : g.expiresAt;
    details = { cvm: c.details, gpu: g.details };
    deviceIds = [...c.deviceIds, ...g.deviceIds];
  }
  // INVARIANT: one accepted bundle per nonce at this verifier (the chain spends the binding once too)
  if (ctx.seen?.has(nonce)) throw new AttestationError("challenge-reused", "evidence for this binding and session key was already accepted");
  ctx.seen?.add(nonce);
  return { format: ev.format, evidenceType, tier, band, evidenceHash: keccak256(bytes), expiresAt, provider, binding, sessionKey, deviceIds, details };
}
