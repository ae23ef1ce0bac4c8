/**
 * The K+1 leaves (state hashes) of a committed segment, from chain data only. JobMarket does not log the leaves of a
 * commit that is its transaction's top-level call from a codeless account (the usual commit: they are the
 * transaction's input, 512 gas a leaf, and logging them again cost 256 more); any other commit (a wallet contract, a
 * multicall, an EIP-7702 delegated account) also emits SegmentLeaves right before its SegmentCommitted
 * (docs/contracts.md "Leaves"). So a reader takes the SegmentLeaves log of the same transaction when there is one, and
 * otherwise decodes the transaction's input.
 *
 * INVARIANT: a reader never uses leaves that do not reproduce the event's trace root and end state hash: the
 * transaction is read by (block hash, index), so a block a reorg removed is not silently replaced by another one, and
 * the decoded leaves are checked against the SegmentCommitted event before they are returned.
 *
 * @example
 *   const leaves = await getCommittedLeaves(clients.public, { jobMarket, jobId, segment, traceRoot, endStateHash,
 *     blockHash, transactionIndex, transactionHash, logIndex });
 */
import { decodeFunctionData, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { traceRoot as computeTraceRoot } from "../trace/index.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { ChainError } from "./errors.ts";
import type { MarketLog } from "./getMarketLogs.ts";
import { withRetry } from "./retry.ts";

/** A SegmentCommitted event and where it sits: what the leaves are looked up and checked by. */
export type CommittedLeavesRef = {
  jobMarket: Address;
  jobId: bigint;
  segment: bigint;
  traceRoot: Hex;
  endStateHash: Hex;
  blockHash: Hex;
  transactionIndex: number;
  transactionHash: Hex;
  logIndex: number;
};

/** A decoded SegmentLeaves event and where it sits. */
export type SegmentLeavesLog = { jobId: bigint; segment: bigint; stateHashes: readonly Hex[]; transactionHash: Hex; logIndex: number };

/** The leaves of a SegmentCommitted event cannot be recovered from the chain, or do not reproduce its trace root. */
export class CommittedLeavesError extends ChainError {
  override name = "CommittedLeavesError";
  override readonly code: string = "COMMITTED_LEAVES";
}

/** The SegmentLeaves log that belongs to `ref`: same transaction, job and segment, the nearest one before it. */
export function pickLeavesLog(ref: CommittedLeavesRef, leavesLogs: readonly SegmentLeavesLog[]): readonly Hex[] | undefined {
  let best: SegmentLeavesLog | undefined;
  for (const l of leavesLogs) {
    if (l.transactionHash !== ref.transactionHash || l.jobId !== ref.jobId || l.segment !== ref.segment || l.logIndex >= ref.logIndex) continue;
    if (!best || l.logIndex > best.logIndex) best = l;
  }
  return best?.stateHashes;
}

/**
 * Checks `leaves` against the SegmentCommitted event `ref` (K = leaves.length - 1: the market takes exactly K+1) and
 * returns them; throws CommittedLeavesError naming what differs.
 */
export function checkCommittedLeaves(ref: CommittedLeavesRef, leaves: readonly Hex[], source: string): Hex[] {
  const where = `segment ${ref.segment} of job ${ref.jobId} (transaction ${ref.transactionHash})`;
  if (leaves.length < 2) throw new CommittedLeavesError(`${source} of ${where} holds ${leaves.length} leaves, expected at least 2`);
  const k = leaves.length - 1;
  const root = computeTraceRoot(Number(ref.segment) * k, leaves);
  if (root.toLowerCase() !== ref.traceRoot.toLowerCase()) {
    throw new CommittedLeavesError(`the leaves in ${source} of ${where} give trace root ${root}, the event says ${ref.traceRoot}`);
  }
  if (leaves[k]!.toLowerCase() !== ref.endStateHash.toLowerCase()) {
    throw new CommittedLeavesError(`the last leaf in ${source} of ${where} is ${leaves[k]}, the event's end state hash is ${ref.endStateHash}`);
  }
  return [...leaves];
}

/** Decodes the leaves from the input of `ref`'s transaction, which must be a top-level JobMarket.commitSegment call. */
async function leavesFromInput(client: PublicClient<Transport, Chain>, ref: CommittedLeavesRef): Promise<readonly Hex[]> {
  const tx = await withRetry(() => client.getTransaction({ blockHash: ref.blockHash, index: ref.transactionIndex }), { what: "commitSegment transaction" });
  const where = `segment ${ref.segment} of job ${ref.jobId}: transaction ${ref.transactionIndex} of block ${ref.blockHash}`;
  if (tx.hash.toLowerCase() !== ref.transactionHash.toLowerCase()) throw new CommittedLeavesError(`${where} is ${tx.hash}, the event's is ${ref.transactionHash}`);
  if (tx.to?.toLowerCase() !== ref.jobMarket.toLowerCase()) {
    throw new CommittedLeavesError(`${where} calls ${tx.to ?? "no address"}, not the JobMarket ${ref.jobMarket}, and no SegmentLeaves event carries the leaves`);
  }
  let decoded;
  try {
    decoded = decodeFunctionData({ abi: jobMarketAbi, data: tx.input });
  } catch (cause) {
    throw new CommittedLeavesError(`${where}: its input does not decode as a JobMarket call`, { cause });
  }
  if (decoded.functionName !== "commitSegment") throw new CommittedLeavesError(`${where} calls JobMarket.${decoded.functionName}, not commitSegment`);
  const [jobId, segment, stateHashes] = decoded.args;
  if (jobId !== ref.jobId || segment !== ref.segment) throw new CommittedLeavesError(`${where} commits segment ${segment} of job ${jobId}`);
  return stateHashes;
}

/** The leaves of the SegmentCommitted event `ref`: from `leavesLogs` (the range's SegmentLeaves) or the transaction's input. */
export async function getCommittedLeaves(client: PublicClient<Transport, Chain>, ref: CommittedLeavesRef, leavesLogs: readonly SegmentLeavesLog[] = []): Promise<Hex[]> {
  const logged = pickLeavesLog(ref, leavesLogs);
  if (logged) return checkCommittedLeaves(ref, logged, "its SegmentLeaves event");
  return checkCommittedLeaves(ref, await leavesFromInput(client, ref), "its transaction's input");
}

/** Where a SegmentCommitted log sits, as a key of resolveCommittedLeaves' map. */
export const committedLogKey = (l: { transactionHash: Hex; logIndex: number }): string => `${l.transactionHash.toLowerCase()}:${l.logIndex}`;

/**
 * The leaves of every SegmentCommitted event in `logs` (JobMarket logs of one block range, as getMarketLogs returns
 * them: a SegmentLeaves log is always in the same transaction as its SegmentCommitted, so in the same range), keyed
 * by committedLogKey.
 */
export async function resolveCommittedLeaves(client: PublicClient<Transport, Chain>, jobMarket: Address, logs: readonly MarketLog[]): Promise<Map<string, Hex[]>> {
  const leavesLogs: SegmentLeavesLog[] = [];
  for (const l of logs) {
    if (l.eventName === "SegmentLeaves") leavesLogs.push({ jobId: l.args.jobId, segment: l.args.segment, stateHashes: l.args.stateHashes, transactionHash: l.transactionHash, logIndex: l.logIndex });
  }
  const out = new Map<string, Hex[]>();
  for (const l of logs) {
    if (l.eventName !== "SegmentCommitted") continue;
    const ref: CommittedLeavesRef = { jobMarket, ...l.args, blockHash: l.blockHash, transactionIndex: l.transactionIndex, transactionHash: l.transactionHash, logIndex: l.logIndex };
    out.set(committedLogKey(l), await getCommittedLeaves(client, ref, leavesLogs));
  }
  return out;
}
