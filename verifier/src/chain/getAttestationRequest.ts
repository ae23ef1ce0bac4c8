/**
 * Read attestation request `requestId` (IProviderRegistry.Request) and, when it can be known, its committee: the
 * stored one once drawn, else the one a draw would give now (after the seed block, within 256 blocks of it, before the
 * deadline); `committee` is undefined while it cannot be computed (seed not mined, seed expired, request closed), with
 * `committeeUnavailable` naming the contract's reason.
 *
 * @example
 *   const q = await getAttestationRequest(clients.public, { providerRegistry, requestId });
 *   if (q.committee?.includes(me)) ... // this auditor was drawn: verify the evidence and sign
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import { ContractRevertError } from "./errors.ts";
import { withRetry } from "./retry.ts";

export type GetAttestationRequestParameters = { providerRegistry: Address; requestId: bigint };

export type GetAttestationRequestReturnType = {
  requestId: bigint;
  provider: Address;
  asOf: bigint;
  seedBlock: bigint;
  deadline: bigint;
  drawn: boolean;
  recorded: boolean;
  evidenceHash: `0x${string}`;
  /** blockhash of the challenge block the provider named. */
  challenge: `0x${string}`;
  /** What the evidence's nonce must be: keccak256(abi.encode(provider, chainId, registry, challenge)). */
  binding: `0x${string}`;
  committee: readonly Address[] | undefined;
  committeeUnavailable: string | undefined;
};

export async function getAttestationRequest(client: PublicClient<Transport, Chain>, p: GetAttestationRequestParameters): Promise<GetAttestationRequestReturnType> {
  const q = await withRetry(() => client.readContract({ address: p.providerRegistry, abi: providerRegistryAbi, functionName: "requestOf", args: [p.requestId] }), {
    what: "ProviderRegistry.requestOf",
  });
  let committee: readonly Address[] | undefined;
  let committeeUnavailable: string | undefined;
  try {
    committee = await withRetry(() => client.readContract({ address: p.providerRegistry, abi: providerRegistryAbi, functionName: "committeeOf", args: [p.requestId] }), {
      what: "ProviderRegistry.committeeOf",
    });
  } catch (err) {
    if (!(err instanceof ContractRevertError)) throw err;
    committeeUnavailable = err.errorName;
  }
  return {
    requestId: p.requestId,
    provider: q.provider,
    asOf: q.asOf,
    seedBlock: q.seedBlock,
    deadline: q.deadline,
    drawn: q.drawn,
    recorded: q.recorded,
    evidenceHash: q.evidenceHash,
    challenge: q.challenge,
    binding: q.binding,
    committee,
    committeeUnavailable,
  };
}
