/**
 * The challenger service as `pouw auditor run` starts it: the bot with its dispute rounds on the deployment's
 * DisputeGame, the start-up summary, the optional /metrics and /healthz server, then one tick (`once`) or the loop until
 * SIGINT/SIGTERM; the result is what this run did (not what the database holds from earlier runs). The command only
 * parses its flags and renders this result.
 *
 * @example
 *   const r = await runChallengerService({ clients, deployment, store, board, dbPath, ballotsDir, maxChallengeRounds: 3, heartbeatMs: 60_000, once: true });
 *   console.log(r.audited, r.failed);
 */
import type { Address } from "viem";
import { getAuditorFunds, type ChainClients, type Deployment } from "../chain/index.ts";
import { InputError } from "../errors/index.ts";
import { ChallengerBot } from "./bot.ts";
import type { BotOptions } from "./context.ts";
import { chainDisputeHooks } from "./dispute/index.ts";
import { startMetricsServer } from "./metrics.ts";

export type ChallengerServiceOptions = {
  clients: ChainClients;
  deployment: Deployment;
  store: BotOptions["store"];
  board: BotOptions["board"];
  /** The bot's SQLite database. */
  dbPath: string;
  /** Where this auditor keeps its panel ballots (commit-reveal salts) across restarts. */
  ballotsDir: string;
  maxChallengeRounds: number;
  heartbeatMs: number;
  unavailableGraceS?: number;
  /** Step sampling: a probability per committed segment; needs the deployment's StateOpenings. */
  stepRate?: number;
  discover?: BotOptions["discover"];
  /** Serve /metrics and /healthz; `onListening` is told the URL. */
  metrics?: { port: number; host: string; onListening?: (url: string) => void };
  /** One tick, then stop (otherwise run until SIGINT or SIGTERM). */
  once: boolean;
};

export type ChallengerServiceResult = {
  account: Address;
  audited: number;
  failed: { jobId: string; segment: number; firstBadStep: number | null }[];
  notSampled: number;
  receipts: number;
  /** The intents this run confirmed, in the order they were recorded. */
  confirmed: { kind: string; txHash: string | null }[];
  /** Intents waiting for funds now. */
  waitingForFunds: number;
  /** Challenge intents of this run that failed for good. */
  findingsLost: number;
};

/** Runs the challenger service (above) and returns what this run did; InputError for step sampling without StateOpenings. */
export async function runChallengerService(o: ChallengerServiceOptions): Promise<ChallengerServiceResult> {
  const stateOpenings = o.deployment.stateOpenings;
  // INVARIANT: step sampling asks the deployment's own StateOpenings (the one the panels read for the challenge)
  if (o.stepRate !== undefined && !stateOpenings) {
    throw new InputError(`--step-sampling ${o.stepRate}: the deployment has no stateOpenings (StateOpenings), so no provider can be asked for a state; deploy one with \`pouw deploy\` (it deploys StateOpenings unless --no-state-openings) or run without --step-sampling`);
  }
  const dispute = chainDisputeHooks({ clients: o.clients, deployment: o.deployment, ballotsDir: o.ballotsDir, maxChallengeRounds: o.maxChallengeRounds });
  const bot = new ChallengerBot({
    clients: o.clients,
    deployment: o.deployment,
    store: o.store,
    board: o.board,
    dbPath: o.dbPath,
    dispute,
    heartbeatMs: o.heartbeatMs,
    ...(o.unavailableGraceS === undefined ? {} : { unavailableGraceS: o.unavailableGraceS }),
    ...(o.stepRate !== undefined && stateOpenings ? { stepSampling: { stateOpenings, rate: o.stepRate } } : {}),
    ...(o.discover ? { discover: o.discover } : {}),
  });
  let metrics: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  let running = true;
  try {
    await bot.startup();
    if (o.metrics !== undefined) {
      const { clients, deployment } = o;
      const account = clients.account.address;
      metrics = await startMetricsServer({
        port: o.metrics.port,
        host: o.metrics.host,
        view: {
          summary: () => bot.summary(),
          funds: () => getAuditorFunds(clients.public, { deployment, account }),
          blockNumber: () => clients.public.getBlockNumber(),
          running: () => running,
          health: () => bot.health(),
          chainCounters: () => bot.chainCounters(),
        },
      });
      o.metrics.onListening?.(metrics.url);
    }
    if (o.once) {
      await bot.tick();
    } else {
      const stop = () => bot.stop();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      await bot.run();
    }
  } catch (err) {
    running = false;
    await metrics?.close();
    bot.close();
    throw err;
  }
  running = false;
  await metrics?.close();
  // this run's work (not what the database holds from earlier runs); intents waiting for funds as they stand now
  const s = bot.runSummary();
  bot.close();
  return {
    account: o.clients.account.address,
    audited: s.audits.length,
    failed: s.audits.filter((a) => !a.ok).map((b) => ({ jobId: b.jobId, segment: b.segment, firstBadStep: b.firstBadStep ?? null })),
    notSampled: s.sampledOut,
    receipts: s.receipts,
    confirmed: s.intents.filter((i) => i.status === "confirmed").map((i) => ({ kind: i.kind, txHash: i.txHash })),
    waitingForFunds: s.waitingForFunds,
    findingsLost: s.intents.filter((i) => i.kind === "challenge" && i.status === "failed").length,
  };
}
