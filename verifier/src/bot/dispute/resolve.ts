/**
 * The end of a round: resolve, and the bot's own next challenge round after a NoDecision.
 *
 *   resolve    after the reveal deadline (or once every member revealed): intent `resolve:D` (`resolve:D:rN` in
 *              appeal round N: resolving a split Fault, a tie or a silent round opens the next round, which is
 *              resolved again), superseded if
 *              anyone resolved that round first. A unanimous first-round Fault opens the provider's appeal window
 *              instead: once it passed unused, intent `resolve:D:settle` settles it.
 *   again      when a dispute this bot opened resolves NoDecision (its last round tied or silent, or no panel: too few
 *              eligible auditors, a lapsed seed)
 *              and the bot still holds the failing audit with its step claim (its last challenge intent for the
 *              segment), it opens a new round while JobMarket can still freeze the job: `approveBond:J:S:rN` and
 *              `challenge:J:S:rN` (same calldata, deposit re-read), recorded in the same SQLite transaction that marks
 *              the dispute done, at most `maxChallengeRounds` challenges per (job, segment). Reconciliation of round N
 *              counts only a dispute on (job, step) that is open or newer than the NoDecision it follows. PanelValid
 *              (the panel disagreed; the bond is lost) and fault outcomes never start a round: re-challenging a step a
 *              panel judged valid would be griefing.
 */
import type { Hex } from "viem";
import type { Logger } from "pino";
import { encodeCall, getFaultAppeal, getJob, resolveDisputeCall } from "../../chain/index.ts";
import { commitTag, formatIntentKey } from "../intent-key.ts";
import { requiredDeposit, roundIntents } from "./challenge.ts";
import type { DisputeContext, FindingPayload, Followed, Game } from "./types.ts";

/**
 * Records the intent that resolves dispute `f` in its current `round` (the intent key makes it once per round). A
 * unanimous first-round Fault waits for the provider's appeal: nothing while its window is open, then `resolve:D:settle`.
 */
export async function resolveIntent(g: Game, ctx: DisputeContext, f: Followed, round: number): Promise<void> {
  const disputeId = BigInt(f.id);
  const { deadline } = await getFaultAppeal(g.pub, { disputeGame: g.game, disputeId });
  if (deadline !== undefined && deadline >= (await g.pub.getBlock()).timestamp) return;
  const key = formatIntentKey(deadline !== undefined ? { kind: "resolve", disputeId, round, settle: true } : { kind: "resolve", disputeId, round });
  ctx.db.addIntent({ key, kind: "resolveDispute", jobId: f.jobId, segment: f.segment, payload: { ...encodeCall(resolveDisputeCall({ disputeGame: g.game, disputeId })), disputeId: f.id, round } });
}

/**
 * After this bot's own dispute `f` resolved NoDecision: the next round's intents, recorded with `f` marked done in
 * one SQLite transaction (a restart neither loses nor repeats the round). Returns "done" once decided.
 */
export async function nextRound(g: Game, maxRounds: number, ctx: DisputeContext, f: Followed, followed: Followed[], log: Logger): Promise<"wait" | "done"> {
  const seg = ctx.db.segment(f.jobId, f.segment);
  // rounds of the commit the bot holds now (a commit a reorg replaced had its own)
  const tag = commitTag(seg?.blockHash);
  const mine = ctx.db.allIntents().filter((i) => i.kind === "challenge" && i.job_id === f.jobId && i.segment === f.segment && (JSON.parse(i.payload) as { finding?: FindingPayload }).finding?.commit === tag);
  const prior = mine.filter((i) => (JSON.parse(i.payload) as { finding?: FindingPayload }).finding?.step === f.step).at(-1);
  if (seg?.audit !== "bad" || !prior) {
    log.info("own dispute ended NoDecision; no failing audit with this step claim held: no new round");
    return "done";
  }
  const round = mine.length + 1;
  if (round > maxRounds) {
    log.warn({ rounds: mine.length, maxChallengeRounds: maxRounds }, "own dispute ended NoDecision; round limit reached: not challenging again");
    return "done";
  }
  const jobId = BigInt(f.jobId);
  const [job, block] = await Promise.all([getJob(g.pub, { jobMarket: g.deployment.jobMarket, jobId }), g.read("getBlock", () => g.pub.getBlock({ blockTag: "latest" }))]);
  // JobMarket.freeze: only an Active job, or a Committed or TimedOut one inside its window, can be disputed.
  if (!(job.status === "Active" || ((job.status === "Committed" || job.status === "TimedOut") && block.timestamp <= BigInt(job.deadline)))) {
    log.info({ status: job.status, deadline: job.deadline }, "own dispute ended NoDecision; the job can no longer be challenged");
    return "done";
  }
  const p = JSON.parse(prior.payload) as { data: Hex; commit: Hex; finding: FindingPayload };
  // The same salt again: the round-1 commitment was consumed by its challenge, so committing it anew is valid.
  const intents = roundIntents(g, { ...p.finding, round, after: f.id }, await requiredDeposit(g, jobId), p.commit, p.data);
  f.done = true;
  ctx.db.tx(() => {
    for (const i of intents) ctx.db.addIntent(i);
    ctx.db.setMeta("disputes", JSON.stringify(followed));
  });
  log.warn({ round, maxChallengeRounds: maxRounds }, "own dispute ended NoDecision: challenging the step again");
  return "done";
}
