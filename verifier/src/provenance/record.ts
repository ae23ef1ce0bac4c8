/**
 * The provenance record of a finalized job (docs/data.md, "Provenance record"): which manifest, which
 * corpora (content ids, licences, proportions), which committed trace, which audit receipts and which
 * final weights. It is written next to the weights as its RFC 8785 canonical JSON bytes, and
 *
 *   recordHash = keccak256(canonical JSON bytes)
 *
 * is anchored on chain with the weights CID (`anchorProvenance(jobId, recordHash, weightsCid)`).
 *
 * IMPORTANT: the file holds exactly the canonical bytes (no pretty-printing, no trailing newline), so
 * the hash is over the file and any changed byte of the file changes it or makes the file
 * non-canonical; both are rejected.
 */
import canonicalizeModule from "canonicalize";
import { getAddress, isAddress, keccak256, toBytes, type Address, type Hex } from "viem";
import { z } from "zod";
import { corpusProportions, manifestHash, parseManifest, type Manifest as ManifestT } from "../ml/manifest.ts";
import { auditReceiptDigest, jobMarketDomain, type AuditReceipt } from "../receipts/index.ts";
import { cidOf } from "../store/index.ts";
import { ProvenanceBuildError, ProvenanceRecordError } from "./errors.ts";
import { weightsStateHash } from "./weights.ts";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

export const PROVENANCE_FORMAT = "pouw-provenance-1";
/** File name of the record next to the weights. */
export const PROVENANCE_FILE = "provenance.json";

const bytes32 = z.string().regex(/^0x[0-9a-f]{64}$/, "must be a lowercase 0x-prefixed 32-byte hex") as unknown as z.ZodType<Hex>;
const cid = z.string().regex(/^b[a-z2-7]{58}$/, "must be a CIDv1 base32 string");
const address = z.string().refine((s) => isAddress(s, { strict: true }) && s === getAddress(s), "must be a checksummed address") as unknown as z.ZodType<Address>;
const decimal = z.string().regex(/^(0|[1-9][0-9]*)$/, "must be a decimal integer string");

export const ProvenanceCorpus = z.strictObject({
  name: z.string().min(1),
  contentId: cid,
  licence: z.string().min(1),
  declaredTokens: z.number().int().positive(),
  /** Share of the job's data (declared, or declaredTokens over their sum). */
  proportion: z.number().gt(0).max(1),
  payoutAddress: z.string(),
});

export const ProvenanceSegment = z.strictObject({
  segment: z.number().int().min(0),
  traceRoot: bytes32,
  endStateHash: bytes32,
  checkpointCid: cid,
});

export const ProvenanceReceipt = z.strictObject({
  segment: z.number().int().min(0),
  auditor: address,
  traceRoot: bytes32,
  checks: z.number().int().min(0),
  sampledSteps: z.number().int().min(0),
  verdict: z.number().int().min(0).max(1),
  /** EIP-712 digest of the AuditReceipt under the receipts' domain (verifyingContract: jobRecords). */
  digest: bytes32,
  signature: z.string().regex(/^0x[0-9a-f]{130}$/, "must be a 65-byte 0x-hex signature") as unknown as z.ZodType<Hex>,
});

export const ProvenanceRecord = z.strictObject({
  format: z.literal(PROVENANCE_FORMAT),
  chainId: z.number().int().positive(),
  jobMarket: address,
  /** JobRecords of the deployment: where the receipts and this record's anchor live (the receipts' EIP-712 domain). */
  jobRecords: address,
  jobId: decimal,
  manifestHash: bytes32,
  manifestUri: z.string().optional(),
  /** The training manifest itself, parsed (defaults filled in): its canonical hash is manifestHash. */
  manifest: z.record(z.string(), z.unknown()),
  corpora: z.array(ProvenanceCorpus).min(1),
  segments: z.array(ProvenanceSegment).min(1),
  receipts: z.array(ProvenanceReceipt),
  weights: z.strictObject({
    /** CIDv1 of the final weights file (a pouw-checkpoint-1 safetensors file: weights and optimizer state). */
    cid,
    bytes: z.number().int().positive(),
    /** The training step of the final state (steps of the manifest). */
    step: z.number().int().positive(),
    /** h(step) of the final weights and optimizer state: equals the last segment's endStateHash. */
    stateHash: bytes32,
  }),
});

export type ProvenanceRecord = z.infer<typeof ProvenanceRecord>;
export type ProvenanceCorpus = z.infer<typeof ProvenanceCorpus>;
export type ProvenanceSegment = z.infer<typeof ProvenanceSegment>;
export type ProvenanceReceipt = z.infer<typeof ProvenanceReceipt>;

/** An audit receipt as the bot stores it: the signed struct, its signer and signature. */
export type SignedReceipt = AuditReceipt & { auditor: Address; signature: Hex };

export type BuildProvenanceInput = {
  chainId: number;
  jobMarket: Address;
  jobRecords: Address;
  jobId: bigint;
  manifest: ManifestT;
  manifestUri?: string;
  /** The job's SegmentCommitted data, one per segment, in any order. */
  segments: readonly { segment: number; traceRoot: Hex; endStateHash: Hex; checkpointCid: string }[];
  receipts?: readonly SignedReceipt[];
  /** Bytes of the final weights file (final.safetensors). */
  weightsBytes: Uint8Array;
};

/** The record's canonical JSON bytes (what is written to disk and hashed). */
export function canonicalRecordBytes(record: ProvenanceRecord): Uint8Array {
  const text = canonicalize(record);
  if (text === undefined) throw new ProvenanceRecordError("record", "provenance record cannot be canonicalised");
  return toBytes(text);
}

/** recordHash = keccak256 of the canonical bytes. */
export function recordHash(record: ProvenanceRecord): Hex {
  return keccak256(canonicalRecordBytes(record));
}

/** The corpora block of a record, from the manifest: content ids, licences and proportions. */
export function provenanceCorpora(manifest: ManifestT): ProvenanceCorpus[] {
  const shares = corpusProportions(manifest.corpora);
  return manifest.corpora.map((c, i) => ({
    name: c.name,
    contentId: c.contentId,
    licence: c.licence,
    declaredTokens: c.declaredTokens,
    proportion: shares[i]!,
    payoutAddress: c.payoutAddress,
  }));
}

/**
 * Builds the record of a job from what the chain and the provider's files say. Throws
 * ProvenanceBuildError when the inputs disagree (segments missing, weights not the committed final state).
 *
 * @example
 *   const record = buildProvenanceRecord({ chainId, jobMarket, jobRecords, jobId, manifest, segments: commits, weightsBytes });
 *   const { recordHash } = await writeProvenance(outDir, record);   // then anchorProvenance(jobId, recordHash, record.weights.cid)
 */
export function buildProvenanceRecord(input: BuildProvenanceInput): ProvenanceRecord {
  const m = input.manifest;
  const K = m.training.stepsPerSegment;
  const S = m.training.steps / K;
  const segments = [...input.segments].sort((a, b) => a.segment - b.segment);
  if (segments.length !== S || segments.some((s, i) => s.segment !== i)) {
    throw new ProvenanceBuildError(`job ${input.jobId}: need segments 0..${S - 1}, got [${segments.map((s) => s.segment).join(",")}]`);
  }
  const finalStateHash = weightsStateHash(m, input.jobId, input.weightsBytes, m.training.steps);
  const last = segments[S - 1]!;
  if (finalStateHash !== last.endStateHash) {
    throw new ProvenanceBuildError(`job ${input.jobId}: the weights' state hash ${finalStateHash} is not the committed end state ${last.endStateHash} of segment ${S - 1}`);
  }
  const domain = jobMarketDomain(BigInt(input.chainId), input.jobRecords);
  const receipts = (input.receipts ?? []).map((r) => {
    const seg = segments[r.segment];
    if (!seg || seg.traceRoot.toLowerCase() !== r.traceRoot.toLowerCase()) {
      throw new ProvenanceBuildError(`receipt for segment ${r.segment} names trace root ${r.traceRoot}, not the committed one`);
    }
    return {
      segment: r.segment,
      auditor: getAddress(r.auditor),
      traceRoot: r.traceRoot.toLowerCase() as Hex,
      checks: r.checks,
      sampledSteps: r.sampledSteps,
      verdict: r.verdict,
      digest: auditReceiptDigest(domain, r),
      signature: r.signature.toLowerCase() as Hex,
    };
  });
  receipts.sort((a, b) => a.segment - b.segment || a.auditor.localeCompare(b.auditor));
  const record: ProvenanceRecord = {
    format: PROVENANCE_FORMAT,
    chainId: input.chainId,
    jobMarket: getAddress(input.jobMarket),
    jobRecords: getAddress(input.jobRecords),
    jobId: input.jobId.toString(),
    manifestHash: manifestHash(m),
    ...(input.manifestUri === undefined ? {} : { manifestUri: input.manifestUri }),
    manifest: JSON.parse(JSON.stringify(m)) as Record<string, unknown>,
    corpora: provenanceCorpora(m),
    segments: segments.map((s) => ({ segment: s.segment, traceRoot: s.traceRoot.toLowerCase() as Hex, endStateHash: s.endStateHash.toLowerCase() as Hex, checkpointCid: s.checkpointCid })),
    receipts,
    weights: { cid: cidOf(input.weightsBytes), bytes: input.weightsBytes.length, step: m.training.steps, stateHash: finalStateHash },
  };
  return parseProvenanceRecord(record);
}

/** Validates a parsed record (schema only; consistency is verify.ts's job). Throws ProvenanceRecordError. */
export function parseProvenanceRecord(value: unknown): ProvenanceRecord {
  const r = ProvenanceRecord.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new ProvenanceRecordError("record", `provenance record field ${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`);
  }
  return r.data;
}

/**
 * Parses record file bytes: JSON, schema, and canonical form. Returns the record and the hash of the
 * file bytes. A file that parses but is not byte-identical to its canonical form is reported (as
 * `canonical: false`) rather than thrown, so the verifier can name it as the failing item.
 */
export function parseProvenanceBytes(bytes: Uint8Array): { record: ProvenanceRecord; fileHash: Hex; canonical: boolean } {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    throw new ProvenanceRecordError("record", `provenance record is not valid UTF-8 JSON: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const record = parseProvenanceRecord(value);
  const canonicalBytes = canonicalRecordBytes(record);
  const canonical = canonicalBytes.length === bytes.length && canonicalBytes.every((b, i) => b === bytes[i]);
  return { record, fileHash: keccak256(bytes), canonical };
}

/** The embedded manifest, parsed with the engine's schema. Throws ProvenanceRecordError naming it. */
export function recordManifest(record: ProvenanceRecord): ManifestT {
  try {
    return parseManifest(record.manifest);
  } catch (err) {
    throw new ProvenanceRecordError("record.manifest", `provenance record's manifest: ${err instanceof Error ? (err as { shortMessage?: string }).shortMessage ?? err.message : String(err)}`, { cause: err });
  }
}
