/**
 * Private sampling: whether this auditor audits segment `segment` of job `jobId`. The decision is
 * HMAC-SHA256(secret, market || jobId || segment) read as a number in [0, 1) against the job's audit
 * rate. The secret is generated once per auditor and kept in the bot's database, so the provider cannot
 * predict which segments are audited (it committed them before anyone sampled), and a restart makes the
 * same decisions again. The job's last segment is audited whatever the rate (isLastSegment): its end state is the
 * delivered model, which no later segment's screen starts from.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Address } from "viem";

export function newSamplingSecret(): string {
  return randomBytes(32).toString("hex");
}

/** A uniform number in [0, 1) from the HMAC (53 bits). */
export function samplingDraw(secretHex: string, market: Address, jobId: bigint, segment: number): number {
  const mac = createHmac("sha256", Buffer.from(secretHex, "hex")).update(`${market.toLowerCase()}:${jobId}:${segment}`).digest();
  return Number(mac.readBigUInt64BE(0) >> 11n) / 2 ** 53;
}

export function isSampled(secretHex: string, market: Address, jobId: bigint, segment: number, auditRate: number): boolean {
  return samplingDraw(secretHex, market, jobId, segment) < auditRate;
}

/** Whether `segment` (0-based) is the job's last: its end state is the final model. */
export { isLastSegment } from "../checks/index.ts";

/**
 * Step sampling (state openings): whether this auditor audits one step of committed segment `segment` (at `stepRate`,
 * a draw of its own domain, independent of the segment draw), and which: step s in first+1 .. first+K, recomputed from
 * the state s-1 the provider must open on chain. Returns s, or null when the segment is not step-sampled. The provider
 * committed every leaf before the draw, so it cannot tell which states will be asked for.
 */
export function sampledStep(secretHex: string, market: Address, jobId: bigint, segment: number, stepsPerSegment: number, stepRate: number): number | null {
  if (!Number.isInteger(stepsPerSegment) || stepsPerSegment < 1) throw new RangeError(`stepsPerSegment ${stepsPerSegment} is not a positive integer`);
  if (!(stepRate >= 0 && stepRate <= 1)) throw new RangeError(`step sampling rate ${stepRate} is not in [0, 1]`);
  const mac = createHmac("sha256", Buffer.from(secretHex, "hex")).update(`step:${market.toLowerCase()}:${jobId}:${segment}`).digest();
  if (Number(mac.readBigUInt64BE(0) >> 11n) / 2 ** 53 >= stepRate) return null;
  // NOTE: 2^64 mod K biases the pick by under K / 2^64: negligible for any K a manifest allows
  const j = Number(mac.readBigUInt64BE(8) % BigInt(stepsPerSegment));
  return segment * stepsPerSegment + 1 + j;
}

/**
 * The per-segment step-sampling rate at which ONE auditor catches a cheat that makes every step wrong, on a job of
 * `segments` segments, with probability `detection`: each step-sampled segment catches it for certain (any recomputed
 * step differs from its leaf), so P(miss) = (1 - r)^segments and r = 1 - (1 - detection)^(1 / segments).
 */
export function stepRateFor(segments: number, detection: number): number {
  if (!Number.isInteger(segments) || segments < 1) throw new RangeError(`segments ${segments} is not a positive integer`);
  if (!(detection >= 0 && detection < 1)) throw new RangeError(`detection ${detection} is not in [0, 1)`);
  return 1 - (1 - detection) ** (1 / segments);
}

/**
 * Example sampling (inference jobs: evaluate, generate; kinds/audit.ts): the examples of committed segment `segment`
 * (1-based steps first+1 .. first+K) this auditor recomputes, each drawn alone at `rate` from
 * HMAC-SHA256(secret, "example:" || market || jobId || example), a domain of its own. As for segments, the provider
 * committed every leaf before the draw and cannot predict it, and a restart draws the same examples.
 */
export function sampledExamples(secretHex: string, market: Address, jobId: bigint, segment: number, examplesPerSegment: number, rate: number): number[] {
  if (!Number.isInteger(examplesPerSegment) || examplesPerSegment < 1) throw new RangeError(`examplesPerSegment ${examplesPerSegment} is not a positive integer`);
  if (!(rate >= 0 && rate <= 1)) throw new RangeError(`example sampling rate ${rate} is not in [0, 1]`);
  const out: number[] = [];
  for (let s = segment * examplesPerSegment + 1; s <= (segment + 1) * examplesPerSegment; s++) {
    const mac = createHmac("sha256", Buffer.from(secretHex, "hex")).update(`example:${market.toLowerCase()}:${jobId}:${s}`).digest();
    if (Number(mac.readBigUInt64BE(0) >> 11n) / 2 ** 53 < rate) out.push(s);
  }
  return out;
}
