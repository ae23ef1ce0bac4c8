/**
 * The evidence bundle a provider submits for an attestation request (its keccak256 is the request's evidenceHash), and
 * the one entry point that verifies it for a request: `verifyEvidenceBundle`.
 *
 *   { "version": 1, "provider": "0x..", "sessionKey": "0x..", "authorization": "0x..", "possession": "0x..",
 *     "evidence": { "format": "pouw-eat", "token": "<compact JWS>" }
 *              | { "format": "intel-tdx", "quote": "<hex>", "collateral": { PCS collateral, stapled } }
 *              | { "format": "nvidia-eat", "eat": [["JWT", "<platform token>"], { "GPU-0": "<token>" }] }
 *              | { "format": "amd-sev-snp", "report": "<hex, 0x4A0 bytes>", "vcek"|"ask"|"ark": "<base64 DER>", "crl"?: "<hex>" } }
 *
 * Every format's nonce must be evidenceNonce(request binding, sessionKey) (session.ts): the EAT's `eat_nonce`, or the
 * TD / SNP report's report data (nonce in bytes 0..31, bytes 32..63 zero). The tier is the format's evidence type, never a
 * claim: nvidia-eat -> 1 (accelerator-cc-report), intel-tdx and amd-sev-snp -> 2 (cvm-quote), pouw-eat -> the EKU
 * (eat.ts). A format the verifier has no trust configuration for mints nothing (`untrusted-root`).
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
import { attestedBand, EVIDENCE_TIER, type EvidenceType } from "./tiers.ts";
import { verifyAttestation, type TrustAnchor } from "./eat.ts";
import type { AttestationPolicy } from "./policy.ts";
import { verifyTdxQuote, type TdxPolicy } from "./formats/tdx.ts";
import { verifyNvidiaEat, type NvidiaPolicy } from "./formats/nvidia.ts";
import { verifySevSnp, type SevSnpPolicy } from "./formats/sev-snp.ts";

export const EVIDENCE_FORMATS = ["pouw-eat", "intel-tdx", "nvidia-eat", "amd-sev-snp"] as const;
export type EvidenceFormat = (typeof EVIDENCE_FORMATS)[number];

const address = z.string().refine((s) => isAddress(s), "an address");
/** Whole bytes only: Node's hex decoder drops an odd last nibble, so "ab0" and "ab" would be one quote under two hashes. */
const hexBytes = z.string().regex(/^(0x)?([0-9a-fA-F]{2})+$/, "hex, whole bytes");
const signature = z.string().regex(/^0x[0-9a-fA-F]{130}$/, "a 65-byte signature");

export const EvidenceBundleSchema = z
  .object({
    version: z.literal(1),
    provider: address,
    sessionKey: address,
    authorization: signature,
    possession: signature,
    evidence: z.discriminatedUnion("format", [
      z.object({ format: z.literal("pouw-eat"), token: z.string().min(1) }).strict(),
      z.object({ format: z.literal("intel-tdx"), quote: hexBytes, collateral: z.unknown() }).strict(),
      z.object({ format: z.literal("nvidia-eat"), eat: z.unknown() }).strict(),
      z
        .object({
          format: z.literal("amd-sev-snp"),
          report: hexBytes,
          vcek: z.base64(),
          ask: z.base64(),
          ark: z.base64(),
          crl: hexBytes.optional(),
        })
        .strict(),
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

/**
 * The first key that occurs twice in one object of `text` (valid JSON), compared after unescaping, or undefined.
 * JSON.parse keeps the last of two equal keys; another reader may keep the first, so the bytes the request's hash fixes
 * would mean two bundles.
 */
export function duplicateJsonKey(text: string): string | undefined {
  const stack: { keys: Set<string> | undefined; expectKey: boolean }[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const top = stack[stack.length - 1];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return key;
        top.keys.add(key);
        top.expectKey = false;
      }
      i = j;
    } else if (c === "{") stack.push({ keys: new Set(), expectKey: true });
    else if (c === "[") stack.push({ keys: undefined, expectKey: false });
    else if (c === "}" || c === "]") stack.pop();
    else if (c === "," && top?.keys) top.expectKey = true;
  }
  return undefined;
}

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
  } else if (ev.format === "intel-tdx") {
    const t = ctx.trust.intelTdx ?? untrusted(ev.format);
    const v = await verifyTdxQuote(Buffer.from(ev.quote.replace(/^0x/, ""), "hex"), ev.collateral, ctx.now, t);
    // INVARIANT: the TD's report data is exactly the nonce followed by zeros: no other reading of the 64 bytes binds
    if (v.reportData.toLowerCase() !== `${nonce}${"0".repeat(64)}`) throw mismatch("the TD report data");
    evidenceType = v.evidenceType;
    tier = EVIDENCE_TIER[evidenceType];
    band = attestedBand(tier, { driver: true, firmware: true, tcb: v.tcbStatus === "UpToDate", exclusive: true });
    expiresAt = BigInt(v.expiresAt);
    details = { tcbStatus: v.tcbStatus, advisoryIds: v.advisoryIds, mrTd: v.mrTd, pckKeyHash: v.pckKeyHash };
    // the PPID, not the PCK key: one platform has a PCK key per TCB level at or below its own
    deviceIds = [`intel-ppid:${v.ppid}`];
  } else if (ev.format === "amd-sev-snp") {
    const t = ctx.trust.amdSevSnp ?? untrusted(ev.format);
    const hex = (x: string) => Buffer.from(x.replace(/^0x/, ""), "hex");
    const v = await verifySevSnp({ report: hex(ev.report), vcek: Buffer.from(ev.vcek, "base64"), ask: Buffer.from(ev.ask, "base64"), ark: Buffer.from(ev.ark, "base64"), ...(ev.crl ? { crl: hex(ev.crl) } : {}) }, t, ctx.now);
    if (v.reportData.toLowerCase() !== `${nonce}${"0".repeat(64)}`) throw mismatch("the SNP report data");
    evidenceType = v.evidenceType;
    tier = EVIDENCE_TIER[evidenceType];
    band = attestedBand(tier, { driver: true, firmware: true, tcb: v.tcbCurrent, exclusive: true });
    expiresAt = BigInt(v.expiresAt);
    details = { measurement: v.measurement, tcbCurrent: v.tcbCurrent };
    deviceIds = [`amd-chip:${v.chipId}`];
  } else {
    const t = ctx.trust.nvidia ?? untrusted(ev.format);
    const v = await verifyNvidiaEat(ev.eat, t, ctx.now);
    if (v.nonce !== nonce) throw mismatch("eat_nonce");
    evidenceType = v.evidenceType;
    tier = EVIDENCE_TIER[evidenceType];
    band = attestedBand(tier, { ...v.factors, tcb: true, exclusive: true });
    expiresAt = BigInt(v.expiresAt);
    details = { gpus: v.gpus };
    deviceIds = v.gpus.map((g) => `nvidia-ueid:${g.ueid}`);
  }
  // INVARIANT: one accepted bundle per nonce at this verifier (the chain spends the binding once too)
  if (ctx.seen?.has(nonce)) throw new AttestationError("challenge-reused", "evidence for this binding and session key was already accepted");
  ctx.seen?.add(nonce);
  return { format: ev.format, evidenceType, tier, band, evidenceHash: keccak256(bytes), expiresAt, provider, binding, sessionKey, deviceIds, details };
}
