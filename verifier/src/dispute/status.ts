/**
 * One dispute, or the disputes of a job, and where each stands: job, step, phase, deadlines, panel, votes, outcome
 * (what `pouw dispute status DISPUTE` and `pouw dispute status --job JOB` print).
 *
 * @example
 *   const one = await disputeStatusById(clients.public, { disputeGame, disputeId: 1n });
 *   const rows = await disputeStatus(clients.public, { disputeGame, jobId: 1n, fromBlock: 0n });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { ChainError } from "../chain/errors.ts";
import { InputError } from "../errors/index.ts";
import { getDispute, type GetDisputeReturnType } from "../chain/getDispute.ts";
import { getJobDisputes } from "../chain/getJobDisputes.ts";

export type DisputeStatusParameters = { disputeGame: Address; jobId: bigint; fromBlock: bigint };
export type DisputeStatusReturnType = GetDisputeReturnType[];

export async function disputeStatus(client: PublicClient<Transport, Chain>, p: DisputeStatusParameters): Promise<DisputeStatusReturnType> {
  const opened = await getJobDisputes(client, p);
  return Promise.all(opened.map((o) => getDispute(client, { disputeGame: p.disputeGame, disputeId: o.disputeId })));
}

/** A dispute id DisputeGame never assigned: one line for the CLI (exit 2). */
export class UnknownDisputeError extends InputError {
  override name = "UnknownDisputeError";
  override readonly code: string = "UNKNOWN_DISPUTE";
}

/** The dispute `disputeId` as a one-row list; UnknownDisputeError when DisputeGame has no such dispute. */
export async function disputeStatusById(client: PublicClient<Transport, Chain>, p: { disputeGame: Address; disputeId: bigint }): Promise<DisputeStatusReturnType> {
  try {
    return [await getDispute(client, p)];
  } catch (err) {
    if (err instanceof ChainError && /does not exist/.test(err.message)) throw new UnknownDisputeError(`dispute ${p.disputeId} does not exist`);
    throw err;
  }
}

const iso = (s: bigint) => new Date(Number(s) * 1000).toISOString().replace(".000Z", "Z");

/** A plain-text table of disputes, one line each (pure); `of`: the job they are listed for (a bare bigint is a job id) or the one dispute asked for. */
export function formatDisputeStatus(of: bigint | { jobId: bigint } | { disputeId: bigint }, rows: DisputeStatusReturnType): string {
  if (typeof of === "bigint") of = { jobId: of };
  const title = "jobId" in of ? `job ${of.jobId}: ${rows.length === 0 ? "no disputes" : `${rows.length} dispute(s)`}` : `dispute ${of.disputeId} (job ${rows[0]?.jobId ?? "?"}, segment ${rows[0]?.segment ?? "?"})`;
  if (rows.length === 0) return title;
  const lines = [title, "id  job  step  phase       outcome     votes(V/F/commits)  panel  commit-deadline       reveal-deadline       challenger"];
  for (const d of rows) {
    lines.push(
      [
        d.disputeId.toString().padEnd(3),
        d.jobId.toString().padEnd(4),
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
