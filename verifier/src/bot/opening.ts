/**
 * Reading a state opening (StateOpenings) as the bot sees it: the step auditor (steps.ts) and panel duty
 * (dispute/panel.ts, decideStep's preStateOpening) both read openings through readOpening. It depends on chain/ and
 * checks/ types only, so neither the auditor nor the dispute step imports the other for it.
 */
import { getAddress, type Address } from "viem";
import { chainDate, getOpening, getOpeningRequests, type ChainClients } from "../chain/index.ts";
import type { OpenedPreState } from "../checks/index.ts";

/**
 * What `requester`'s opening of state `state` of job `jobId` holds now: undefined when it asked for none, "pending"
 * while the provider may still answer (or the answer's log is not indexed yet), else the opened CID or the withholding.
 */
export async function readOpening(client: ChainClients["public"], p: { stateOpenings: Address; fromBlock: bigint; jobId: bigint; state: number; requester: Address }): Promise<OpenedPreState | "pending" | undefined> {
  const opening = await getOpening(client, { stateOpenings: p.stateOpenings, jobId: p.jobId, step: p.state, requester: p.requester });
  if (!opening.requested) return undefined;
  if (opening.withheld) return { withheld: `unanswered past its deadline ${chainDate(opening.deadline)}` };
  if (!opening.answered) return "pending";
  const mine = (await getOpeningRequests(client, { stateOpenings: p.stateOpenings, jobId: p.jobId, fromBlock: p.fromBlock })).find(
    (r) => r.step === p.state && getAddress(r.requester) === getAddress(p.requester) && r.answered !== null,
  );
  return mine ? { checkpointCid: mine.answered!.checkpointCid } : "pending";
}
