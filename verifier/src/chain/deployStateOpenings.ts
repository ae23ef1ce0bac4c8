/**
 * Deploy StateOpenings beside a market deployment (ownerless, fundless, no wiring: it reads jobs, commitments and the
 * AuditorRegistry from the JobMarket, as JobRecords does).
 *
 * @example
 *   const { stateOpenings } = await deployStateOpenings(clients, { jobMarket: d.jobMarket });
 */
import type { Address } from "viem";
import { stateOpeningsAbi, stateOpeningsBytecode } from "./abi/StateOpenings.ts";
import type { ChainClients } from "./clients.ts";
import { deployContract } from "./deployContract.ts";

/** Defaults: the provider has 6 hours to open a state (a segment's replay plus publishing, with room for an outage);
 * one auditor may ask 64 openings of one job (a bot samples a handful of steps per segment). */
export const DEFAULT_OPENING_TERMS = { answerWindowSeconds: 6 * 3600, maxOpeningsPerAuditor: 64 } as const;

export type DeployStateOpeningsParameters = { jobMarket: Address; answerWindowSeconds?: number; maxOpeningsPerAuditor?: number };

export type DeployStateOpeningsReturnType = { stateOpenings: Address; block: bigint };

export async function deployStateOpenings(clients: ChainClients, p: DeployStateOpeningsParameters): Promise<DeployStateOpeningsReturnType> {
  const window = p.answerWindowSeconds ?? DEFAULT_OPENING_TERMS.answerWindowSeconds;
  const cap = p.maxOpeningsPerAuditor ?? DEFAULT_OPENING_TERMS.maxOpeningsPerAuditor;
  const { address, block } = await deployContract(clients, stateOpeningsAbi, stateOpeningsBytecode, [p.jobMarket, BigInt(window), BigInt(cap)]);
  return { stateOpenings: address, block };
}
