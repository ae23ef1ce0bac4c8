/**
 * Read a dispute (IDisputeGame.DisputeView) with status and outcome as names, and its phase at `now` (seconds).
 *
 * @example
 *   const d = await getDispute(clients.public, { disputeGame, disputeId: 1n });
 *   if (d.phase === "reveal") ...
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { ChainError } from "./errors.ts";
import { withRetry } from "./retry.ts";
import { DISPUTE_OUTCOME, DISPUTE_STATUS, type DisputeOutcomeName, type DisputeStatusName } from "./enums.ts";

export { DISPUTE_OUTCOME, DISPUTE_STATUS, type DisputeOutcomeName, type DisputeStatusName };
export const VOTE = ["None", "Valid", "Fault"] as const;
export type VoteName = (typeof VOTE)[number];
/** seed: waiting for the seed block; commit, reveal: voting; resolvable: anyone may resolve; resolved: final. */
export type DisputePhase = "seed" | "commit" | "reveal" | "resolvable" | "resolved";

export type GetDisputeParameters = { disputeGame: Address; disputeId: bigint; blockNumber?: bigint };

async function readRaw(client: PublicClient<Transport, Chain>, p: GetDisputeParameters) {
  return client.readContract({
    address: p.disputeGame,
    abi: disputeGameAbi,
    functionName: "getDispute",
    args: [p.disputeId],
    ...(p.blockNumber === undefined ? {} : { blockNumber: p.blockNumber }),
  });
}
type RawDispute = Awaited<ReturnType<typeof readRaw>>;

export type GetDisputeReturnType = Omit<RawDispute, "status" | "outcome"> & {
  disputeId: bigint;
  status: DisputeStatusName;
  outcome: DisputeOutcomeName;
  phase: DisputePhase;
  reveals: number;
};

/** The phase of a dispute at block `blockNumber` and time `now` (pure). */
export function disputePhase(d: Pick<RawDispute, "status" | "seedBlock" | "panel" | "commits" | "commitDeadline" | "revealDeadline" | "validVotes" | "faultVotes">, blockNumber: bigint, now: bigint): DisputePhase {
  if (d.status === 2) return "resolved";
  const k = d.panel.length;
  const allCommitted = k > 0 && d.commits === k;
  const allRevealed = k > 0 && d.validVotes + d.faultVotes === k;
  if (allRevealed || now > d.revealDeadline) return "resolvable";
  if (allCommitted || now > d.commitDeadline) return "reveal";
  if (k === 0 && blockNumber <= d.seedBlock) return "seed";
  return "commit";
}

export async function getDispute(client: PublicClient<Transport, Chain>, p: GetDisputeParameters): Promise<GetDisputeReturnType> {
  const [raw, block] = await Promise.all([
    withRetry(() => readRaw(client, p), { what: "getDispute" }),
    withRetry(() => client.getBlock(p.blockNumber === undefined ? {} : { blockNumber: p.blockNumber }), { what: "getBlock" }),
  ]);
  const status = DISPUTE_STATUS[raw.status];
  const outcome = DISPUTE_OUTCOME[raw.outcome];
  if (!status || status === "None") throw new ChainError(`dispute ${p.disputeId} does not exist`);
  if (!outcome) throw new ChainError(`dispute ${p.disputeId}: unknown outcome ${raw.outcome}`);
  return {
    ...raw,
    disputeId: p.disputeId,
    status,
    outcome,
    phase: disputePhase(raw, block.number, block.timestamp),
    reveals: raw.validVotes + raw.faultVotes,
  };
}
