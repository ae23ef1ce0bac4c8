/**
 * Claim the caller's DisputeGame credit (challenger bonds won back or taken from a wrong challenger).
 *
 * @example
 *   await claimDisputeCredit(clients, { disputeGame });
 */
import type { Address } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ClaimDisputeCreditParameters = SendOptions & {
  disputeGame: Address;
};

export type ClaimDisputeCreditReturnType = SendResult;

/** The call `claimDisputeCredit` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function claimDisputeCreditCall(p: CallParameters<ClaimDisputeCreditParameters>): ContractCall<typeof disputeGameAbi, "claim"> {
  return { address: p.disputeGame, abi: disputeGameAbi, functionName: "claim", args: [] };
}

export async function claimDisputeCredit(clients: ChainClients, p: ClaimDisputeCreditParameters): Promise<ClaimDisputeCreditReturnType> {
  return sendContractTx(clients, claimDisputeCreditCall(p), p);
}
