/**
 * Every event the market contracts emitted about one job, in chain order (block, then log index), with the time of
 * its block: JobMarket's (created, accepted, segments, freeze, fault settlement, finalize, data shares, timeouts),
 * JobRecords' (receipts, provenance), the StakeVault's locks and slashes for it, and the DisputeGame's events of the
 * job's disputes (challenge, panel, votes, fees, rewards, resolution). What `pouw report` draws its timeline and flows
 * from. Each is a typed MarketEvent (chain/events.ts).
 *
 * NOTE: one eth_getLogs over the four contracts from the deployment's start block, filtered here by job id (and by
 * the job's dispute ids for the DisputeGame events that carry only those): simple and complete on a dev chain or a
 * young deployment; a long-lived one wants an indexer.
 *
 * @example
 *   const events = await getJobEvents(clients.public, { deployment, jobId: 1n });
 *   const challenged = events.filter((e) => e.eventName === "Challenged");
 */
import type { Chain, PublicClient, Transport } from "viem";
import type { Deployment } from "./deployment.ts";
import { decodeMarketEvents, type MarketEventLog } from "./events.ts";
import { withRetry } from "./retry.ts";

export type GetJobEventsParameters = { deployment: Pick<Deployment, "jobMarket" | "jobRecords" | "stakeVault" | "disputeGame" | "startBlock">; jobId: bigint; toBlock?: bigint };

/**
 * One of the job's events: a typed MarketEvent (narrow on `eventName` for its typed `args`) with its position and the
 * Unix seconds of its block.
 */
export type JobEvent = MarketEventLog & { timestamp: bigint };

export type GetJobEventsReturnType = JobEvent[];

export async function getJobEvents(client: PublicClient<Transport, Chain>, p: GetJobEventsParameters): Promise<GetJobEventsReturnType> {
  const d = p.deployment;
  const address = [d.jobMarket, d.jobRecords, d.stakeVault, ...(d.disputeGame ? [d.disputeGame] : [])];
  const logs = await withRetry(() => client.getLogs({ address, fromBlock: BigInt(d.startBlock), toBlock: p.toBlock ?? "latest" }), { what: "market logs" });
  const decoded = decodeMarketEvents(logs, d);
  const disputes = new Set<bigint>();
  for (const e of decoded) if (e.eventName === "Challenged" && e.args.jobId === p.jobId) disputes.add(e.args.disputeId);
  const mine = decoded.filter((e) => {
    const a: object = e.args;
    if ("jobId" in a) return a.jobId === p.jobId;
    return e.contract === "DisputeGame" && "disputeId" in a && typeof a.disputeId === "bigint" && disputes.has(a.disputeId);
  });
  const times = new Map<bigint, bigint>();
  for (const b of new Set(mine.map((e) => e.blockNumber))) {
    times.set(b, (await withRetry(() => client.getBlock({ blockNumber: b }), { what: "getBlock" })).timestamp);
  }
  return mine
    .map((e) => ({ ...e, timestamp: times.get(e.blockNumber)! }))
    .sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1));
}
