/**
 * Every event the market contracts emitted about one job, in chain order (block, then log index), with the time of
 * its block: JobMarket's (created, accepted, segments, receipts, freeze, fault settlement, finalize, data shares,
 * provenance, timeouts), the StakeVault's locks and slashes for it, and the DisputeGame's events of the job's disputes
 * (challenge, panel, votes, fees, rewards, resolution). What `pouw report` draws its timeline and flows from.
 *
 * NOTE: one eth_getLogs over the three contracts from the deployment's start block, filtered here by job id (and by
 * the job's dispute ids for the DisputeGame events that carry only those): simple and complete on a dev chain or a
 * young deployment; a long-lived one wants an indexer.
 *
 * @example
 *   const events = await getJobEvents(clients.public, { deployment, jobId: 1n });
 *   const challenged = events.filter((e) => e.eventName === "Challenged");
 */
import { parseEventLogs, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import type { Deployment } from "./deployment.ts";
import { withRetry } from "./retry.ts";

export type GetJobEventsParameters = { deployment: Pick<Deployment, "jobMarket" | "stakeVault" | "disputeGame" | "startBlock">; jobId: bigint; toBlock?: bigint };

export type JobEvent = {
  contract: "JobMarket" | "StakeVault" | "DisputeGame";
  eventName: string;
  /** The decoded event arguments (bigints for uints, EIP-55 addresses). */
  args: Record<string, unknown>;
  blockNumber: bigint;
  logIndex: number;
  transactionHash: Hex;
  /** Unix seconds of the block. */
  timestamp: bigint;
};

export type GetJobEventsReturnType = JobEvent[];

export async function getJobEvents(client: PublicClient<Transport, Chain>, p: GetJobEventsParameters): Promise<GetJobEventsReturnType> {
  const d = p.deployment;
  const address = [d.jobMarket, d.stakeVault, ...(d.disputeGame ? [d.disputeGame] : [])];
  const logs = await withRetry(() => client.getLogs({ address, fromBlock: BigInt(d.startBlock), toBlock: p.toBlock ?? "latest" }), { what: "market logs" });
  const lower = (a: string) => a.toLowerCase();
  const contractOf = (a: string): JobEvent["contract"] => (lower(a) === lower(d.jobMarket) ? "JobMarket" : lower(a) === lower(d.stakeVault) ? "StakeVault" : "DisputeGame");
  const decoded = [
    ...parseEventLogs({ abi: jobMarketAbi, logs: logs.filter((l) => contractOf(l.address) === "JobMarket"), strict: true }),
    ...parseEventLogs({ abi: stakeVaultAbi, logs: logs.filter((l) => contractOf(l.address) === "StakeVault"), strict: true }),
    ...parseEventLogs({ abi: disputeGameAbi, logs: logs.filter((l) => contractOf(l.address) === "DisputeGame"), strict: true }),
  ];
  const argsOf = (e: (typeof decoded)[number]) => (e.args ?? {}) as Record<string, unknown>;
  const disputes = new Set(decoded.filter((e) => e.eventName === "Challenged" && argsOf(e).jobId === p.jobId).map((e) => argsOf(e).disputeId as bigint));
  const mine = decoded.filter((e) => {
    const a = argsOf(e);
    if ("jobId" in a) return a.jobId === p.jobId;
    return contractOf(e.address) === "DisputeGame" && "disputeId" in a && disputes.has(a.disputeId as bigint);
  });
  const times = new Map<bigint, bigint>();
  for (const b of new Set(mine.map((e) => e.blockNumber))) {
    times.set(b, (await withRetry(() => client.getBlock({ blockNumber: b }), { what: "getBlock" })).timestamp);
  }
  return mine
    .map((e) => ({
      contract: contractOf(e.address),
      eventName: e.eventName,
      args: argsOf(e),
      blockNumber: e.blockNumber,
      logIndex: e.logIndex,
      transactionHash: e.transactionHash,
      timestamp: times.get(e.blockNumber)!,
    }))
    .sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
}
