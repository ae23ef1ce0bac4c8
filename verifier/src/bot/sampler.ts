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
