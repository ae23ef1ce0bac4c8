/**
 * The dispute step of the challenger bot: open a challenge for a bad segment, then drive every dispute of the
 * DisputeGame to its end (docs/disputes.md):
 *
 *   challenge  for a finding with a step claim on a job with no open dispute (by anyone, nor an open challenge
 *              intent of this bot: one fault outcome slashes the whole lock): two intents, `approveBond:J:S` (the exact requiredDeposit(J): bond plus panel fees) and
 *              `challenge:J:S`, recorded atomically with the audit result; reconciled after a restart by the
 *              Challenged events of (job, step) (a challenge by anyone else counts as done).
 *   follow     Challenged events are scanned from a cursor (meta `disputeCursor`); each dispute not yet resolved
 *              is read every tick (getDispute: its phase at the latest block).
 *   panel      servePanel (verifier/src/dispute/panel.ts): draws the panel once the seed block has passed, and if
 *              this bot is a member decides the step (decideFromCommitments), persists the ballot, commits, and
 *              reveals after the commit phase. servePanel reads the on-chain ballot first, so a restart never
 *              commits or reveals twice.
 *   resolve    after the reveal deadline (or once every member revealed): intent `resolve:D`, superseded if
 *              anyone resolved it first.
 *   claim      credits in DisputeGame (bonds) and AuditorRegistry (panel forfeits): claim intents, superseded
 *              when the credit is already zero.
 * Without a DisputeGame in the deployment (`noDisputeGame`) the bot records the finding and opens nothing.
 */
import { encodeFunctionData, type Address, type Hex } from "viem";
import type { Logger } from "pino";
import { auditorRegistryAbi, disputeGameAbi, getDispute, getJobDisputes, withRetry, ContractRevertError, toChainError, type ChainClients, type Deployment } from "../chain/index.ts";
import { BallotStore, servePanel, type StepDecision } from "../dispute/index.ts";
import type { Run, TrainState } from "../ml/run.ts";
import type { ContentStore } from "../store/index.ts";
import type { StepClaim } from "./checks.ts";
import type { BotDb, IntentRow, SegmentRow } from "./db.ts";

export type Finding = { market: Address; jobId: bigint; segment: number; traceRoot: Hex; endStateHash: Hex; claim: StepClaim | null; kind: string };

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

type Followed = { id: string; jobId: string; segment: number; step: number; hPrev: Hex; hStep: Hex; done: boolean };

/**
 * A panel member's verdict from the committed data the bot already has: the segment's start checkpoint (its CID is
 * in SegmentCommitted) must hash to the committed start state (the manifest's initial state for segment 0, the
 * previous segment's end otherwise); the member recomputes from it to state s-1, which must hash to the disputed
 * h(s-1), and runs one step: Valid iff the result hashes to h(s). Whatever the provider fails to serve or serves
 * inconsistently is a Fault (same rule as dispute/panel.ts decideStep, which reads a full trace file instead).
 */
export async function decideFromCommitments(
  p: { run: Run; store: ContentStore; segment: SegmentRow; prevEndStateHash: Hex | undefined; step: number; hPrev: Hex; hStep: Hex },
): Promise<StepDecision> {
  const { run, store, step } = p;
  const K = run.manifest.training.stepsPerSegment;
  const first = p.segment.segment * K;
  let state: TrainState;
  try {
    state = run.loadCheckpoint(await store.get(p.segment.checkpoint_cid), { step: first });
  } catch (err) {
    return { vote: "Fault", reason: `start checkpoint ${p.segment.checkpoint_cid} not served or unusable: ${(err as Error).message}` };
  }
  const expectedStart = p.segment.segment === 0 ? run.stateHashOf(await run.initFromStore(store)) : p.prevEndStateHash;
  const startHash = run.stateHashOf(state);
  if (startHash !== expectedStart) return { vote: "Fault", reason: `start checkpoint hashes to ${startHash}, the committed start state is ${expectedStart}` };
  for (let t = first + 1; t < step; t++) state = run.step(state, t).state;
  if (run.stateHashOf(state) !== p.hPrev) return { vote: "Fault", reason: `state ${step - 1} with hash ${p.hPrev} is not reproducible from the segment's start` };
  const h = run.stateHashOf(run.step(state, step).state);
  return h === p.hStep
    ? { vote: "Valid", reason: `recomputed h(${step}) = ${h} matches the committed leaf` }
    : { vote: "Fault", reason: `recomputed h(${step}) = ${h}, the provider committed ${p.hStep}` };
}

export type ChainDisputeOptions = {
  clients: ChainClients;
  deployment: Deployment;
  /** Where panel ballots (salts) are persisted, mode 0600, before each commit. */
  ballotsDir: string;
};

/** The real dispute step over DisputeGame (deployment.disputeGame must be set). */
export function chainDisputeHooks(o: ChainDisputeOptions): DisputeHooks {
  const game = o.deployment.disputeGame;
  if (!game) return noDisputeGame;
  const { clients, deployment } = o;
  const ballots = new BallotStore(o.ballotsDir);
  const pub = clients.public;
  const read = <T>(what: string, f: () => Promise<T>) => withRetry(f, { what });

  const challengeExists = async (jobId: bigint, step: number) =>
    (await getJobDisputes(pub, { disputeGame: game, jobId, fromBlock: BigInt(deployment.startBlock) })).some((d) => d.step === step);

  async function scanDisputes(ctx: DisputeContext): Promise<Followed[]> {
    const head = await read("blockNumber", () => pub.getBlockNumber({ cacheTime: 0 }));
    const from = BigInt(ctx.db.getMeta("disputeCursor") ?? (BigInt(deployment.startBlock) - 1n).toString()) + 1n;
    const followed = JSON.parse(ctx.db.getMeta("disputes") ?? "[]") as Followed[];
    if (from > head) return followed;
    const logs = await read("Challenged logs", () => pub.getContractEvents({ address: game, abi: disputeGameAbi, eventName: "Challenged", fromBlock: from, toBlock: head, strict: true }));
    for (const l of logs) {
      const id = l.args.disputeId.toString();
      if (followed.some((f) => f.id === id)) continue;
      followed.push({ id, jobId: l.args.jobId.toString(), segment: Number(l.args.segment), step: Number(l.args.step), hPrev: l.args.hPrev, hStep: l.args.hStep, done: false });
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
      // One open dispute per job is enough: its fault outcome slashes the whole lock and refunds the job.
      const open = await getJobDisputes(pub, { disputeGame: game, jobId: f.jobId, fromBlock: BigInt(deployment.startBlock) });
      for (const o of open) if ((await getDispute(pub, { disputeGame: game, disputeId: o.disputeId })).phase !== "resolved") return [];
      // challenge pulls the bond and the panel's fees in one transfer: approve both (requiredDeposit)
      const deposit = await read("requiredDeposit", () => pub.readContract({ address: game, abi: disputeGameAbi, functionName: "requiredDeposit", args: [f.jobId] }));
      const c = f.claim;
      const k = `${f.jobId}:${f.segment}`;
      const finding = { jobId: f.jobId.toString(), segment: f.segment, step: c.step };
      return [
        { key: `approveBond:${k}`, kind: "approveBond", jobId: f.jobId.toString(), segment: f.segment, payload: { to: deployment.token, data: encodeFunctionData({ abi: [approveAbi], functionName: "approve", args: [game, deposit] }), finding } },
        {
          key: `challenge:${k}`,
          kind: "challenge",
          jobId: f.jobId.toString(),
          segment: f.segment,
          payload: {
            to: game,
            data: encodeFunctionData({
              abi: disputeGameAbi,
              functionName: "challenge",
              args: [f.jobId, BigInt(f.segment), BigInt(c.step), f.traceRoot, f.endStateHash, c.prevStateHash, c.prevProof, c.stateHash, c.proof],
            }),
            finding,
          },
        },
      ];
    },

    async alreadyDone(i, me) {
      const p = JSON.parse(i.payload) as { finding?: { jobId: string; step: number }; disputeId?: string };
      switch (i.kind) {
        case "approveBond":
        case "challenge":
          return challengeExists(BigInt(p.finding!.jobId), p.finding!.step);
        case "resolveDispute":
          return (await getDispute(pub, { disputeGame: game, disputeId: BigInt(p.disputeId!) })).phase === "resolved";
        case "claimDispute":
          return (await read("creditOf", () => pub.readContract({ address: game, abi: disputeGameAbi, functionName: "creditOf", args: [me] }))) === 0n;
        case "claimForfeit":
          return (await read("creditOf", () => pub.readContract({ address: deployment.auditorRegistry, abi: auditorRegistryAbi, functionName: "creditOf", args: [me] }))) === 0n;
        default:
          return undefined;
      }
    },

    async drive(ctx) {
      const followed = await scanDisputes(ctx);
      for (const f of followed.filter((x) => !x.done)) {
        const log = ctx.log.child({ disputeId: f.id, jobId: f.jobId, step: f.step });
        const disputeId = BigInt(f.id);
        const d = await getDispute(pub, { disputeGame: game, disputeId });
        if (d.phase === "resolved") {
          f.done = true;
          log.info({ outcome: d.outcome }, "dispute resolved");
          continue;
        }
        if (d.phase === "resolvable") {
          ctx.db.addIntent({ key: `resolve:${f.id}`, kind: "resolveDispute", jobId: f.jobId, segment: f.segment, payload: { to: game, data: encodeFunctionData({ abi: disputeGameAbi, functionName: "resolve", args: [disputeId] }), disputeId: f.id } });
          continue;
        }
        try {
          const r = await servePanel(clients, {
            disputeGame: game,
            disputeId,
            ballots,
            decide: async () => {
              const run = await ctx.runFor(f.jobId);
              const seg = ctx.db.segment(f.jobId, f.segment);
              if (!run || !seg) return { vote: "Fault", reason: `the job's manifest or segment ${f.segment} is not available` };
              const prev = f.segment > 0 ? ctx.db.segment(f.jobId, f.segment - 1) : undefined;
              const decision = await decideFromCommitments({ run, store: ctx.store, segment: seg, prevEndStateHash: prev?.end_state_hash as Hex | undefined, step: f.step, hPrev: f.hPrev, hStep: f.hStep });
              log.info({ vote: decision.vote, reason: decision.reason }, "panel decision");
              return decision;
            },
          });
          if (r.action === "committed" || r.action === "revealed") log.info({ vote: r.vote, txHash: r.hash }, `panel vote ${r.action}`);
          else log.debug({ action: r.action }, "panel pass");
        } catch (err) {
          const e = toChainError(err);
          // Another party may have drawn the panel or the phase moved between read and send: retried next tick.
          if (e instanceof ContractRevertError) log.warn({ err: e.shortMessage }, "panel transaction reverted; re-reading next tick");
          else throw e;
        }
      }
      ctx.db.setMeta("disputes", JSON.stringify(followed));
      // credits: challenger bonds (DisputeGame) and panel forfeits (AuditorRegistry)
      for (const [kind, address, abi] of [
        ["claimDispute", game, disputeGameAbi],
        ["claimForfeit", deployment.auditorRegistry, auditorRegistryAbi],
      ] as const) {
        if (ctx.db.openIntents().some((i) => i.kind === kind)) continue;
        const credit = await read("creditOf", () => pub.readContract({ address, abi: abi as typeof disputeGameAbi, functionName: "creditOf", args: [ctx.me] }));
        if (credit === 0n) continue;
        const n = ctx.db.allIntents().filter((i) => i.kind === kind).length;
        ctx.db.addIntent({ key: `${kind}:${n}`, kind, payload: { to: address, data: encodeFunctionData({ abi: disputeGameAbi, functionName: "claim" }) } });
      }
    },
  };
}

const approveAbi = {
  type: "function",
  name: "approve",
  stateMutability: "nonpayable",
  inputs: [
    { name: "spender", type: "address" },
    { name: "value", type: "uint256" },
  ],
  outputs: [{ name: "", type: "bool" }],
} as const;
