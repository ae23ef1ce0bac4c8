/**
 * What the challenger bot's parts share: its options, the chain clients and deployment, the content store, the
 * database, the logger, its own address and clock. Built once by the bot (bot.ts) and handed to the indexer, the
 * auditor, the gate and the outbox; no part reads anything it is not handed here.
 */
import type { Logger } from "pino";
import { formatEther, getAddress, type Address } from "viem";
import type { AuditorFunds, ChainClients, Deployment } from "../chain/index.ts";
import { countRequests } from "../chain/countRequests.ts";
import type { AuditCheckName, SegmentVerdict } from "../checks/index.ts";
import { logger } from "../log/index.ts";
import type { SegmentBoard } from "../market/segment-traces.ts";
import type { ContentStore } from "../store/index.ts";
import { BotDb } from "./db.ts";
import { noDisputeGame, type DisputeHooks } from "./dispute/index.ts";

export type BotOptions = {
  clients: ChainClients;
  deployment: Deployment;
  store: ContentStore;
  board: SegmentBoard;
  dbPath: string;
  /** The checks run on a sampled segment, in order (default: the recompute); checks/ audit.ts auditSegment runs them. */
  checks?: readonly AuditCheckName[];
  dispute?: DisputeHooks;
  /** Blocks per eth_getLogs request. */
  scanChunk?: number;
  /** Blocks back a reorg can be rolled back (default 64): block hashes are kept this far behind the confirmed head. */
  reorgDepth?: number;
  /** Report timeouts of providers that miss a deadline (default true). */
  reportTimeouts?: boolean;
  /**
   * Screen the start checkpoint of EVERY committed segment, sampled or not (default true): a failure queues the
   * recompute of the segment that produced the state (screenStart), so a persistent cheat in an unsampled segment is
   * challenged at the next one.
   */
  screen?: boolean;
  /**
   * Dials the content nodes of the given accounts (a job's buyer and provider) before the bot reads that job's
   * content: discovery from the chain with --ipfs (store/ipfs-peers.ts). A failure is logged, never fatal.
   */
  discover?: (accounts: readonly (string | null)[]) => Promise<unknown>;
  /**
   * Chain seconds a segment's content may stay unavailable from every source before the bot treats it as withheld and
   * challenges the segment's first step (default: a quarter of the job's challenge window; never past halfway to the
   * job's challenge deadline).
   */
  unavailableGraceS?: number;
  /**
   * Step sampling through state openings (auditor.ts steps): each committed segment is step-sampled at `rate` (private
   * draw, sampler.ts sampledStep) and one step of it recomputed from the state the provider opens on `stateOpenings`,
   * which must be the deployment's StateOpenings (Deployment.stateOpenings): the panel members decide a challenge of a
   * withheld opening from that contract, so a bot sampling through another one would lose its deposit. Off when absent.
   */
  stepSampling?: { stateOpenings: Address; rate: number; onVerdict?: (e: { jobId: bigint; segment: number; step: number; verdict: SegmentVerdict }) => void };
  /**
   * The least per-example audit rate of an inference job (evaluate, generate; auditor.ts jobFor): the bot recomputes
   * each example with probability max(this, kinds/audit.ts kindAuditRate of the job's payment and lock). Default
   * kinds/audit.ts DEFAULT_KIND_AUDIT_RATE (5%: a result is a record others cite, which the payment does not price).
   */
  kindAuditRate?: number;
  /** Called after each audit (demo progress, tests). */
  onAudit?: (e: { jobId: bigint; segment: number; verdict: SegmentVerdict }) => void;
  /** Called at audit start (tests kill the process here). */
  onAuditStart?: (e: { jobId: bigint; segment: number }) => void;
  /** Logger (default: the "bot" module logger); tests pass one that records. */
  log?: Logger;
  /** Clock in ms since the epoch, for backoff and heartbeat (default Date.now; tests pass a fake one). */
  now?: () => number;
  /** First retry delay of an intent that could not go out (default 1000 ms), doubled per attempt up to retryMaxMs. */
  retryBaseMs?: number;
  /** Longest retry delay (default 30000 ms). */
  retryMaxMs?: number;
  /** A heartbeat line at info this often (default 60000 ms; 0: never). */
  heartbeatMs?: number;
  /** health(): the RPC is stale when no scan succeeded for this long (default 5 polling intervals, at least 60000 ms). */
  staleAfterMs?: number;
  /** health(): the indexer is behind when its cursor trails the confirmed head by more blocks than this (default 10). */
  maxIndexLagBlocks?: number;
  /** health(): an intent still open this long after it was recorded is stuck (default 900000 ms: 15 minutes). */
  intentDeadlineMs?: number;
};

export type BotContext = {
  readonly options: BotOptions;
  /** The options' clients, with every JSON-RPC request counted by method (`rpcRequests`). */
  readonly clients: ChainClients;
  /** JSON-RPC requests sent since start, by method (chain/countRequests.ts). */
  readonly rpcRequests: ReadonlyMap<string, number>;
  readonly deployment: Deployment;
  readonly store: ContentStore;
  readonly db: BotDb;
  readonly log: Logger;
  readonly dispute: DisputeHooks;
  /** The auditor's own address (the wallet's account). */
  readonly me: Address;
  /** ms since the epoch. */
  readonly now: () => number;
  /** Whether stop() was called: long loops end at the next row. */
  readonly stopped: () => boolean;
};

/** The context of a bot with options `o`; `stopped` reads the bot's own flag. */
export function botContext(o: BotOptions, stopped: () => boolean): BotContext {
  const me = getAddress(o.clients.account.address);
  const counted = countRequests(o.clients);
  return {
    options: o,
    clients: counted.clients,
    rpcRequests: counted.counts,
    deployment: o.deployment,
    store: o.store,
    db: new BotDb(o.dbPath),
    log: (o.log ?? logger("bot")).child({ auditor: me }),
    dispute: o.dispute ?? noDisputeGame,
    me,
    now: o.now ?? Date.now,
    stopped,
  };
}

/** Delay before attempt `attempts + 1` of an intent: retryBaseMs doubled per attempt, at most retryMaxMs. */
export function backoffMs(o: BotOptions, attempts: number): number {
  const base = o.retryBaseMs ?? 1_000;
  const max = o.retryMaxMs ?? 30_000;
  return Math.min(max, base * 2 ** Math.min(30, Math.max(0, attempts - 1)));
}

export const tokens = (wei: bigint) => formatEther(wei);
const MICRO = 10n ** 12n;
/** ETH to 6 decimals: balances rounded down, amounts needed rounded up (token amounts stay exact). */
export const ethDown = (wei: bigint) => formatEther((wei / MICRO) * MICRO);
export const ethUp = (wei: bigint) => formatEther(((wei + MICRO - 1n) / MICRO) * MICRO);

/** The command (or transfer) that gives this account `deposit` tokens and the gas of a challenge. */
export function fundingFix(ctx: BotContext, deposit: bigint, f: AuditorFunds): string {
  const fixes: string[] = [];
  if (f.tokenBalance < deposit) {
    fixes.push(ctx.deployment.devToken ? `pouw auditor fund ${tokens(deposit)} --mint` : `transfer ${tokens(deposit - f.tokenBalance)} tokens (${ctx.deployment.token}) to ${ctx.me}`);
  }
  if (f.ethBalance < f.challengeGasCost) fixes.push(`send at least ${ethUp(f.challengeGasCost - f.ethBalance)} ETH to ${ctx.me}`);
  return fixes.join(" and ");
}
