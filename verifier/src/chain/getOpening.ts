/**
 * One state opening (StateOpenings.openingOf and isWithheld): who asked, the deadline, whether it was answered and
 * whether the state is withheld now (asked, unanswered, deadline passed: it stays so).
 *
 * @example
 *   const o = await getOpening(clients.public, { stateOpenings, jobId, step: 107 });
 *   if (o.withheld) challengeStepAfter(107);
 */
import { type Address, type Chain, type PublicClient, type Transport } from "viem";
import { stateOpeningsAbi } from "./abi/StateOpenings.ts";
import { withRetry } from "./retry.ts";

export type GetOpeningParameters = { stateOpenings: Address; jobId: bigint; step: number };

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
        client.readContract({ address: p.stateOpenings, abi: stateOpeningsAbi, functionName: "openingOf", args: [p.jobId, BigInt(p.step)] }),
        client.readContract({ address: p.stateOpenings, abi: stateOpeningsAbi, functionName: "isWithheld", args: [p.jobId, BigInt(p.step)] }),
      ]),
    { what: "StateOpenings.openingOf" },
  );
  return { requested: o.deadline !== 0n, requester: o.requester, deadline: Number(o.deadline), segment: o.segment, answered: o.answered, withheld };
}
