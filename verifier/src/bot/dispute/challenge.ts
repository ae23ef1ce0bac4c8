/**
 * Opening a challenge (the challenger's commit and reveal): for a finding with a step claim, whatever other disputes
 * are open on the job (one may be the provider's own address holding a valid step; every dispute open at a fault
 * shares the reward), three intents: `approveBond:J:S` (the exact requiredDeposit(J): bond plus panel fees),
 * `commitChallenge:J:S` (the hidden commitment; its salt is stored with the intents) and `challenge:J:S` (sent after
 * the commitment's receipt, so in a later block), recorded atomically with the audit result; reconciled after a
 * restart by the Challenged events of (job, step) (a challenge by anyone else on the step counts as done).
 */
import type { Hex } from "viem";
import { approveTokenCall, challengeCommitment, challengeStepCall, commitChallengeCall, encodeCall, getJobDisputes, getOpenDispute, getRequiredDeposit, newChallengeSalt } from "../../chain/index.ts";
import { formatIntentKey } from "../intent-key.ts";
import type { Finding, FindingPayload, Game, IntentSpec } from "./types.ts";

/**
 * Whether the challenge of a round is done on chain: for round 1 any dispute on (job, step) of the same leaf, by anyone; for a later
 * round (`after` = the NoDecision dispute it follows) only an open dispute on (job, step) or one opened after it.
 */
export async function challengeExists(g: Game, jobId: bigint, step: number, after: bigint | undefined, hStep: Hex | undefined): Promise<boolean> {
  // a dispute on the same step of another commit (an earlier tenure of the job) is not this challenge
  const onStep = (await getJobDisputes(g.pub, { disputeGame: g.game, jobId, fromBlock: BigInt(g.deployment.startBlock) })).filter((d) => d.step === step && (hStep === undefined || d.hStep === hStep));
  if (after === undefined) return onStep.length > 0;
  if (onStep.some((d) => d.disputeId > after)) return true;
  return (await getOpenDispute(g.pub, { disputeGame: g.game, jobId, step })) !== undefined;
}

export const requiredDeposit = (g: Game, jobId: bigint) => getRequiredDeposit(g.pub, { disputeGame: g.game, jobId });

/**
 * The three intents of one round: approve exactly `deposit` (bond plus panel fees, pulled by challenge), commit to the
 * challenge (its salt is in the challenge calldata, stored with the intents and revealed only by the challenge, which
 * the bot sends after the commitment's receipt, so in a later block), then challenge.
 */
export function roundIntents(g: Game, finding: FindingPayload, deposit: bigint, commitData: Hex, challengeData: Hex): IntentSpec[] {
  const k = { jobId: BigInt(finding.jobId), segment: finding.segment, round: finding.round ?? 1, ...(finding.commit === undefined ? {} : { commit: finding.commit }) };
  const common = { jobId: finding.jobId, segment: finding.segment };
  return [
    { key: formatIntentKey({ kind: "approveBond", ...k }), kind: "approveBond", ...common, payload: { ...encodeCall(approveTokenCall({ token: g.deployment.token, spender: g.game, amount: deposit })), finding } },
    { key: formatIntentKey({ kind: "commitChallenge", ...k }), kind: "commitChallenge", ...common, payload: { to: g.game, data: commitData, finding } },
    { key: formatIntentKey({ kind: "challenge", ...k }), kind: "challenge", ...common, payload: { to: g.game, data: challengeData, commit: commitData, finding } },
  ];
}

/** The intents that open a challenge of `f` (round 1); [] when it has no step claim. */
export async function challengeIntents(g: Game, f: Finding): Promise<IntentSpec[]> {
  if (!f.claim) return [];
  // NOTE: challenged even while other disputes are open on the job: one of them may be the provider's own address
  // on a valid step, kept open to block challenges; every dispute open at a fault shares the reward (IDisputeGame).
  const c = f.claim;
  const salt = newChallengeSalt();
  const commit = encodeCall(commitChallengeCall({ disputeGame: g.game, jobId: f.jobId, segment: f.segment, commitment: challengeCommitment(f.jobId, c.step, g.clients.account.address, salt) })).data;
  const data = encodeCall(
    challengeStepCall({
      disputeGame: g.game,
      jobId: f.jobId,
      segment: f.segment,
      step: c.step,
      traceRoot: f.traceRoot,
      endStateHash: f.endStateHash,
      hPrev: c.prevStateHash,
      proofPrev: c.prevProof,
      hStep: c.stateHash,
      proofStep: c.proof,
      salt,
    }),
  ).data;
  return roundIntents(g, { jobId: f.jobId.toString(), segment: f.segment, step: c.step, hStep: c.stateHash, ...(f.commit === undefined ? {} : { commit: f.commit }) }, await requiredDeposit(g, f.jobId), commit, data);
}
