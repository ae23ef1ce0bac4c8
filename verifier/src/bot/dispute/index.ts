/**
 * The dispute step of the challenger bot: open a challenge for a bad segment, then drive every dispute of the
 * DisputeGame to its end (docs/disputes.md). One file per round:
 *
 *   challenge.ts  the challenger's commit and reveal (approveBond, commitChallenge, challenge intents)
 *   panel.ts      a member's commit and reveal (servePanel with the bot's decision)
 *   resolve.ts    resolve (each appeal round again) and the bot's next challenge round after its own NoDecision
 *   claim.ts      bond, reward and forfeit credits
 *
 *   follow        (here) Challenged events are scanned from a cursor (meta `disputeCursor`); each dispute not yet
 *                 resolved is read every tick (getDispute: its phase at the latest block).
 * Without a DisputeGame in the deployment (`noDisputeGame`) the bot records the finding and opens nothing.
 */
import type { Logger } from "pino";
import { getDispute, getJobDisputes } from "../../chain/index.ts";
import { BallotStore } from "../../dispute/index.ts";
import { InputError } from "../../errors/index.ts";
import { challengeExists, challengeIntents } from "./challenge.ts";
import { claimCredits, claimDone } from "./claim.ts";
import { panelDuty } from "./panel.ts";
import { nextRound, resolveIntent } from "./resolve.ts";
import { DEFAULT_MAX_CHALLENGE_ROUNDS, gameOf, noDisputeGame, type ChainDisputeOptions, type DisputeContext, type DisputeHooks, type FindingPayload, type Followed, type Game } from "./types.ts";

export * from "./types.ts";

/** The disputes followed, with the Challenged events since the cursor added (persisted with the new cursor). */
async function scanDisputes(g: Game, ctx: DisputeContext): Promise<Followed[]> {
  const head = await g.read("blockNumber", () => g.pub.getBlockNumber({ cacheTime: 0 }));
  const from = BigInt(ctx.db.getMeta("disputeCursor") ?? (BigInt(g.deployment.startBlock) - 1n).toString()) + 1n;
  const followed = JSON.parse(ctx.db.getMeta("disputes") ?? "[]") as Followed[];
  if (from > head) return followed;
  for (const d of await getJobDisputes(g.pub, { disputeGame: g.game, fromBlock: from, toBlock: head })) {
    const id = d.disputeId.toString();
    if (followed.some((f) => f.id === id)) continue;
    followed.push({ id, jobId: d.jobId.toString(), segment: d.segment, step: d.step, hPrev: d.hPrev, hStep: d.hStep, done: false, block: d.blockNumber.toString() });
  }
  ctx.db.tx(() => {
    ctx.db.setMeta("disputes", JSON.stringify(followed));
    ctx.db.setMeta("disputeCursor", head.toString());
  });
  return followed;
}

/** The real dispute step over DisputeGame (deployment.disputeGame must be set). */
export function chainDisputeHooks(o: ChainDisputeOptions): DisputeHooks {
  if (!o.deployment.disputeGame) return noDisputeGame;
  const maxRounds = o.maxChallengeRounds ?? DEFAULT_MAX_CHALLENGE_ROUNDS;
  if (!Number.isInteger(maxRounds) || maxRounds < 1) throw new InputError(`maxChallengeRounds must be a whole number >= 1, got ${maxRounds}`);
  if (o.unavailableMarginS !== undefined && (!Number.isInteger(o.unavailableMarginS) || o.unavailableMarginS < 0)) {
    throw new InputError(`unavailableMarginS must be a whole number of seconds >= 0, got ${o.unavailableMarginS}`);
  }
  const g = gameOf(o.clients, o.deployment, o.deployment.disputeGame);
  const panel = panelDuty(g, new BallotStore(o.ballotsDir), o.unavailableMarginS, o.stateOpenings);

  /** One pass of this bot's duty on dispute `f`: done, resolve, or serve on its panel. */
  async function driveOne(ctx: DisputeContext, f: Followed, followed: Followed[], log: Logger): Promise<void> {
    const d = await getDispute(g.pub, { disputeGame: g.game, disputeId: BigInt(f.id) });
    if (d.phase === "resolved") {
      if (d.outcome === "NoDecision" && d.challenger.toLowerCase() === ctx.me.toLowerCase()) {
        if ((await nextRound(g, maxRounds, ctx, f, followed, log)) === "wait") return;
      }
      f.done = true;
      log.info({ event: "dispute-resolved", outcome: d.outcome }, "dispute resolved");
      return;
    }
    if (d.phase === "resolvable") return resolveIntent(g, ctx, f, Number(d.round));
    await panel.serve(ctx, f, log);
  }

  return {
    available: true,

    challengeIntents: (f) => challengeIntents(g, f),

    async alreadyDone(i, me) {
      const p = JSON.parse(i.payload) as { finding?: FindingPayload; disputeId?: string; round?: number };
      switch (i.kind) {
        case "approveBond":
        case "commitChallenge":
        case "challenge":
          return challengeExists(g, BigInt(p.finding!.jobId), p.finding!.step, p.finding!.after === undefined ? undefined : BigInt(p.finding!.after), p.finding!.hStep);
        case "resolveDispute": {
          // done once the dispute is resolved or has moved past the round this intent resolves (someone else resolved it)
          const d = await getDispute(g.pub, { disputeGame: g.game, disputeId: BigInt(p.disputeId!) });
          return d.phase === "resolved" || Number(d.round) > (p.round ?? 1);
        }
        default:
          return claimDone(g, i.kind, me);
      }
    },

    async drive(ctx) {
      const followed = await scanDisputes(g, ctx);
      for (const f of followed.filter((x) => !x.done)) {
        const log = ctx.log.child({ disputeId: f.id, jobId: f.jobId, step: f.step });
        // IMPORTANT: one dispute the bot cannot process now (an RPC error, a missing ballot, a bug) must not stop its
        // duty on the others: logged at error with the reason, retried next tick.
        try {
          await driveOne(ctx, f, followed, log);
        } catch (err) {
          log.error({ err: err instanceof Error ? err.message : String(err) }, "dispute step failed; retried next tick");
        }
      }
      ctx.db.setMeta("disputes", JSON.stringify(followed));
      await claimCredits(g, ctx);
    },
  };
}
