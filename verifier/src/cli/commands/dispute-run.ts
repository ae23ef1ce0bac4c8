/**
 * The handlers of `pouw dispute` (dispute.ts defines the commands and flags and loads this module only when one runs,
 * so `--help` and flag errors load no chain, engine or solver): each parses its arguments, calls the flow, renders.
 */
import { requireJob } from "../../chain/index.ts";
import { InputError } from "../../errors/index.ts";
import { disputeStatus, disputeStatusById, disputeStatusJson, formatDisputeStatus } from "../../dispute/status.ts";
import { parseJobId, readContext, type ReadFlags } from "../context.ts";

/** A dispute id as DisputeGame numbers them (1, 2, ...). */
function parseDisputeId(text: string): bigint {
  if (!/^[1-9][0-9]{0,76}$/.test(text)) throw new InputError(`DISPUTE must be a dispute id (1, 2, ...), got ${JSON.stringify(text)}`);
  return BigInt(text);
}

/** `status`'s handler (the definitions and flags are in dispute.ts). */
export const status = async (disputeText: string | undefined, opts: ReadFlags & { json?: boolean; job?: string }) => {
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
};
