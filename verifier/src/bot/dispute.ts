/**
 * The dispute step of the challenger bot: open a challenge for a bad segment, then drive every dispute of the
 * DisputeGame to its end (docs/disputes.md):
 *
 *   challenge  for a finding with a step claim, whatever other disputes are open on the job (one may be the
 *              provider's own address holding a valid step; every dispute open at a fault shares the reward): three
 *              intents, `approveBond:J:S` (the exact requiredDeposit(J): bond plus panel fees), `commitChallenge:J:S`
 *              (the hidden commitment; its salt is stored with the intents) and `challenge:J:S` (sent after the
 *              commitment's receipt, so in a later block), recorded atomically with the audit result; reconciled after
 *              a restart by the Challenged events of (job, step) (a challenge by anyone else on the step counts as done).
 *   again      when a dispute this bot opened resolves NoDecision (a tie, nobody revealed, too few eligible auditors)
 *              and the bot still holds the failing audit with its step claim (its last challenge intent for the
 *              segment), it opens a new round while JobMarket can still freeze the job: `approveBond:J:S:rN` and
 *              `challenge:J:S:rN` (same calldata, deposit re-read), recorded in the same SQLite transaction that marks
 *              the dispute done, at most `maxChallengeRounds` challenges per (job, segment). Reconciliation of round N counts only a dispute on (job, step) that is
 *              open or newer than the NoDecision it follows. PanelValid (the panel disagreed; the bond is lost) and
 *              fault outcomes never start a round: re-challenging a step a panel judged valid would be griefing.
 *   follow     Challenged events are scanned from a cursor (meta `disputeCursor`); each dispute not yet resolved
 *              is read every tick (getDispute: its phase at the latest block).
 *   panel      servePanel (verifier/src/dispute/panel.ts): draws the panel once the seed block has passed, and if
 *              this bot is a member decides the step (dispute/panel.ts decideStep over the on-chain leaves), persists the ballot, commits, and
 *              reveals after the commit phase. servePanel reads the on-chain ballot first, so a restart never
 *              commits or reveals twice.
 *   resolve    after the reveal deadline (or once every member revealed): intent `resolve:D` (`resolve:D:rN` in
 *              appeal round N: resolving a split Fault opens the next round, which is resolved again), superseded if
 *              anyone resolved that round first. A unanimous first-round Fault opens the provider's appeal window
 *              instead: once it passed unused, intent `resolve:D:settle` settles it.
 *   claim      credits in DisputeGame (bonds) and AuditorRegistry (panel forfeits): claim intents, superseded
 *              when the credit is already zero.
 * Without a DisputeGame in the deployment (`noDisputeGame`) the bot records the finding and opens nothing.
 */
import type { Address, Hex } from "viem";
import type { Logger } from "pino";
import {
  approveTokenCall,
  challengeCommitment,
  challengeStepCall,
  claimBondCreditCall,
  claimDisputeCreditCall,
  commitChallengeCall,
  encodeCall,
  getBondCredit,
  getDispute,
  getFaultAppeal,
  getDisputeCredit,
  getJob,
  getJobDisputes,
  getOpenDispute,
  getRequiredDeposit,
  newChallengeSalt,
  resolveDisputeCall,
  withRetry,
  ContractRevertError,
  toChainError,
  type ChainClients,
  type Deployment,
} from "../chain/index.ts";
import { startCheckpointUnavailable, type Run, type StepClaim } from "../checks/index.ts";
import { BallotStore, decideStep, servePanel } from "../dispute/index.ts";
import { InputError } from "../errors/index.ts";
import { SourceUnavailableError } from "../net/index.ts";
import type { ContentStore } from "../store/index.ts";
import type { BotDb, CommittedSegment, IntentRow } from "./db.ts";
import { commitTag, formatIntentKey } from "./intent-key.ts";

/** A failed audit of one commit; `commit` is its tag (intent-key.ts commitTag), absent for a commit recorded without its block hash. */
export type Finding = { market: Address; jobId: bigint; segment: number; commit?: string; traceRoot: Hex; endStateHash: Hex; claim: StepClaim | null; kind: string; noClaim?: string };

/** An intent the bot records (db.addIntent) and sends in order. */
export type IntentSpec = { key: string; kind: string; jobId?: string; segment?: number; payload: { to: Address; data: Hex } & Record<string, unknown> };

/** What the bot lends its dispute step on every tick. */
export type DisputeContext = {
  db: BotDb;
  me: Address;
  log: Logger;
  store: ContentStore;
  runFor(jobId: string): Promise<Run | undefined>;
};

export type DisputeHooks = {
  /** Whether challenges can be opened (a DisputeGame is deployed). */
  readonly available: boolean;
  /** The intents that open a challenge of `finding` (bond approval, then the challenge); [] when it has no step claim. */
  challengeIntents(finding: Finding): Promise<IntentSpec[]>;
  /** Whether an intent of the dispute step is already done on chain; undefined for intents that are not its own. */
  alreadyDone(intent: IntentRow, me: Address): Promise<boolean | undefined>;
  /** One pass over the disputes: panel duty (commit, reveal), resolve and claim intents. */
  drive(ctx: DisputeContext): Promise<void>;
};

export const noDisputeGame: DisputeHooks = {
  available: false,
  challengeIntents: async () => [],
  alreadyDone: async () => undefined,
  drive: async () => {},
};

/** A dispute followed; `block` is its Challenged event's block (a reorg below it forgets the entry: db.rollback). */
type Followed = { id: string; jobId: string; segment: number; step: number; hPrev: Hex; hStep: Hex; done: boolean; block?: string };

export type ChainDisputeOptions = {
  clients: ChainClients;
  deployment: Deployment;
  /** Where panel ballots (salts) are persisted, mode 0600, before each commit. */
  ballotsDir: string;
  /**
   * Most challenges this bot opens on one (job, segment), the first included (default 3): each of its own disputes
   * that ends NoDecision starts another round until then.
   */
  maxChallengeRounds?: number;
};

export const DEFAULT_MAX_CHALLENGE_ROUNDS = 3;

/**
 * What a challenge intent's payload records about its round (round 1 has neither round nor after); `commit` the tag of
 * the commit it challenges, `hStep` the leaf it disputes (absent in intents recorded before they were kept).
 */
type FindingPayload = { jobId: string; segment: number; step: number; round?: number; after?: string; commit?: string; hStep?: Hex };

/** The real dispute step over DisputeGame (deployment.disputeGame must be set). */
export function chainDisputeHooks(o: ChainDisputeOptions): DisputeHooks {
  const game = o.deployment.disputeGame;
  if (!game) return noDisputeGame;
  const { clients, deployment } = o;
  const maxRounds = o.maxChallengeRounds ?? DEFAULT_MAX_CHALLENGE_ROUNDS;
  if (!Number.isInteger(maxRounds) || maxRounds < 1) throw new InputError(`maxChallengeRounds must be a whole number >= 1, got ${maxRounds}`);
  const ballots = new BallotStore(o.ballotsDir);
  const pub = clients.public;
  const read = <T>(what: string, f: () => Promise<T>) => withRetry(f, { what });

  /**
   * Whether the challenge of a round is done on chain: for round 1 any dispute on (job, step) of the same leaf, by anyone; for a later
   * round (`after` = the NoDecision dispute it follows) only an open dispute on (job, step) or one opened after it.
   */
  const challengeExists = async (jobId: bigint, step: number, after: bigint | undefined, hStep: Hex | undefined) => {
    // a dispute on the same step of another commit (an earlier tenure of the job) is not this challenge
    const onStep = (await getJobDisputes(pub, { disputeGame: game, jobId, fromBlock: BigInt(deployment.startBlock) })).filter((d) => d.step === step && (hStep === undefined || d.hStep === hStep));
    if (after === undefined) return onStep.length > 0;
    if (onStep.some((d) => d.disputeId > after)) return true;
    return (await getOpenDispute(pub, { disputeGame: game, jobId, step })) !== undefined;
  };

  const requiredDeposit = (jobId: bigint) => getRequiredDeposit(pub, { disputeGame: game, jobId });

  /**
   * The three intents of one round: approve exactly `deposit` (bond plus panel fees, pulled by challenge), commit to the
   * challenge (its salt is in the challenge calldata, stored with the intents and revealed only by the challenge, which
   * the bot sends after the commitment's receipt, so in a later block), then challenge.
   */
  function roundIntents(finding: FindingPayload, deposit: bigint, commitData: Hex, challengeData: Hex): IntentSpec[] {
    const k = { jobId: BigInt(finding.jobId), segment: finding.segment, round: finding.round ?? 1, ...(finding.commit === undefined ? {} : { commit: finding.commit }) };
    const common = { jobId: finding.jobId, segment: finding.segment };
    return [
      { key: formatIntentKey({ kind: "approveBond", ...k }), kind: "approveBond", ...common, payload: { ...encodeCall(approveTokenCall({ token: deployment.token, spender: game!, amount: deposit })), finding } },
      { key: formatIntentKey({ kind: "commitChallenge", ...k }), kind: "commitChallenge", ...common, payload: { to: game!, data: commitData, finding } },
      { key: formatIntentKey({ kind: "challenge", ...k }), kind: "challenge", ...common, payload: { to: game!, data: challengeData, commit: commitData, finding } },
    ];
  }

  /**
   * After this bot's own dispute `f` resolved NoDecision: the next round's intents, recorded with `f` marked done in
   * one SQLite transaction (a restart neither loses nor repeats the round). Returns "done" once decided.
   */
  async function nextRound(ctx: DisputeContext, f: Followed, followed: Followed[], log: Logger): Promise<"wait" | "done"> {
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
    const [job, block] = await Promise.all([
      getJob(pub, { jobMarket: deployment.jobMarket, jobId }),
      read("getBlock", () => pub.getBlock({ blockTag: "latest" })),
    ]);
    // JobMarket.freeze: only an Active job, or a Committed or TimedOut one inside its window, can be disputed.
    if (!(job.status === "Active" || ((job.status === "Committed" || job.status === "TimedOut") && block.timestamp <= BigInt(job.deadline)))) {
      log.info({ status: job.status, deadline: job.deadline }, "own dispute ended NoDecision; the job can no longer be challenged");
      return "done";
    }
    const p = JSON.parse(prior.payload) as { data: Hex; commit: Hex; finding: FindingPayload };
    // The same salt again: the round-1 commitment was consumed by its challenge, so committing it anew is valid.
    const intents = roundIntents({ ...p.finding, round, after: f.id }, await requiredDeposit(jobId), p.commit, p.data);
    f.done = true;
    ctx.db.tx(() => {
      for (const i of intents) ctx.db.addIntent(i);
      ctx.db.setMeta("disputes", JSON.stringify(followed));
    });
    log.warn({ round, maxChallengeRounds: maxRounds }, "own dispute ended NoDecision: challenging the step again");
    return "done";
  }

  async function scanDisputes(ctx: DisputeContext): Promise<Followed[]> {
    const head = await read("blockNumber", () => pub.getBlockNumber({ cacheTime: 0 }));
    const from = BigInt(ctx.db.getMeta("disputeCursor") ?? (BigInt(deployment.startBlock) - 1n).toString()) + 1n;
    const followed = JSON.parse(ctx.db.getMeta("disputes") ?? "[]") as Followed[];
    if (from > head) return followed;
    for (const d of await getJobDisputes(pub, { disputeGame: game!, fromBlock: from, toBlock: head })) {
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

  return {
    available: true,

    async challengeIntents(f) {
      if (!f.claim) return [];
      // NOTE: challenged even while other disputes are open on the job: one of them may be the provider's own address
      // on a valid step, kept open to block challenges; every dispute open at a fault shares the reward (IDisputeGame).
      const c = f.claim;
      const salt = newChallengeSalt();
      const commit = encodeCall(commitChallengeCall({ disputeGame: game, jobId: f.jobId, segment: f.segment, commitment: challengeCommitment(f.jobId, c.step, clients.account.address, salt) })).data;
      const data = encodeCall(
        challengeStepCall({
          disputeGame: game,
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
      return roundIntents({ jobId: f.jobId.toString(), segment: f.segment, step: c.step, hStep: c.stateHash, ...(f.commit === undefined ? {} : { commit: f.commit }) }, await requiredDeposit(f.jobId), commit, data);
    },

    async alreadyDone(i, me) {
      const p = JSON.parse(i.payload) as { finding?: FindingPayload; disputeId?: string };
      switch (i.kind) {
        case "approveBond":
        case "commitChallenge":
        case "challenge":
          return challengeExists(BigInt(p.finding!.jobId), p.finding!.step, p.finding!.after === undefined ? undefined : BigInt(p.finding!.after), p.finding!.hStep);
        case "resolveDispute": {
          // done once the dispute is resolved or has moved past the round this intent resolves (someone else resolved it)
          const d = await getDispute(pub, { disputeGame: game, disputeId: BigInt(p.disputeId!) });
          return d.phase === "resolved" || Number(d.round) > ((p as { round?: number }).round ?? 1);
        }
        case "claimDispute":
          return (await getDisputeCredit(pub, { disputeGame: game, account: me })) === 0n;
        case "claimForfeit":
          return (await getBondCredit(pub, { auditorRegistry: deployment.auditorRegistry, account: me })) === 0n;
        default:
          return undefined;
      }
    },

    async drive(ctx) {
      const followed = await scanDisputes(ctx);
      /** One pass of this bot's duty on dispute `f`: done, resolve, or serve on its panel. */
      const driveOne = async (f: Followed, log: Logger): Promise<void> => {
        const disputeId = BigInt(f.id);
        const d = await getDispute(pub, { disputeGame: game, disputeId });
        if (d.phase === "resolved") {
          if (d.outcome === "NoDecision" && d.challenger.toLowerCase() === ctx.me.toLowerCase()) {
            if ((await nextRound(ctx, f, followed, log)) === "wait") return;
          }
          f.done = true;
          log.info({ event: "dispute-resolved", outcome: d.outcome }, "dispute resolved");
          return;
        }
        if (d.phase === "resolvable") {
          const round = Number(d.round);
          // a unanimous first-round Fault waits for the provider's appeal: resolve again (`:settle`) once its window passed
          const { deadline } = await getFaultAppeal(pub, { disputeGame: game, disputeId });
          if (deadline !== undefined && deadline >= (await pub.getBlock()).timestamp) return;
          const key = formatIntentKey(deadline !== undefined ? { kind: "resolve", disputeId, round, settle: true } : { kind: "resolve", disputeId, round });
          ctx.db.addIntent({ key, kind: "resolveDispute", jobId: f.jobId, segment: f.segment, payload: { ...encodeCall(resolveDisputeCall({ disputeGame: game, disputeId })), disputeId: f.id, round } });
          return;
        }
        try {
          const r = await servePanel(clients, {
            disputeGame: game,
            disputeId,
            ballots,
            decide: async () => {
              const run = await ctx.runFor(f.jobId);
              const commitments = ctx.db.commitments(f.jobId, f.segment);
              // the manifest is the buyer's to publish: its absence (or a fetch failing now) is no fault of the provider
              if (!run) throw new Error(`job ${f.jobId}'s manifest cannot be loaded now; deciding next tick`);
              // a segment the bot has not recorded yet is the bot's own lag, not the provider's fault: no vote yet
              if (!commitments) throw new Error(`segments 0..${f.segment} of job ${f.jobId} are not all in the bot's database yet; deciding next tick`);
              // the same decision a member makes from a trace directory (dispute/panel.ts decideStep, the one pipeline's
              // openSegment + Run.step), here from the leaves on chain
              const decision = await decideStep({ target: { run, store: ctx.store, commitments }, segment: f.segment, step: f.step, hPrev: f.hPrev, hStep: f.hStep }).catch(async (err: unknown) => {
                if (!(err instanceof SourceUnavailableError)) throw err;
                // data availability (docs/disputes.md): no source serves the segment's committed checkpoint now, so the
                // member votes Fault; content that is not the provider's (a buyer's base checkpoint) is no fault of it:
                // no vote, retried next tick, as for the manifest
                if (!(await startCheckpointUnavailable(ctx.store, run, commitments[f.segment]!))) {
                  throw new Error(`content that is not the provider's is unavailable from every source (${err.shortMessage}); deciding next tick`);
                }
                return { vote: "Fault" as const, reason: `the segment's committed content is unavailable from every source: ${err.shortMessage}` };
              });
              log.info({ vote: decision.vote, reason: decision.reason }, "panel decision");
              return decision;
            },
          });
          if (r.action === "committed" || r.action === "revealed") log.info({ event: "vote", action: r.action, vote: r.vote, txHash: r.hash }, `panel vote ${r.action}`);
          else log.debug({ action: r.action }, "panel pass");
        } catch (err) {
          const e = toChainError(err);
          // Another party may have drawn the panel or the phase moved between read and send: retried next tick.
          if (e instanceof ContractRevertError) log.warn({ err: e.shortMessage }, "panel transaction reverted; re-reading next tick");
          else throw e;
        }
      };
      for (const f of followed.filter((x) => !x.done)) {
        const log = ctx.log.child({ disputeId: f.id, jobId: f.jobId, step: f.step });
        // IMPORTANT: one dispute the bot cannot process now (an RPC error, a missing ballot, a bug) must not stop its
        // duty on the others: logged at error with the reason, retried next tick.
        try {
          await driveOne(f, log);
        } catch (err) {
          log.error({ err: err instanceof Error ? err.message : String(err) }, "dispute step failed; retried next tick");
        }
      }
      ctx.db.setMeta("disputes", JSON.stringify(followed));
      // credits: challenger bonds (DisputeGame) and panel forfeits (AuditorRegistry)
      for (const [kind, claim, creditOf] of [
        ["claimDispute", encodeCall(claimDisputeCreditCall({ disputeGame: game })), () => getDisputeCredit(pub, { disputeGame: game, account: ctx.me })],
        ["claimForfeit", encodeCall(claimBondCreditCall({ auditorRegistry: deployment.auditorRegistry })), () => getBondCredit(pub, { auditorRegistry: deployment.auditorRegistry, account: ctx.me })],
      ] as const) {
        if (ctx.db.openIntents().some((i) => i.kind === kind)) continue;
        const credit = await creditOf();
        if (credit === 0n) continue;
        const n = ctx.db.allIntents().filter((i) => i.kind === kind).length;
        ctx.db.addIntent({ key: `${kind}:${n}`, kind, payload: claim });
      }
    },
  };
}
