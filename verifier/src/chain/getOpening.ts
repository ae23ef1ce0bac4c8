/**
 * One requester's state opening (StateOpenings.openingOf and isWithheld; openings are keyed by requester): the
 * deadline, whether it was answered and whether the state is withheld from that requester now (asked, unanswered,
 * deadline passed: it stays so).
 *
 * @example
 *   const o = await getOpening(clients.public, { stateOpenings, jobId, step: 107, requester: me });
 *   if (o.withheld) challengeStepAfter(107);
 */
import { type Address, type Chain, type PublicClient, type Transport } from "viem";
import { stateOpeningsAbi } from "./abi/StateOpenings.ts";
import { withRetry } from "./retry.ts";

export type GetOpeningParameters = { stateOpenings: Address; jobId: bigint; step: number; requester: Address };

export type Opening = {
  /** False when nobody asked for this state (the other fields are then zero). */
  requested: boolean;
  requester: Address;
  /** Unix seconds; 0 when not requested. */
  deadline: number;
  /** The segment the state belongs to (as asked). */
  segment: number;
  answered: boolean;
  withheld: boolean;
};

export async function getOpening(client: PublicClient<Transport, Chain>, p: GetOpeningParameters): Promise<Opening> {
  const [o, withheld] = await withRetry(
    () =>
      Promise.all([
        client.readContract({ address: p.stateOpenings, abi: stateOpeningsAbi, functionName: "openingOf", args: [p.jobId, BigInt(p.step), p.requester] }),
        client.readContract({ address: p.stateOpenings, abi: stateOpeningsAbi, functionName: "isWithheld", args: [p.jobId, BigInt(p.step), p.requester] }),
      ]),
    { what: "StateOpenings.openingOf" },
  );
  return { requested: o.deadline !== 0n, requester: p.requester, deadline: Number(o.deadline), segment: o.segment, answered: o.answered, withheld };
}

export type OpeningTerms = { answerWindowSeconds: number; maxOpeningsPerAuditor: number };

/** StateOpenings' terms, fixed at deployment: the provider's answer window and the openings one auditor may ask of a job. */
export async function getOpeningTerms(client: PublicClient<Transport, Chain>, p: { stateOpenings: Address }): Promise<OpeningTerms> {
  const [window, cap] = await withRetry(
    () =>
      Promise.all([
        client.readContract({ address: p.stateOpenings, abi: stateOpeningsAbi, functionName: "answerWindowSeconds" }),
        client.readContract({ address: p.stateOpenings, abi: stateOpeningsAbi, functionName: "maxOpeningsPerAuditor" }),
      ]),
    { what: "StateOpenings terms" },
  );
  return { answerWindowSeconds: Number(window), maxOpeningsPerAuditor: Number(cap) };
}
