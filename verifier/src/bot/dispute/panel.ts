/**
 * Panel duty (the members' commit and reveal): servePanel (verifier/src/dispute/panel.ts) draws the panel once the
 * seed block has passed and, if this bot is a member, decides the step (checks decideStep over the on-chain leaves),
 * persists the ballot, commits, and reveals after the commit phase. servePanel reads the on-chain ballot first, so a
 * restart never commits or reveals twice.
 *
 * Content the member cannot obtain (the segment's own committed checkpoint, the job's manifest or other content the job
 * needs) is retried until a margin before the commit deadline (unavailableMarginS), then a Fault with the reason (data
 * availability, docs/disputes.md; docs/bot.md, "Panel duty when content never comes"): a provider node that is down for
 * a minute while a griefer's dispute runs is not a withholder. A challenge whose pre-state its challenger asked to open
 * on StateOpenings is decided with that opening (checks/decide.ts preStateOpening: withheld or not served is a Fault).
 */
import type { Address } from "viem";
import type { Logger } from "pino";
import { ChainError, ContractRevertError, getDispute, getDisputeParams, toChainError } from "../../chain/index.ts";
import { jobRun, startCheckpointUnavailable, type Run } from "../../checks/index.ts";
import { CircuitTermsMismatchError, decideStep, servePanel, type BallotStore, type StepDecision } from "../../dispute/index.ts";
import { PouwError } from "../../errors/index.ts";
import { circuitJobCheck } from "../../market/circuit-job.ts";
import { fetchManifest } from "../../market/manifest-store.ts";
import { SourceUnavailableError } from "../../net/index.ts";
import { readOpening } from "../opening.ts";
import { decideKindDispute, KindJobs } from "../../kinds/bot.ts";
import type { DisputeContext, Followed, Game } from "./types.ts";

export type PanelDuty = { serve(ctx: DisputeContext, f: Followed, log: Logger): Promise<void> };

export function panelDuty(g: Game, ballots: BallotStore, unavailableMarginS: number | undefined, stateOpenings?: Address): PanelDuty {
  let commitWindowS: number | undefined;
  let kinds: KindJobs | undefined;
  /** Seconds before the commit deadline at which a member still missing what the job needs votes Fault. */
  const marginS = async (): Promise<number> => {
    if (unavailableMarginS !== undefined) return unavailableMarginS;
    commitWindowS ??= (await getDisputeParams(g.pub, { disputeGame: g.game })).commitWindowSeconds;
    return Math.ceil(commitWindowS / 2);
  };

  /**
   * A member that cannot obtain what the job needs (`missing`): no vote yet while the chain time is short of the
   * margin before the commit deadline (thrown: retried next tick); from the margin on, Fault with the reason.
   * INVARIANT: a member never stays silent past its commit deadline for want of content the provider must serve
   * (the design rule: what a challenge needs is on chain or its absence is a fault the panel judges); an honest provider holds
   * the manifest and every input it trained from, and serves them, so this Fault only ever lands on a withholder.
   */
  async function unavailableVote(disputeId: bigint, missing: string, log: Logger): Promise<StepDecision> {
    const [d, block, margin] = await Promise.all([getDispute(g.pub, { disputeGame: g.game, disputeId }), g.read("getBlock", () => g.pub.getBlock({ blockTag: "latest" })), marginS()]);
    const voteAt = BigInt(d.commitDeadline) - BigInt(margin);
    if (block.timestamp < voteAt) {
      throw new Error(`${missing}; retried until ${voteAt} (chain time, ${margin} s before the commit deadline ${d.commitDeadline}), then voted Fault`);
    }
    const reason = `${missing}, still ${margin} s before the commit deadline: the provider accepted the job, so it must serve what the job needs`;
    log.warn({ event: "unavailable-fault", commitDeadline: d.commitDeadline.toString(), marginS: margin }, reason);
    return { vote: "Fault", reason };
  }

  /**
   * The job's run, or what keeps it from being built: the bot's own run (auditor.runFor), else the manifest fetched
   * and checked here to learn why it failed. Only content problems (unavailable, not found, not the job's manifest,
   * unreadable) count as missing; an RPC failure, a circuit job whose terms are not its manifest's (refused) or a
   * job the bot has not indexed yet is thrown (no vote, retried).
   */
  async function loadRun(ctx: DisputeContext, jobId: string): Promise<{ run: Run } | { missing: string }> {
    const run = await ctx.runFor(jobId);
    if (run) return { run };
    const job = ctx.db.job(jobId);
    if (!job) throw new Error(`job ${jobId} is not in the bot's database yet; deciding next tick`);
    try {
      const manifest = await fetchManifest(ctx.store, job.manifestUri, job.manifestHash, { circuitHash: circuitJobCheck(g.pub, g.deployment, BigInt(jobId)) });
      return { run: await jobRun(manifest, g.deployment, BigInt(jobId), ctx.store) };
    } catch (err) {
      if (err instanceof ChainError || err instanceof CircuitTermsMismatchError || !(err instanceof PouwError)) throw err;
      return { missing: `job ${jobId}'s manifest ${job.manifestUri} or content it names cannot be obtained (${err.shortMessage})` };
    }
  }

  /** This member's decision on dispute `f`'s step (called by servePanel once, before committing). */
  async function decide(ctx: DisputeContext, f: Followed, log: Logger): Promise<StepDecision> {
    const disputeId = BigInt(f.id);
    const commitments = ctx.db.commitments(f.jobId, f.segment);
    // a segment the bot has not recorded yet is the bot's own lag, not the provider's fault: no vote yet
    if (!commitments) throw new Error(`segments 0..${f.segment} of job ${f.jobId} are not all in the bot's database yet; deciding next tick`);
    // an evaluate or generate job: one example recomputed from state s-1 (kinds/bot.ts decideExample)
    const botJob = ctx.db.job(f.jobId);
    let kindJob;
    try {
      kindJob = botJob && (await (kinds ??= new KindJobs(ctx.store)).jobFor(botJob));
    } catch (err) {
      if (err instanceof ChainError || !(err instanceof PouwError)) throw err;
      return unavailableVote(disputeId, `job ${f.jobId}'s manifest ${botJob!.manifestUri} or the model it names cannot be obtained (${err.shortMessage})`, log);
    }
    if (kindJob) {
      const decision = await decideKindDispute(kindJob, ctx.store, commitments[f.segment]!, f);
      log.info({ vote: decision.vote, reason: decision.reason }, "panel decision (one example)");
      return decision;
    }
    const loaded = await loadRun(ctx, f.jobId);
    if ("missing" in loaded) return unavailableVote(disputeId, loaded.missing, log);
    const { run } = loaded;
    // the same decision a member makes from a trace directory (dispute/panel.ts decideStep, the one pipeline's
    // openSegment + Run.step), here from the leaves on chain
    const openings = stateOpenings ?? g.deployment.stateOpenings;
    const opening = openings
      ? await readOpening(g.pub, { stateOpenings: openings, fromBlock: BigInt(g.deployment.startBlock), jobId: BigInt(f.jobId), state: f.step - 1 })
      : undefined;
    const preStateOpening = opening === "pending" ? undefined : opening;
    const decision = await decideStep({ target: { run, store: ctx.store, commitments }, segment: f.segment, step: f.step, hPrev: f.hPrev, hStep: f.hStep, ...(preStateOpening ? { preStateOpening } : {}) }).catch(async (err: unknown) => {
      if (!(err instanceof SourceUnavailableError)) throw err;
      // data availability (docs/disputes.md): the segment's committed checkpoint, or other content the job needs (a
      // fine-tuning base, a data set), served by no source now: retried until the margin, then Fault
      const what = (await startCheckpointUnavailable(ctx.store, run, commitments[f.segment]!)) ? "the segment's committed content" : "content the job needs";
      return unavailableVote(disputeId, `${what} is unavailable from every source (${err.shortMessage})`, log);
    });
    log.info({ vote: decision.vote, reason: decision.reason }, "panel decision");
    return decision;
  }

  return {
    async serve(ctx, f, log) {
      try {
        const r = await servePanel(g.clients, { disputeGame: g.game, disputeId: BigInt(f.id), ballots, decide: () => decide(ctx, f, log) });
        if (r.action === "committed" || r.action === "revealed") log.info({ event: "vote", action: r.action, vote: r.vote, txHash: r.hash }, `panel vote ${r.action}`);
        else log.debug({ action: r.action }, "panel pass");
      } catch (err) {
        const e = toChainError(err);
        // Another party may have drawn the panel or the phase moved between read and send: retried next tick.
        if (e instanceof ContractRevertError) log.warn({ err: e.shortMessage }, "panel transaction reverted; re-reading next tick");
        else throw e;
      }
    },
  };
}
