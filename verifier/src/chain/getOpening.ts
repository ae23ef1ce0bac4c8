/**
 * The opening of one state of a job (StateOpenings.openingOf and isWithheld; one opening per state serves every
 * auditor): who asked first, the deadline, whether it was answered and whether the state is withheld now (asked,
 * unanswered, deadline passed: it stays so). Also the provider's queue: the deadline a request would get now.
 *
 * @example
 *   const o = await getOpening(clients.public, { stateOpenings, jobId, step: 107 });
 *   if (o.withheld) challengeStepAfter(107);
 */
import { zeroAddress, type Address, type Chain, type PublicClient, type Transport } from "viem";
import { stateOpeningsAbi } from "./abi/StateOpenings.ts";
import { withRetry } from "./retry.ts";

export type GetOpeningParameters = { stateOpenings: Address; jobId: bigint; step: number };

export type Opening = {
  /** False when nobody asked for this state (the other fields are then zero). */
  requested: boolean;
  /** The auditor who asked first (the zero address when nobody did). */
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
  const requested = o.deadline !== 0n;
  return { requested, requester: requested ? o.requester : zeroAddress, deadline: Number(o.deadline), segment: o.segment, answered: o.answered, withheld };
}

export type OpeningTerms = { answerWindowSeconds: number; replaySeconds: number };

/**
 * StateOpenings' terms, fixed at deployment: the provider's answer window on an idle queue, and the seconds between two
 * consecutive deadlines of one provider (its time per opening when openings queue up).
 */
export async function getOpeningTerms(client: PublicClient<Transport, Chain>, p: { stateOpenings: Address }): Promise<OpeningTerms> {
  const [window, replay] = await withRetry(
    () =>
      Promise.all([
        client.readContract({ address: p.stateOpenings, abi: stateOpeningsAbi, functionName: "answerWindowSeconds" }),
        client.readContract({ address: p.stateOpenings, abi: stateOpeningsAbi, functionName: "replaySeconds" }),
      ]),
    { what: "StateOpenings terms" },
  );
  return { answerWindowSeconds: Number(window), replaySeconds: Number(replay) };
}

/** The deadline (unix seconds) a request for a state of job `jobId` would get now: its provider's queue (nextAnswerBy). */
export async function getNextAnswerBy(client: PublicClient<Transport, Chain>, p: { stateOpenings: Address; jobId: bigint }): Promise<number> {
  const at = await withRetry(() => client.readContract({ address: p.stateOpenings, abi: stateOpeningsAbi, functionName: "nextAnswerBy", args: [p.jobId] }), { what: "StateOpenings.nextAnswerBy" });
  return Number(at);
}
