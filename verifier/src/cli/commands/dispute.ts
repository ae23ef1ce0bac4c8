/**
 * `pouw dispute status JOB [--json]`: the disputes of a job, their phase, deadlines, panel, votes and outcome.
 * Thin: it calls disputeStatus (verifier/src/dispute), the same function the bots poll. Exit 2 on bad input
 * (bad job id, no DisputeGame in the deployment, unreachable RPC).
 */
import type { Command } from "commander";
import { createPublicClient, http, type Chain } from "viem";
import { hardhat } from "viem/chains";
import { fetchChainId, readDeployment } from "../../chain/index.ts";
import { addConfigOptions, parseConfig, type ConfigFlags } from "../../config/index.ts";
import { InputError } from "../../errors/index.ts";
import { setLogLevel } from "../../log/index.ts";
// status.ts alone: dispute/index.ts also exports the prover (snarkjs), which a read-only command does not need
import { disputeStatus, disputeStatusJson, formatDisputeStatus } from "../../dispute/status.ts";

function parseJob(text: string): bigint {
  if (!/^[1-9][0-9]{0,76}$/.test(text)) throw new InputError(`JOB must be a job id (1, 2, ...), got ${JSON.stringify(text)}`);
  return BigInt(text);
}

export function registerDispute(program: Command): void {
  const dispute = program.command("dispute").description("follow one-step disputes (challenge, panel votes, proofs)");
  addConfigOptions(
    dispute
      .command("status")
      .description("list a job's disputes: phase, deadlines, panel, votes and outcome")
      .argument("<JOB>", "job id")
      .option("--json", "print the disputes as JSON"),
  ).action(async (jobText: string, opts: ConfigFlags & { json?: boolean }) => {
    const jobId = parseJob(jobText);
    const config = parseConfig(opts);
    setLogLevel(config.logLevel);
    const chainId = await fetchChainId(config.rpcUrl).catch((err: unknown) => {
      throw new InputError(`cannot reach the RPC at ${config.rpcUrl} (start \`npx hardhat node\` or pass --rpc)`, { cause: err });
    });
    const deployment = await readDeployment(config.deploymentPath, chainId);
    if (!deployment.disputeGame) throw new InputError(`the deployment at ${config.deploymentPath} has no disputeGame`);
    const chain: Chain = { ...hardhat, id: chainId };
    const client = createPublicClient({ chain, transport: http(config.rpcUrl) });
    const rows = await disputeStatus(client, { disputeGame: deployment.disputeGame, jobId, fromBlock: BigInt(deployment.startBlock) });
    process.stdout.write(`${opts.json ? JSON.stringify(disputeStatusJson(rows)) : formatDisputeStatus(jobId, rows)}\n`);
  });
}
