/**
 * Deploy KindRecords beside a market deployment (ownerless, fundless, no wiring: it reads jobs and commitments from
 * the JobMarket, as JobRecords does). `minStake` is the least stake a recorded job's provider locked (at any tier):
 * results of jobs posted with a smaller requiredStake are refused (KindRecordsStakeTooLow), so a self-dealt job with a
 * token lock records nothing anyone cites.
 *
 * @example
 *   const { kindRecords } = await deployKindRecords(clients, { jobMarket: d.jobMarket, minStake: parseEther("1") });
 */
import type { Address } from "viem";
import { kindRecordsAbi, kindRecordsBytecode } from "./abi/KindRecords.ts";
import type { ChainClients } from "./clients.ts";
import { deployContract } from "./deployContract.ts";
import type { TxRef } from "./send.ts";

export type DeployKindRecordsParameters = { jobMarket: Address; minStake: bigint; onTx?: (t: TxRef) => void };

export type DeployKindRecordsReturnType = { kindRecords: Address; block: bigint };

export async function deployKindRecords(clients: ChainClients, p: DeployKindRecordsParameters): Promise<DeployKindRecordsReturnType> {
  const { address, block, hash } = await deployContract(clients, kindRecordsAbi, kindRecordsBytecode, [p.jobMarket, p.minStake]);
  p.onTx?.({ what: "deploy KindRecords", hash, blockNumber: block });
  return { kindRecords: address, block };
}
