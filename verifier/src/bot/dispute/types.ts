/**
 * The types of the bot's dispute step (what the rest of the bot sees) and the context its rounds share.
 */
import type { Address, Hex } from "viem";
import type { Logger } from "pino";
import { withRetry, type ChainClients, type Deployment } from "../../chain/index.ts";
import type { Run, StepClaim } from "../../checks/index.ts";
import type { ContentStore } from "../../store/index.ts";
import type { BotDb, IntentRow } from "../db.ts";

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
export type Followed = { id: string; jobId: string; segment: number; step: number; hPrev: Hex; hStep: Hex; done: boolean; block?: string };

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
  /**
   * Seconds before a panel's commit deadline from which a member that still cannot obtain the job's manifest (or
   * other content the job needs) votes Fault instead of waiting (default: half the commit window).
   */
  unavailableMarginS?: number;
  /**
   * StateOpenings beside the market (default: the deployment's): a challenge whose pre-state its challenger asked to
   * open is decided with that opening (checks/decide.ts preStateOpening: withheld or not served is a Fault).
   */
  stateOpenings?: Address;
};

export const DEFAULT_MAX_CHALLENGE_ROUNDS = 3;

/**
 * What a challenge intent's payload records about its round (round 1 has neither round nor after); `commit` the tag of
 * the commit it challenges, `hStep` the leaf it disputes (absent in intents recorded before they were kept).
 */
export type FindingPayload = { jobId: string; segment: number; step: number; round?: number; after?: string; commit?: string; hStep?: Hex };

/** The DisputeGame every round of the dispute step talks to, with the chain clients and a retrying read. */
export type Game = {
  clients: ChainClients;
  deployment: Deployment;
  game: Address;
  pub: ChainClients["public"];
  read: <T>(what: string, f: () => Promise<T>) => Promise<T>;
};

export function gameOf(clients: ChainClients, deployment: Deployment, game: Address): Game {
  return { clients, deployment, game, pub: clients.public, read: (what, f) => withRetry(f, { what }) };
}
