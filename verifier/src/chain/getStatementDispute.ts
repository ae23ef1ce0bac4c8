/**
 * A statement dispute of ProviderRegistry with its panel (empty until drawn) and the outcome by name.
 *
 * @example
 *   const d = await getStatementDispute(clients.public, { providerRegistry, disputeId });
 *   // d.outcome: "open" | "upheld" | "rejected" | "undecided" | "revoked" (held at its time, revoked since); d.panel; d.deadline
 */
import type { Address, PublicClient } from "viem";
import { providerRegistryAbi } from "./abi/ProviderRegistry.ts";
import { ChainError } from "./errors.ts";

export const STATEMENT_DISPUTE_OUTCOMES = ["open", "upheld", "rejected", "undecided", "revoked"] as const;
export type StatementDisputeOutcome = (typeof STATEMENT_DISPUTE_OUTCOMES)[number];

export type GetStatementDisputeParameters = { providerRegistry: Address; disputeId: bigint };

export type GetStatementDisputeReturnType = {
  disputeId: bigint;
  provider: Address;
  requestId: bigint;
  challenger: Address;
  bond: bigint;
  asOf: bigint;
  seedBlock: bigint;
  deadline: bigint;
  drawn: boolean;
  falseVotes: number;
  trueVotes: number;
  outcome: StatementDisputeOutcome;
  panel: readonly Address[];
};

export async function getStatementDispute(client: PublicClient, p: GetStatementDisputeParameters): Promise<GetStatementDisputeReturnType> {
  const [d, panel] = await Promise.all([
    client.readContract({ address: p.providerRegistry, abi: providerRegistryAbi, functionName: "disputeOf", args: [p.disputeId] }),
    client.readContract({ address: p.providerRegistry, abi: providerRegistryAbi, functionName: "panelOf", args: [p.disputeId] }),
  ]);
  const outcome = STATEMENT_DISPUTE_OUTCOMES[d.outcome];
  if (outcome === undefined) throw new ChainError(`ProviderRegistry.disputeOf(${p.disputeId}): unknown outcome ${d.outcome}`);
  return { disputeId: p.disputeId, provider: d.provider, requestId: d.requestId, challenger: d.challenger, bond: d.bond, asOf: d.asOf, seedBlock: d.seedBlock, deadline: d.deadline, drawn: d.drawn, falseVotes: d.falseVotes, trueVotes: d.trueVotes, outcome, panel };
}
