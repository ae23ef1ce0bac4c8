/**
 * The policy of an inference job from its manifest (no engine, no chain: the dApp bundles this): segments x
 * examplesPerSegment = N, and the stake from the kind quote (market/quote-kind.ts) unless one is given.
 *
 * @example
 *   const { policy, quote } = kindPolicy(km, { payment, panel: { size: 3, feeWei } });
 */
import type { JobPolicy } from "../chain/createJob.ts";
import { DEFAULT_SEGMENT_TIMEOUT_SECONDS, DEFAULT_SHARES, type PolicyOverrides } from "../market/job-policy.ts";
import { formatEther } from "viem";
import { quoteKindJob, recordableStakeWei, type KindQuote, type KindRecordsFloor } from "../market/quote-kind.ts";
import { checkShape, KindJobError } from "./job.ts";
import type { KindManifest } from "./kind-manifest.ts";

/** The default challenge window of a kind job (a kind manifest has no policy section), as a training manifest's default. */
export const KIND_CHALLENGE_WINDOW_SECONDS = 86_400;
/** The default examples per segment is the largest divisor of the example count up to this. */
export const MAX_DEFAULT_EXAMPLES_PER_SEGMENT = 50;

/** N: the job's examples (evaluate: evalSet.examples; generate: prompts.examples). */
export function kindExamples(km: KindManifest): number {
  return km.kind === "evaluate" ? km.manifest.evalSet.examples : km.manifest.prompts.examples;
}

export type KindPolicyOptions = { payment?: bigint; examplesPerSegment?: number; overrides?: PolicyOverrides; /** The quote's target detection of one wrong example (market/quote-kind.ts). */ exampleDetection?: number; /** The deployment's dispute panel the quoted stake must pay. */ panel?: { size: number; feeWei: bigint }; /** The deployment's KindRecords floor the stake must reach. */ kindRecords?: KindRecordsFloor };

/**
 * The policy of a kind job: segments x examplesPerSegment = N (default K: the largest divisor of N up to 50). The
 * stake is the kind quote's (market/quote-kind.ts: from the compute a provider saves per example) unless
 * overrides.requiredStake gives one.
 */
export function kindPolicy(km: KindManifest, opts: KindPolicyOptions): { policy: JobPolicy; payment: bigint; quote?: KindQuote } {
  const N = kindExamples(km);
  if (opts.payment === undefined) throw new KindJobError(`${km.kind} manifests have no policy.paymentWei: pass --pay <amount>`);
  if (opts.payment <= 0n) throw new KindJobError(`--pay must be positive, got ${opts.payment} wei`);
  const o = opts.overrides ?? {};
  const quote = o.requiredStake === undefined ? quoteKindJob(km, { paymentWei: opts.payment, ...(opts.exampleDetection !== undefined ? { detection: opts.exampleDetection } : {}), ...(opts.panel ? { panel: opts.panel } : {}), ...(opts.kindRecords ? { kindRecords: opts.kindRecords } : {}) }) : undefined;
  const requiredStake = o.requiredStake ?? quote!.stakeWei;
  if (requiredStake <= 0n) throw new KindJobError(`--stake must be positive for a ${km.kind} job, got ${requiredStake} wei`);
  // INVARIANT: a kind job is never posted with a stake whose result KindRecords would refuse (KindRecordsStakeTooLow)
  if (opts.kindRecords && requiredStake < recordableStakeWei(opts.kindRecords)) {
    const f = opts.kindRecords;
    throw new KindJobError(
      `the stake ${formatEther(requiredStake)} tokens is below what KindRecords needs to record the ${km.kind} job's result: its least lock (${f.leastLockBps / 100}% at the best tier) must reach minStake ${formatEther(f.minStakeWei)} tokens, so the stake must be at least ${formatEther(recordableStakeWei(f))} tokens (not posted, no transaction sent)`,
    );
  }
  let K = opts.examplesPerSegment;
  if (K === undefined) for (K = Math.min(N, MAX_DEFAULT_EXAMPLES_PER_SEGMENT); N % K !== 0; K--);
  const segments = checkShape({ examples: N, examplesPerSegment: K });
  if (segments > 65_535) throw new KindJobError(`${N} examples of ${K} a segment are ${segments} segments: at most 65535`);
  const shares = { challengerBps: o.challengerBps ?? DEFAULT_SHARES.challengerBps, buyerBps: o.buyerBps ?? DEFAULT_SHARES.buyerBps, burnBps: o.burnBps ?? DEFAULT_SHARES.burnBps, timeoutSlashBps: o.timeoutSlashBps ?? DEFAULT_SHARES.timeoutSlashBps };
  if (shares.challengerBps + shares.buyerBps + shares.burnBps !== 10_000) throw new KindJobError(`slash shares must sum to 10000 bps, got ${shares.challengerBps} + ${shares.buyerBps} + ${shares.burnBps}`);
  return {
    policy: { segments, stepsPerSegment: K, requiredStake, segmentTimeout: o.segmentTimeout ?? DEFAULT_SEGMENT_TIMEOUT_SECONDS, challengeWindow: o.challengeWindow ?? KIND_CHALLENGE_WINDOW_SECONDS, ...shares },
    payment: opts.payment,
    ...(quote ? { quote } : {}),
  };
}

