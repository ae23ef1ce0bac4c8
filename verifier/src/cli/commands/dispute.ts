/**
 * `pouw dispute status JOB [--json]`: the disputes of a job, their phase, deadlines, panel, votes and outcome.
 * Thin: it calls disputeStatus (verifier/src/dispute), the same function the bots poll. Read-only: needs no key. Exit 2
 * on bad input (bad or unknown job id, no DisputeGame in the deployment, unreachable RPC).
 */
import type { Command } from "commander";
import { requireJob } from "../../chain/index.ts";
import { InputError } from "../../errors/index.ts";
// status.ts alone: dispute/index.ts also exports the prover (snarkjs), which a read-only command does not need
import { disputeStatus, disputeStatusJson, formatDisputeStatus } from "../../dispute/status.ts";
import { parseJobId, readContext, withConfig, type ReadFlags } from "../context.ts";

export function registerDispute(program: Command): void {
  const dispute = program.command("dispute").description("follow one-step disputes (challenge, panel votes, proofs)");
  withConfig(
    dispute
      .command("status")
      .description("list a job's disputes: phase, deadlines, panel, votes and outcome")
      .argument("<JOB>", "job id")
      .option("--json", "print the disputes as JSON"),
  ).action(async (jobText: string, opts: ReadFlags & { json?: boolean }) => {
    const jobId = parseJobId(jobText);
    const ctx = await readContext(opts);
    const { deployment, config } = ctx;
    if (!deployment.disputeGame) throw new InputError(`the deployment at ${config.deploymentPath} has no disputeGame`);
    await requireJob(ctx.clients.public, { jobMarket: deployment.jobMarket, jobId });
    const rows = await disputeStatus(ctx.clients.public, { disputeGame: deployment.disputeGame, jobId, fromBlock: BigInt(deployment.startBlock) });
    process.stdout.write(`${opts.json ? JSON.stringify(disputeStatusJson(rows)) : formatDisputeStatus(jobId, rows)}\n`);
  });
}
