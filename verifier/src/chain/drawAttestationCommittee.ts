/**
 * Draw and store the committee of attestation request `requestId` (anyone; ProviderRegistry.drawCommittee) once its
 * seed block is mined, within 256 blocks of it and before the deadline. `record` draws it too if nobody did; drawing
 * early pins the committee before the seed block's hash leaves the blockhash range (then the request is dead:
 * ProviderRegistrySeedExpired, no reseed).
 *
 * @example
 *   await drawAttestationCommittee(clients, { providerRegistry, requestId });
 */
import type { Address } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type DrawAttestationCommitteeParameters = SendOptions & {
  providerRegistry: Address;
  requestId: bigint;
};

export type DrawAttestationCommitteeReturnType = SendResult;

/** The call `drawAttestationCommittee` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function drawAttestationCommitteeCall(p: CallParameters<DrawAttestationCommitteeParameters>): ContractCall<typeof providerRegistryAbi, "drawCommittee"> {
  return { address: p.providerRegistry, abi: providerRegistryAbi, functionName: "drawCommittee", args: [p.requestId] };
}

export async function drawAttestationCommittee(clients: ChainClients, p: DrawAttestationCommitteeParameters): Promise<DrawAttestationCommitteeReturnType> {
  return sendContractTx(clients, drawAttestationCommitteeCall(p), p);
}
