/**
 * The StakeSlashed events of the StakeVault: what was taken from a provider's lock for a job, and how much of it
 * was burned (the rest went to the challenger and the buyer as credits).
 *
 * @example
 *   const slashes = await getStakeSlashes(clients.public, { stakeVault, jobId: 1n, fromBlock: BigInt(d.startBlock) });
 *   const total = slashes.reduce((s, x) => s + x.amount, 0n);
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import { withRetry } from "./retry.ts";

export type GetStakeSlashesParameters = { stakeVault: Address; jobId?: bigint; provider?: Address; fromBlock: bigint; toBlock?: bigint };

export type StakeSlash = { provider: Address; jobId: bigint; amount: bigint; burned: bigint; blockNumber: bigint; transactionHash: Hex };

export type GetStakeSlashesReturnType = StakeSlash[];

export async function getStakeSlashes(client: PublicClient<Transport, Chain>, p: GetStakeSlashesParameters): Promise<GetStakeSlashesReturnType> {
  const logs = await withRetry(
    () =>
      client.getContractEvents({
        address: p.stakeVault,
        abi: stakeVaultAbi,
        eventName: "StakeSlashed",
        args: { ...(p.jobId === undefined ? {} : { jobId: p.jobId }), ...(p.provider === undefined ? {} : { provider: p.provider }) },
        fromBlock: p.fromBlock,
        toBlock: p.toBlock ?? "latest",
        strict: true,
      }),
    { what: "StakeSlashed logs" },
  );
  return logs.map((l) => ({ provider: l.args.provider, jobId: l.args.jobId, amount: l.args.amount, burned: l.args.burned, blockNumber: l.blockNumber, transactionHash: l.transactionHash }));
}
