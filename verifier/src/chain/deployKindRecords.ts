/**
 * Deploy KindRecords beside a market deployment (ownerless, fundless, no wiring: it reads jobs and commitments from
 * the JobMarket, as JobRecords does).
 *
 * @example
 *   const { kindRecords } = await deployKindRecords(clients, { jobMarket: d.jobMarket });
 */
import type { Address } from "viem";
import { kindRecordsAbi, kindRecordsBytecode } from "./abi/KindRecords.ts";
import type { ChainClients } from "./clients.ts";
import { deployContract } from "./deployContract.ts";

export type DeployKindRecordsParameters = { jobMarket: Address };

export type DeployKindRecordsReturnType = { kindRecords: Address; block: bigint };

export async function deployKindRecords(clients: ChainClients, p: DeployKindRecordsParameters): Promise<DeployKindRecordsReturnType> {
  const { address, block } = await deployContract(clients, kindRecordsAbi, kindRecordsBytecode, [p.jobMarket]);
  return { kindRecords: address, block };
}
