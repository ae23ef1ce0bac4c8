/**
 * Claim the caller's DisputeGame credit (challenger bonds won back or taken from a wrong challenger).
 *
 * @example
 *   await claimDisputeCredit(clients, { disputeGame });
 */
import type { Address } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ClaimDisputeCreditParameters = SendOptions & {
  disputeGame: Address;
};

export type ClaimDisputeCreditReturnType = SendResult;

export async function claimDisputeCredit(clients: ChainClients, p: ClaimDisputeCreditParameters): Promise<ClaimDisputeCreditReturnType> {
  return sendContractTx(clients, { address: p.disputeGame, abi: disputeGameAbi, functionName: "claim", args: [] }, p);
}
