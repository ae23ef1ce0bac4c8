/**
 * The disputes of a job and where each stands: phase, deadlines, panel, votes, outcome (what `pouw dispute status`
 * prints and the bots poll).
 *
 * @example
 *   const rows = await disputeStatus(clients.public, { disputeGame, jobId: 1n, fromBlock: 0n });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { getDispute, type GetDisputeReturnType } from "../chain/getDispute.ts";
import { getJobDisputes } from "../chain/getJobDisputes.ts";

export type DisputeStatusParameters = { disputeGame: Address; jobId: bigint; fromBlock: bigint };
export type DisputeStatusReturnType = GetDisputeReturnType[];

export async function disputeStatus(client: PublicClient<Transport, Chain>, p: DisputeStatusParameters): Promise<DisputeStatusReturnType> {
  const opened = await getJobDisputes(client, p);
  return Promise.all(opened.map((o) => getDispute(client, { disputeGame: p.disputeGame, disputeId: o.disputeId })));
}

const iso = (s: bigint) => new Date(Number(s) * 1000).toISOString().replace(".000Z", "Z");

/** A plain-text table of disputes, one line each (pure). */
export function formatDisputeStatus(jobId: bigint, rows: DisputeStatusReturnType): string {
  if (rows.length === 0) return `job ${jobId}: no disputes`;
  const lines = [`job ${jobId}: ${rows.length} dispute(s)`, "id  step  phase       outcome     votes(V/F/commits)  panel  commit-deadline       reveal-deadline       challenger"];
  for (const d of rows) {
    lines.push(
      [
        d.disputeId.toString().padEnd(3),
        d.step.toString().padEnd(5),
        d.phase.padEnd(11),
        d.outcome.padEnd(11),
        `${d.validVotes}/${d.faultVotes}/${d.commits}`.padEnd(19),
        d.panel.length.toString().padEnd(6),
        iso(d.commitDeadline).padEnd(21),
        iso(d.revealDeadline).padEnd(21),
        d.challenger,
      ].join(" "),
    );
  }
  return lines.join("\n");
}

/** JSON-safe form of the rows (bigints as decimal strings). */
export function disputeStatusJson(rows: DisputeStatusReturnType): unknown {
  return JSON.parse(JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
}
