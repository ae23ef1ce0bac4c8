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
import type { TxRef } from "./send.ts";

/** Defaults: the provider has 6 hours to open a state asked of an idle queue (a segment's replay plus publishing, with
 * room for an outage), and 10 minutes per opening when openings queue up (one segment replay and one answer
 * transaction): a flood demands at most 6 segment replays an hour of a provider (docs/checks.md, "State openings: the
 * queue"). A provider takes only jobs whose segment replays in well under replaySeconds on its hardware. */
export const DEFAULT_OPENING_TERMS = { answerWindowSeconds: 6 * 3600, replaySeconds: 600 } as const;

export type DeployStateOpeningsParameters = { jobMarket: Address; answerWindowSeconds?: number; replaySeconds?: number; onTx?: (tx: TxRef) => void };

export type DeployStateOpeningsReturnType = { stateOpenings: Address; block: bigint };

export async function deployStateOpenings(clients: ChainClients, p: DeployStateOpeningsParameters): Promise<DeployStateOpeningsReturnType> {
  const window = p.answerWindowSeconds ?? DEFAULT_OPENING_TERMS.answerWindowSeconds;
  const replay = p.replaySeconds ?? DEFAULT_OPENING_TERMS.replaySeconds;
  const { address, block, hash } = await deployContract(clients, stateOpeningsAbi, stateOpeningsBytecode, [p.jobMarket, BigInt(window), BigInt(replay)]);
  p.onTx?.({ what: "deploy StateOpenings", hash, blockNumber: block });
  return { stateOpenings: address, block };
}
