/**
 * The market's events as one typed union decoded from the generated ABIs: narrowing on `eventName` (and `contract`
 * where two contracts share a name) gives viem's typed arguments (bigints for uints, tuples as objects, EIP-55
 * addresses), so no caller casts an argument.
 *
 * @example
 *   for (const e of decodeMarketEvents(logs, deployment)) {
 *     if (e.eventName === "SegmentCommitted") use(e.args.jobId, e.args.traceRoot);
 *   }
 */
import { parseEventLogs, type Abi, type Address, type ContractEventArgsFromTopics, type ContractEventName, type Hex, type Log } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { jobRecordsAbi } from "./abi/JobRecords.ts";
import { stakeVaultAbi } from "./abi/StakeVault.ts";

/** One decoded event of `abi`, tagged with the contract that emitted it; a union over the ABI's event names. */
export type ContractEvent<abi extends Abi, C extends string> = {
  [N in ContractEventName<abi>]: { contract: C; eventName: N; args: ContractEventArgsFromTopics<abi, N, true> };
}[ContractEventName<abi>];

export type JobMarketEvent = ContractEvent<typeof jobMarketAbi, "JobMarket">;
export type JobRecordsEvent = ContractEvent<typeof jobRecordsAbi, "JobRecords">;
export type StakeVaultEvent = ContractEvent<typeof stakeVaultAbi, "StakeVault">;
export type DisputeGameEvent = ContractEvent<typeof disputeGameAbi, "DisputeGame">;

/** Any event of the market contracts that follow a job (JobMarket, JobRecords, StakeVault, DisputeGame). */
export type MarketEvent = JobMarketEvent | JobRecordsEvent | StakeVaultEvent | DisputeGameEvent;

/** Where a log sits in the chain. */
export type EventPosition = { address: Address; blockNumber: bigint; logIndex: number; transactionHash: Hex };

/** A decoded market event with its position. */
export type MarketEventLog = MarketEvent & EventPosition;

/** The market contracts' addresses that `decodeMarketEvents` tells apart. */
export type MarketEventSources = { jobMarket: Address; jobRecords?: Address | null; stakeVault: Address; disputeGame?: Address | null };

const position = (l: { address: Address; blockNumber: bigint | null; logIndex: number | null; transactionHash: Hex | null }): EventPosition => ({
  address: l.address,
  blockNumber: l.blockNumber ?? 0n,
  logIndex: l.logIndex ?? 0,
  transactionHash: l.transactionHash ?? "0x",
});

/**
 * Decodes raw logs of the market contracts into typed events (strict: a log that does not match its contract's ABI is
 * dropped, as viem's parseEventLogs does). A log from another address is ignored. Order is kept.
 */
export function decodeMarketEvents(logs: readonly Log[], sources: MarketEventSources): MarketEventLog[] {
  const lower = (a: string) => a.toLowerCase();
  const jm = lower(sources.jobMarket);
  const sv = lower(sources.stakeVault);
  const jr = sources.jobRecords ? lower(sources.jobRecords) : undefined;
  const dg = sources.disputeGame ? lower(sources.disputeGame) : undefined;
  const out: MarketEventLog[] = [];
  // NOTE: the one cast of the union is here: viem decodes each log against its ABI event (strict), so its args are that
  // event's, but a new object built from `e.eventName` and `e.args` loses the pairing in the type checker.
  for (const log of logs) {
    const at = lower(log.address);
    if (at === jm) {
      for (const e of parseEventLogs({ abi: jobMarketAbi, logs: [log], strict: true })) out.push({ contract: "JobMarket", eventName: e.eventName, args: e.args, ...position(e) } as MarketEventLog);
    } else if (jr !== undefined && at === jr) {
      for (const e of parseEventLogs({ abi: jobRecordsAbi, logs: [log], strict: true })) out.push({ contract: "JobRecords", eventName: e.eventName, args: e.args, ...position(e) } as MarketEventLog);
    } else if (at === sv) {
      for (const e of parseEventLogs({ abi: stakeVaultAbi, logs: [log], strict: true })) out.push({ contract: "StakeVault", eventName: e.eventName, args: e.args, ...position(e) } as MarketEventLog);
    } else if (dg !== undefined && at === dg) {
      for (const e of parseEventLogs({ abi: disputeGameAbi, logs: [log], strict: true })) out.push({ contract: "DisputeGame", eventName: e.eventName, args: e.args, ...position(e) } as MarketEventLog);
    }
  }
  return out;
}
