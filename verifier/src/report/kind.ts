/**
 * The job report's section for an inference job (evaluate, generate; docs/kinds.md): the aggregate its last committed
 * leaf claims, checked against the leaf's hash, and the examples the anchored ok receipts recomputed.
 */
import type { Hex } from "viem";
import { fetchKindManifest, kindExamples } from "../kinds/market.ts";
import { decodeSegmentStates, exampleStateHash } from "../kinds/state.ts";
import { logger } from "../log/index.ts";
import type { ContentStore } from "../store/index.ts";

const log = logger("report");

/**
 * An inference job's result (evaluate, generate; docs/kinds.md): the aggregate its last committed leaf carries, read
 * from that segment's states file and checked against the leaf's hash, and the examples the anchored receipts say
 * their auditors recomputed.
 */
export type JobReportKind = {
  kind: "evaluate" | "generate";
  /** N: the manifest's examples. */
  examples: number;
  /** Examples the committed leaves cover (the last committed state's index). */
  committedExamples: number;
  /** The last committed leaf's running totals (evaluate: total = sum of round(1e6 x loss), hits = correct predictions; generate: total = tokens). */
  claimed: { total: string; hits: string; meanScoreE6: number; chain: Hex } | null;
  /** Whether the states file's last state hashes to the committed last leaf. */
  leafCheck: "verified" | "mismatch" | "unavailable" | "none";
  detail: string;
  /** Examples recomputed by the anchored ok receipts (the sum of their sampledSteps) and the receipts counted. */
  examplesAudited: number;
  okReceipts: number;
};

/** The inference-job section (JobReportKind), or null for a training job or a manifest no source serves (logged). */
export async function kindResultOf(store: ContentStore, jobId: bigint, m: { manifestUri: string; manifestHash: Hex }, last: { segment: number; endStateHash: Hex; checkpointCid: string } | undefined, receipts: readonly { verdict: string; sampledSteps: number }[]): Promise<JobReportKind | null> {
  let km;
  try {
    km = await fetchKindManifest(store, m.manifestUri, m.manifestHash);
  } catch (err) {
    log.warn({ jobId: jobId.toString(), err: (err as Error).message }, "report: the job's manifest cannot be read; no result section");
    return null;
  }
  if (!km) return null;
  const ok = receipts.filter((r) => r.verdict === "ok");
  const base = { kind: km.kind, examples: kindExamples(km), examplesAudited: ok.reduce((a, r) => a + r.sampledSteps, 0), okReceipts: ok.length };
  if (!last) return { ...base, committedExamples: 0, claimed: null, leafCheck: "none", detail: "no segment committed" };
  const sctx = { jobId, kind: km.kind, modelCid: km.manifest.weightsCid };
  let states;
  try {
    states = decodeSegmentStates(sctx, await store.get(last.checkpointCid, { maxBytes: 1 << 26 }));
  } catch (err) {
    return { ...base, committedExamples: 0, claimed: null, leafCheck: "unavailable", detail: `segment ${last.segment}'s states file ${last.checkpointCid}: ${(err as Error).message}` };
  }
  const end = states[states.length - 1]!;
  const claimed = { total: end.total.toString(), hits: end.hits.toString(), meanScoreE6: end.index === 0 ? 0 : Number(end.total) / end.index, chain: end.chain };
  const h = exampleStateHash(sctx, end);
  return h === last.endStateHash
    ? { ...base, committedExamples: end.index, claimed, leafCheck: "verified", detail: `state ${end.index} of segment ${last.segment}'s states file hashes to its committed last leaf` }
    : { ...base, committedExamples: end.index, claimed, leafCheck: "mismatch", detail: `state ${end.index} hashes to ${h}, the committed last leaf is ${last.endStateHash}` };
}

