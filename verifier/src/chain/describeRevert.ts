/**
 * A revert in words: the custom errors the challenger bot and the auditor commands meet, with enum names, dates and
 * token amounts instead of raw arguments (`job 1's challenge window closed at 2026-01-02T10:00:00Z` rather than
 * `JobMarketChallengeWindowClosed(1, 1767348000, 1767348100)`). Decoded by error name (errors.ts), never by message text;
 * an error not listed here reads as its ContractRevertError shortMessage.
 *
 * @example
 *   catch (err) { const e = toChainError(err); log.error({ reason: describeRevert(e) }, "challenge refused") }
 */
import { formatEther } from "viem";
import { ContractRevertError, type ChainError } from "./errors.ts";
import { JOB_STATUS } from "./getJob.ts";
import type { PouwError } from "../errors/index.ts";

/** A chain timestamp (seconds) as an ISO date, to the second. */
export const chainDate = (seconds: bigint | number) => new Date(Number(seconds) * 1000).toISOString().replace(/\.000Z$/, "Z");
const date = (seconds: unknown) => chainDate(seconds as bigint);
const tokens = (wei: unknown) => formatEther(wei as bigint);

const DESCRIBE: Record<string, (a: readonly unknown[]) => string> = {
  JobMarketChallengeWindowClosed: ([job, deadline, now]) => `job ${job}'s challenge window closed at ${date(deadline)} (chain time ${date(now)})`,
  JobMarketNotDisputable: ([job, status]) => `job ${job} is ${JOB_STATUS[Number(status)] ?? `status ${status}`}: it can no longer be disputed`,
  JobMarketUnknownJob: ([job]) => `job ${job} does not exist`,
  JobMarketDeadlineNotPassed: ([job, deadline, now]) => `job ${job}'s deadline ${date(deadline)} has not passed (chain time ${date(now)})`,
  JobMarketChallengeWindowOpen: ([job, end, now]) => `job ${job}'s challenge window is open until ${date(end)} (chain time ${date(now)})`,
  JobMarketFrozen: ([job, open]) => `job ${job} is frozen by ${open} open dispute${BigInt(open as bigint) === 1n ? "" : "s"}`,
  DisputeGameVotingOpen: ([id, end, now]) => `dispute ${id}'s voting is open until ${date(end)} (chain time ${date(now)})`,
  DisputeGameSeedNotReady: ([id, seedBlock, block]) => `dispute ${id}'s panel seed block ${seedBlock} is not reached (block ${block})`,
  DisputeGameDisputeOpen: ([job, step, id]) => `step ${step} of job ${job} is already disputed (dispute ${id})`,
  DisputeGameSegmentNotDisputable: ([job, seg, start, next]) => `segment ${seg} of job ${job} is not disputable (the current provider's segments are ${start}..${BigInt(next as bigint) - 1n})`,
  DisputeGameCommitmentMismatch: ([job, seg]) => `segment ${seg} of job ${job} is not committed with this trace root and end state`,
  DisputeGameSelfChallenge: ([job]) => `the challenger is job ${job}'s provider`,
  DisputeGameDepositNotApproved: ([who, allowance, deposit]) => `${who} approved ${tokens(allowance)} tokens, the deposit is ${tokens(deposit)} (short ${tokens(BigInt(deposit as bigint) - BigInt(allowance as bigint))})`,
  ERC20InsufficientBalance: ([who, balance, needed]) => `${who} holds ${tokens(balance)} tokens, ${tokens(needed)} are needed (short ${tokens(BigInt(needed as bigint) - BigInt(balance as bigint))})`,
  ERC20InsufficientAllowance: ([spender, allowance, needed]) => `allowance to ${spender} is ${tokens(allowance)} tokens, ${tokens(needed)} are needed`,
  DisputeGameAlreadyResolved: ([id]) => `dispute ${id} is already resolved`,
  DisputeGameNothingToClaim: ([who]) => `${who} has nothing to claim`,
};

/** The revert (or any chain error) in words, for logs and the intent table. */
export function describeRevert(e: PouwError | ChainError): string {
  if (e instanceof ContractRevertError) {
    const f = DESCRIBE[e.errorName];
    if (f) {
      try {
        return `${f(e.args)} [${e.errorName}]`;
      } catch {
        // arguments of an unexpected shape: the raw form below
      }
    }
  }
  return e.shortMessage;
}
