/**
 * Claim the caller's StakeVault credit (slash proceeds).
 *
 * @example
 *   const { hash, gasUsed } = await claimStakeCredit(clients, { stakeVault });
 */
import type { Address } from "viem";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type ClaimStakeCreditParameters = SendOptions & {
  stakeVault: Address;
};

export type ClaimStakeCreditReturnType = SendResult;

/** The call `claimStakeCredit` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function claimStakeCreditCall(p: CallParameters<ClaimStakeCreditParameters>): ContractCall<typeof stakeVaultAbi, "claim"> {
  return { address: p.stakeVault, abi: stakeVaultAbi, functionName: "claim", args: [] };
}

export async function claimStakeCredit(clients: ChainClients, p: ClaimStakeCreditParameters): Promise<ClaimStakeCreditReturnType> {
  return sendContractTx(clients, claimStakeCreditCall(p), p);
}
