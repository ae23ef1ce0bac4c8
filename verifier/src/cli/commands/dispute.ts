/**
 * `pouw dispute status DISPUTE [--json]`: one dispute (its job, step, phase, deadlines, panel, votes and outcome);
 * `pouw dispute status --job JOB [--json]`: every dispute of a job. Thin: it calls disputeStatus / disputeStatusById
 * (verifier/src/dispute/status.ts), the same reads the bots make. Read-only: needs no key. Exit 2 on bad input (a bad
 * or unknown dispute or job id, both or neither given, no DisputeGame in the deployment, unreachable RPC).
 */
import type { Command } from "commander";
import { requireJob } from "../../chain/index.ts";
import { InputError } from "../../errors/index.ts";
// status.ts alone: dispute/index.ts also exports the prover (snarkjs), which a read-only command does not need
import { disputeStatus, disputeStatusById, disputeStatusJson, formatDisputeStatus } from "../../dispute/status.ts";
import { parseJobId, readContext, withConfig, type ReadFlags } from "../context.ts";

/** A dispute id as DisputeGame numbers them (1, 2, ...). */
function parseDisputeId(text: string): bigint {
  if (!/^[1-9][0-9]{0,76}$/.test(text)) throw new InputError(`DISPUTE must be a dispute id (1, 2, ...), got ${JSON.stringify(text)}`);
  return BigInt(text);
}

export function registerDispute(program: Command): void {
  const dispute = program.command("dispute").description("follow one-step disputes (challenge, panel votes, proofs)");
  withConfig(
    dispute
      .command("status")
      .description("one dispute by id (or a job's disputes with --job): job, step, phase, deadlines, panel, votes and outcome")
      .argument("[DISPUTE]", "dispute id")
      .option("--job <JOB>", "list every dispute of this job instead")
      .option("--json", "print the disputes as JSON"),
  ).action(async (disputeText: string | undefined, opts: ReadFlags & { json?: boolean; job?: string }) => {
    if ((disputeText === undefined) === (opts.job === undefined)) throw new InputError("give a dispute id (pouw dispute status 1) or a job (pouw dispute status --job 1), not both or neither");
    const disputeId = disputeText === undefined ? undefined : parseDisputeId(disputeText);
    const jobId = opts.job === undefined ? undefined : parseJobId(opts.job);
    const ctx = await readContext(opts);
    const { deployment, config } = ctx;
    if (!deployment.disputeGame) throw new InputError(`the deployment at ${config.deploymentPath} has no disputeGame`);
    if (disputeId !== undefined) {
      const rows = await disputeStatusById(ctx.clients.public, { disputeGame: deployment.disputeGame, disputeId });
      process.stdout.write(`${opts.json ? JSON.stringify((disputeStatusJson(rows) as unknown[])[0]) : formatDisputeStatus({ disputeId }, rows)}\n`);
      return;
    }
    await requireJob(ctx.clients.public, { jobMarket: deployment.jobMarket, jobId: jobId! });
    const rows = await disputeStatus(ctx.clients.public, { disputeGame: deployment.disputeGame, jobId: jobId!, fromBlock: BigInt(deployment.startBlock) });
    process.stdout.write(`${opts.json ? JSON.stringify(disputeStatusJson(rows)) : formatDisputeStatus({ jobId: jobId! }, rows)}\n`);
  });
}
