/**
 * The custom errors of the market contracts in words: enum names instead of numbers, chain timestamps as ISO dates with
 * the time left (from the revert's own `nowTs`, so no clock is read), amounts with the token symbol
 * (`job 1 is Cancelled, needs Open` rather than `JobMarketWrongStatus(1, 5, 1)`). ContractRevertError takes its short
 * message from here (errors.ts), so every caller that prints a revert prints this; describeRevert.ts adds the error name.
 *
 * NOTE: imports nothing from errors.ts (which imports this file), only viem's formatter and the enum tables.
 */
import { formatEther } from "viem";
import { revertTokenSymbol } from "./display.ts";
import { AUDITOR_STATUS, DISPUTE_OUTCOME, enumName, JOB_STATUS } from "./enums.ts";

export { setRevertTokenSymbol } from "./display.ts";

/** A chain timestamp (seconds) as an ISO date, to the second. */
export const chainDate = (seconds: bigint | number) => new Date(Number(seconds) * 1000).toISOString().replace(/\.000Z$/, "Z");

/** A duration in seconds the way a person reads it: "45 s", "57 min", "3 h 5 min", "2 d 4 h". */
export function formatDuration(seconds: bigint | number): string {
  const s = Math.max(0, Math.round(Number(seconds)));
  if (s < 120) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h${s % 3600 >= 60 ? ` ${Math.floor((s % 3600) / 60)} min` : ""}`;
  return `${Math.floor(s / 86_400)} d${s % 86_400 >= 3600 ? ` ${Math.floor((s % 86_400) / 3600)} h` : ""}`;
}

/** How the amounts of a revert are written: the token's symbol (default "tokens", when the caller did not read it). */
export type RevertTextOptions = { symbol?: string };


type Fmt = { date: (s: unknown) => string; until: (end: unknown, now: unknown) => string; ago: (end: unknown, now: unknown) => string; amt: (wei: unknown) => string; num: (wei: unknown) => string; sym: string };

const big = (x: unknown) => BigInt(x as bigint);

const TEXT: Record<string, (a: readonly unknown[], f: Fmt) => string> = {
  JobMarketUnknownJob: ([job]) => `job ${job} does not exist`,
  JobMarketWrongStatus: ([job, status, expected]) => `job ${job} is ${enumName(JOB_STATUS, status)}, needs ${enumName(JOB_STATUS, expected)}`,
  JobMarketJobClosed: ([job, status]) => `job ${job} is ${enumName(JOB_STATUS, status)}: closed`,
  JobMarketNotDisputable: ([job, status]) => `job ${job} is ${enumName(JOB_STATUS, status)}: it can no longer be disputed`,
  JobMarketNotBuyer: ([job, caller, buyer]) => `${caller} is not job ${job}'s buyer (${buyer})`,
  JobMarketNotProvider: ([job, caller, provider]) => `${caller} is not job ${job}'s provider (${provider})`,
  JobMarketNotSessionKey: ([job, caller, key]) => `${caller} is not the session key ${key} that job ${job}'s attested tier bound: only that key commits its segments`,
  JobMarketNoCommitter: ([job]) => `job ${job}'s tenure commits from its provider's own address: it has no session key to rebind`,
  JobMarketRebindTierTooLow: ([job, provider, tier, was]) => `provider ${provider}'s current record counts as tier ${tier} for job ${job}, weaker than the tier ${was} its tenure was accepted at: no rebind`,
  JobMarketRecordExpiresFirst: ([job, provider, expiresAt, by]) => `provider ${provider}'s attestation expires ${chainDate(expiresAt as bigint)}, before ${chainDate(by as bigint)}, the last moment job ${job}'s tenure may commit: its tier does not count for this job`,
  ProviderRegistryTierNeedsSessionKey: ([request, tier]) => `request ${request} declared no session key: tier ${tier} needs one (declare the key the evidence binds)`,
  JobMarketChallengeWindowClosed: ([job, end, now], f) => `job ${job}'s challenge window closed at ${f.date(end)} (chain time ${f.date(now)})`,
  JobMarketChallengeWindowOpen: ([job, end, now], f) => `job ${job}'s challenge window is open until ${f.date(end)}, ${f.until(end, now)} left`,
  JobMarketDeadlineNotPassed: ([job, deadline, now], f) => `job ${job}'s deadline ${f.date(deadline)} has not passed, ${f.until(deadline, now)} left`,
  JobMarketSegmentLate: ([job, seg, deadline, now], f) => `segment ${seg} of job ${job} is late: its deadline was ${f.date(deadline)}, ${f.ago(deadline, now)} ago`,
  JobMarketSegmentDeadlinePassed: ([job, deadline, now], f) => `job ${job}'s segment deadline passed at ${f.date(deadline)}, ${f.ago(deadline, now)} ago`,
  JobMarketSegmentAlreadyCommitted: ([job, seg]) => `segment ${seg} of job ${job} is already committed`,
  JobMarketSegmentOutOfOrder: ([job, seg, expected]) => `segment ${seg} of job ${job} is out of order: the next is ${expected}`,
  JobMarketFrozen: ([job, open]) => `job ${job} is frozen by ${open} open dispute${big(open) === 1n ? "" : "s"}`,
  JobMarketNothingToClaim: ([who]) => `${who} has nothing to claim`,
  JobMarketTierTooLow: ([job, provider, tier, minTier]) => `provider ${provider} is tier ${tier}; job ${job} needs tier ${minTier} or better`,
  JobMarketLockCannotPayPanel: ([job, provider, lock, share, fees], f) =>
    `job ${job}: ${provider}'s lock of ${f.amt(lock)} pays a challenger share of ${f.amt(share)}, below the panel's fees ${f.amt(fees)}, so nobody could catch a cheat on it without a loss; the job needs a larger requiredStake`,
  StakeVaultInsufficientStake: ([who, free, needed], f) => `${who} has ${f.amt(free)} of free stake, ${f.amt(needed)} needed (short ${f.amt(big(needed) - big(free))}; pouw provider stake)`,
  StakeVaultStillUnbonding: ([who, at, now], f) => `${who}'s stake is unbonding until ${f.date(at)}, ${f.until(at, now)} left`,
  StakeVaultNoPendingWithdrawal: ([who]) => `${who} has no unbonding stake (pouw provider unstake first)`,
  StakeVaultNothingToClaim: ([who]) => `${who} has nothing to claim`,
  AuditorRegistryBondTooLow: ([who, bond, min], f) => `${who}'s bond ${f.amt(bond)} is below the minimum ${f.amt(min)}`,
  AuditorRegistryNotActive: ([who, status]) => `auditor ${who} is ${enumName(AUDITOR_STATUS, status)}, needs Active`,
  AuditorRegistryExitDelayNotPassed: ([who, at, now], f) => `auditor ${who} can exit at ${f.date(at)}, ${f.until(at, now)} left`,
  AuditorRegistryNothingToClaim: ([who]) => `${who} has nothing to claim`,
  AuditorRegistryNotEnoughAuditors: ([eligible, k]) => `only ${eligible} auditors can be drawn, ${k} are needed`,
  AuditorRegistryDrawOutOfGas: ([left]) => `the panel draw ran out of gas (${left} left): send the transaction again with a higher gas limit`,
  DisputeGameUnknownDispute: ([id]) => `dispute ${id} does not exist`,
  DisputeGameVotingOpen: ([id, end, now], f) => `dispute ${id}'s voting is open until ${f.date(end)}, ${f.until(end, now)} left`,
  DisputeGameCommitClosed: ([id, end, now], f) => `dispute ${id}'s commit window closed at ${f.date(end)}, ${f.ago(end, now)} ago`,
  DisputeGameConcessionClosed: ([id, end], f) => `dispute ${id} can no longer be conceded: its commit phase is over (deadline ${f.date(end)}, or every member committed), so the panel's vote decides it`,
  DisputeGameRevealClosed: ([id, , end, now], f) => `dispute ${id}'s reveal window is not open (it closes at ${f.date(end)}; chain time ${f.date(now)})`,
  DisputeGameSeedExpired: ([id, seedBlock, block]) => `dispute ${id}'s panel seed block ${seedBlock} left blockhash range before anyone drew the panel (block ${block}); a seed is never re-anchored: this round has no panel and resolves NoDecision after its reveal deadline`,
  DisputeGameFaultAppealOpen: ([id, end, now], f) => `dispute ${id}'s unanimous first-round Fault waits for its provider's appeal until ${f.date(end)}, ${f.until(end, now)} left; resolve settles it after that`,
  DisputeGameFaultNotAppealable: ([id, end, now], f) => (String(end) === "0" ? `dispute ${id} has no unanimous first-round Fault open to appeal` : `dispute ${id}'s appeal window closed at ${f.date(end)}, ${f.ago(end, now)} ago`),
  DisputeGameSeedNotReady: ([id, seedBlock, block]) => `dispute ${id}'s panel seed block ${seedBlock} is not reached (block ${block})`,
  DisputeGamePanelUnavailable: ([id]) => `dispute ${id} cannot draw a panel: too few eligible auditors in its snapshot; it resolves NoDecision after its reveal deadline`,
  DisputeGameDisputeOpen: ([job, step, id]) => `step ${step} of job ${job} is already disputed (dispute ${id})`,
  DisputeGameChallengerLimit: ([job, who, open, max]) => `${who} already holds ${open} open disputes on job ${job}, the most one challenger may (${max}); one resolves first`,
  DisputeGameJobDisputeLimit: ([job, open, max]) => `job ${job} already has ${open} open disputes, the most one job may (${max}); one resolves first`,
  DisputeGameSuperseded: ([id, job]) => `job ${job} of dispute ${id} already faulted through another dispute: it can no longer be conceded; its panel (or a proof) decides it`,
  DisputeGameSegmentNotDisputable: ([job, seg, start, next]) => `segment ${seg} of job ${job} is not disputable (the current provider's segments are ${start}..${big(next) - 1n})`,
  DisputeGameCommitmentMismatch: ([job, seg]) => `segment ${seg} of job ${job} is not committed with this trace root and end state`,
  DisputeGameSelfChallenge: ([job]) => `the challenger is job ${job}'s provider`,
  DisputeGameNotPanelMember: ([id, who]) => `${who} is not on dispute ${id}'s panel`,
  DisputeGameDepositNotApproved: ([who, allowance, deposit], f) => `${who} approved ${f.amt(allowance)}, the deposit is ${f.num(deposit)} (short ${f.num(big(deposit) - big(allowance))})`,
  DisputeGameAlreadyResolved: ([id, outcome]) => `dispute ${id} is already resolved${outcome === undefined ? "" : ` (${enumName(DISPUTE_OUTCOME, outcome)})`}`,
  DisputeGameNothingToClaim: ([who]) => `${who} has nothing to claim`,
  DisputeGameChallengeCommitmentExpired: ([who, , at, expired, block]) =>
    `${who}'s challenge commitment of block ${at} expired after block ${expired} (now block ${block}): commit again, then challenge`,
  DisputeGameChallengeCommitmentWrongSegment: ([who, , job, seg]) => `${who}'s challenge commitment was made for another segment than segment ${seg} of job ${job}`,
  DisputeGameSegmentNotCommitted: ([job, seg]) => `segment ${seg} of job ${job} is not committed yet: a challenge commitment can only name a committed segment`,
  DisputeGameUnknownJob: ([job]) => `job ${job} does not exist`,
  JobMarketTimeoutSlashTooLow: ([bps, min]) => `timeoutSlashBps ${bps} is below the minimum ${min}: a timeout must cost the provider something`,
  JobMarketTransferShortfall: ([token, expected, received], f) => `token ${token} delivered ${f.amt(received)} of ${f.num(expected)}: fee-on-transfer tokens are refused`,
  StakeVaultTransferShortfall: ([token, expected, received], f) => `token ${token} delivered ${f.amt(received)} of ${f.num(expected)}: fee-on-transfer tokens are refused`,
  AuditorRegistryTransferShortfall: ([token, expected, received], f) => `token ${token} delivered ${f.amt(received)} of ${f.num(expected)}: fee-on-transfer tokens are refused`,
  DisputeGameTransferShortfall: ([token, expected, received], f) => `token ${token} delivered ${f.amt(received)} of ${f.num(expected)}: fee-on-transfer tokens are refused`,
  ERC20InsufficientBalance: ([who, balance, needed], f) => `${who} holds ${f.amt(balance)}, ${f.num(needed)} are needed (short ${f.num(big(needed) - big(balance))})`,
  ERC20InsufficientAllowance: ([spender, allowance, needed], f) => `allowance to ${spender} is ${f.amt(allowance)}, ${f.num(needed)} are needed`,
};

/** The revert in words, or undefined for an error this table does not know (or arguments of an unexpected shape). */
export function revertText(errorName: string, args: readonly unknown[], options: RevertTextOptions = {}): string | undefined {
  const t = TEXT[errorName];
  if (!t) return undefined;
  const sym = options.symbol ?? revertTokenSymbol();
  const f: Fmt = {
    date: (s) => chainDate(s as bigint),
    until: (end, now) => formatDuration(big(end) - big(now)),
    ago: (end, now) => formatDuration(big(now) - big(end)),
    amt: (wei) => `${formatEther(big(wei))} ${sym}`,
    num: (wei) => formatEther(big(wei)),
    sym,
  };
  try {
    return t(args, f);
  } catch {
    return undefined;
  }
}
