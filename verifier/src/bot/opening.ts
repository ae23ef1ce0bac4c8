/**
 * Reading a state opening (StateOpenings) as the bot sees it: the step auditor (steps.ts) and panel duty
 * (dispute/panel.ts, decideStep's preStateOpening) both read openings through readOpening. It depends on chain/ and
 * checks/ types only, so neither the auditor nor the dispute step imports the other for it.
 *
 * One opening per state serves every auditor: whoever asked, its answer (or its withholding) is the state's, and a
 * panel judges a challenge of step s from the opening of state s-1 whoever asked it.
 */
import type { Address } from "viem";
import { chainDate, getNextAnswerBy, getOpening, getOpeningRequests, type ChainClients } from "../chain/index.ts";
import type { OpenedPreState } from "../checks/index.ts";

/**
 * What the opening of state `state` of job `jobId` holds now: undefined when nobody asked for it, "pending" while the
 * provider may still answer (or the answer's log is not indexed yet), else the opened CID or the withholding.
 */
export async function readOpening(client: ChainClients["public"], p: { stateOpenings: Address; fromBlock: bigint; jobId: bigint; state: number }): Promise<OpenedPreState | "pending" | undefined> {
  const opening = await getOpening(client, { stateOpenings: p.stateOpenings, jobId: p.jobId, step: p.state });
  if (!opening.requested) return undefined;
  if (opening.withheld) return { withheld: `unanswered past its deadline ${chainDate(opening.deadline)}` };
  if (!opening.answered) return "pending";
  const answer = (await getOpeningRequests(client, { stateOpenings: p.stateOpenings, jobId: p.jobId, fromBlock: p.fromBlock })).find((r) => r.step === p.state && r.answered !== null);
  return answer ? { checkpointCid: answer.answered!.checkpointCid } : "pending";
}

/**
 * Whether a request for a state of job `jobId` asked now would be taken, as far as the provider's queue goes: the
 * deadline it would get (`nextAnswerBy`) plus one answer window (to dispute a withholding) must fit before
 * `windowEnd` (the job's challenge window end; unix seconds), with `marginS` for the request's own mining. When it
 * does not (a flood filled the queue, or the window is nearly over) the bot recomputes the segment instead: a full
 * queue never stops an audit.
 */
export async function openingFits(client: ChainClients["public"], p: { stateOpenings: Address; jobId: bigint; answerWindowS: number; windowEnd: number; marginS: number }): Promise<boolean> {
  const answerBy = await getNextAnswerBy(client, { stateOpenings: p.stateOpenings, jobId: p.jobId });
  return answerBy + p.answerWindowS + p.marginS <= p.windowEnd;
}
