/**
 * The on-chain policy of a buyer's job. Shape (segments, steps per segment) comes from the manifest;
 * the provider stake from quotePolicy (verifier/src/policy) over a measured detection matrix when one
 * is given, else the manifest's policy.providerStakeWei; windows and shares from the manifest and the
 * defaults below; any field can be overridden by a flag.
 */
import { existsSync } from "node:fs";
import { InputError } from "../errors/index.ts";
import type { JobPolicy } from "../chain/createJob.ts";
import type { Manifest } from "../ml/index.ts";
import { loadDetectionMatrix, quotePolicy, type Quote } from "../policy/index.ts";

export const DEFAULT_SEGMENT_TIMEOUT_SECONDS = 3_600;
/** Fault-slash split: challenger, buyer, burn (basis points). The quote's default lam = 0.5 is the challenger share. */
export const DEFAULT_SHARES = { challengerBps: 5_000, buyerBps: 3_000, burnBps: 2_000, timeoutSlashBps: 1_000 } as const;

export type PolicyOverrides = Partial<Omit<JobPolicy, "segments" | "stepsPerSegment">>;

export class JobPolicyError extends InputError {
  override name = "JobPolicyError";
  override readonly code: string = "JOB_POLICY";
}

export type DerivedPolicy = { policy: JobPolicy; payment: bigint; stakeFrom: "quote" | "manifest" | "flag"; quote?: Quote };

export async function jobPolicyFor(manifest: Manifest, opts: { payment?: bigint; detectionPath?: string; overrides?: PolicyOverrides }): Promise<DerivedPolicy> {
  const { steps, stepsPerSegment } = manifest.training;
  const segments = steps / stepsPerSegment;
  if (!Number.isInteger(segments) || segments < 1 || segments > 65_535) throw new JobPolicyError(`manifest has ${steps} steps of ${stepsPerSegment}: need 1..65535 whole segments`);
  const payment = opts.payment ?? BigInt(manifest.policy.paymentWei);
  if (payment <= 0n) throw new JobPolicyError("--pay must be positive");
  let requiredStake = BigInt(manifest.policy.providerStakeWei);
  let stakeFrom: DerivedPolicy["stakeFrom"] = "manifest";
  let quote: Quote | undefined;
  if (opts.detectionPath !== undefined) {
    if (!existsSync(opts.detectionPath)) throw new JobPolicyError(`detection matrix ${opts.detectionPath} does not exist`);
    quote = await quotePolicy({ paymentWei: payment, steps, stepsPerSegment }, loadDetectionMatrix(opts.detectionPath));
    requiredStake = BigInt(quote.stakeWei);
    stakeFrom = "quote";
  }
  const o = opts.overrides ?? {};
  if (o.requiredStake !== undefined) stakeFrom = "flag";
  const policy: JobPolicy = {
    segments,
    stepsPerSegment,
    requiredStake: o.requiredStake ?? (requiredStake > 0n ? requiredStake : 1n),
    segmentTimeout: o.segmentTimeout ?? DEFAULT_SEGMENT_TIMEOUT_SECONDS,
    challengeWindow: o.challengeWindow ?? manifest.policy.challengeWindowSeconds,
    challengerBps: o.challengerBps ?? DEFAULT_SHARES.challengerBps,
    buyerBps: o.buyerBps ?? DEFAULT_SHARES.buyerBps,
    burnBps: o.burnBps ?? DEFAULT_SHARES.burnBps,
    timeoutSlashBps: o.timeoutSlashBps ?? DEFAULT_SHARES.timeoutSlashBps,
  };
  if (policy.challengerBps + policy.buyerBps + policy.burnBps !== 10_000) {
    throw new JobPolicyError(`slash shares must sum to 10000 bps, got ${policy.challengerBps} + ${policy.buyerBps} + ${policy.burnBps}`);
  }
  return { policy, payment, stakeFrom, ...(quote ? { quote } : {}) };
}
