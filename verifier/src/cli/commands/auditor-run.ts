/**
 * The handlers of `pouw auditor` (auditor.ts defines the commands and flags and loads this module only when one runs,
 * so `--help` and flag errors load no chain, engine or solver): each parses its arguments, calls one flow (market/
 * auditor-funds.ts, market/standing.ts, bot/service.ts) and renders its result as text or --json.
 */
import { join } from "node:path";
import { InputError } from "../../errors/index.ts";
import { configureLogging } from "../../log/index.ts";
import { AUDITOR_CREDITS, claimCredits } from "../../market/standing.ts";
import { fmt, marketContext, peerDiscovery, parseAmount, parseSeconds, txJson, txLines, type ReadFlags } from "../context.ts";

const jsonLine = (v: Record<string, unknown>) => JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x)) + "\n";

type Opts = Record<string, string | boolean | undefined>;

/** `status`'s handler (the definitions and flags are in auditor.ts). */
export const status = async (opts: ReadFlags & { json?: boolean }) => (await import("../account-status.ts")).auditorStatus(opts);

/** `bond`'s handler (the definitions and flags are in auditor.ts). */
export const bond = async (amountArg: string, opts: Opts) => {
  const amount = parseAmount("AMOUNT", amountArg);
  const ctx = await marketContext(opts as never);
  const { postAuditorBond } = await import("../../market/auditor-funds.ts");
  const b = await postAuditorBond(ctx.clients, ctx.deployment, amount, { mint: opts.mint === true });
  const eligibleFrom = b.eligibleFrom.toISOString();
  if (opts.json) {
    process.stdout.write(jsonLine({ account: b.account, bond: b.bond, active: b.active, eligibleFrom, txs: b.txs.map(txJson) }));
    return;
  }
  const counts = `counts for dispute panels and attestation committees from ${eligibleFrom}`;
  process.stdout.write(`bond ${fmt(b.bond)}, ${b.active ? `active (${counts})` : "not active (below the minimum bond)"}\n${txLines(b.txs)}`);
};

/** `fund`'s handler (the definitions and flags are in auditor.ts). */
export const fund = async (amountArg: string | undefined, opts: Opts) => {
  const disputesText = String(opts.disputes ?? "1");
  if (!/^[1-9][0-9]{0,2}$/.test(disputesText)) throw new InputError(`--disputes must be a whole number from 1 to 999, got ${JSON.stringify(disputesText)}`);
  if (amountArg !== undefined && disputesText !== "1") throw new InputError("give AMOUNT or --disputes N, not both");
  const amount = amountArg === undefined ? undefined : parseAmount("AMOUNT", amountArg);
  const ctx = await marketContext(opts as never);
  const { fundChallengeDeposits } = await import("../../market/auditor-funds.ts");
  const f = await fundChallengeDeposits(ctx.clients, ctx.deployment, { ...(amount === undefined ? {} : { amount }), disputes: BigInt(disputesText), mint: opts.mint === true });
  const why =
    f.depositJobId === undefined ? "the floor: minimum challenger bond + panel fees, no open job" : `job ${f.depositJobId}, the largest among ${f.openJobs} open job${f.openJobs === 1 ? "" : "s"}`;
  if (f.tokenBalance < f.deposit) process.stderr.write(`pouw: warning: ${fmt(f.tokenBalance)} does not cover one deposit of ${fmt(f.deposit)}\n`);
  const funded = f.deposit === 0n ? 0n : f.tokenBalance / f.deposit;
  if (opts.json) {
    process.stdout.write(
      jsonLine({
        account: f.account,
        tokenBalance: f.tokenBalance,
        deposit: f.deposit,
        depositJobId: f.depositJobId ?? null,
        depositsFunded: f.deposit === 0n ? 0 : funded,
        ethBalance: f.ethBalance,
        challengeGasCost: f.challengeGasCost,
        txs: f.txs.map(txJson),
      }),
    );
    return;
  }
  process.stdout.write(
    `token balance ${fmt(f.tokenBalance)}; one challenge deposit is ${fmt(f.deposit)} (${why}): ${funded} concurrent disputes funded; ` +
      `ETH ${fmt((f.ethBalance / 10n ** 12n) * 10n ** 12n)} (a challenge's gas ~${fmt(((f.challengeGasCost + 10n ** 12n - 1n) / 10n ** 12n) * 10n ** 12n)}); the bot approves DisputeGame for each deposit itself\n${txLines(f.txs)}`,
  );
};

/** `--step-sampling RATE`: a probability per committed segment, in (0, 1]. */
export function parseStepRate(text: string): number {
  const rate = /^(0(\.[0-9]+)?|1(\.0*)?|\.[0-9]+)$/.test(text) ? Number(text) : NaN;
  if (!(rate > 0 && rate <= 1)) throw new InputError(`--step-sampling must be a probability per segment in (0, 1], got ${JSON.stringify(text)}`);
  return rate;
}

/** `run`'s handler (the definitions and flags are in auditor.ts). */
export const run = async (opts: Opts) => {
  const metricsPort = opts.metricsPort === undefined ? undefined : String(opts.metricsPort);
  if (metricsPort !== undefined && !(/^[0-9]{1,5}$/.test(metricsPort) && Number(metricsPort) <= 65_535))
    throw new InputError(`--metrics-port must be a port number 0..65535, got ${JSON.stringify(metricsPort)}`);
  const rounds = String(opts.maxChallengeRounds);
  if (!/^[1-9][0-9]{0,2}$/.test(rounds)) throw new InputError(`--max-challenge-rounds must be a whole number from 1 to 999, got ${JSON.stringify(rounds)}`);
  const heartbeatMs = parseSeconds("--heartbeat", String(opts.heartbeat)) * 1000;
  const unavailableGraceS = opts.unavailableGrace === undefined ? undefined : parseSeconds("--unavailable-grace", String(opts.unavailableGrace));
  const stepRate = opts.stepSampling === undefined ? undefined : parseStepRate(String(opts.stepSampling));
  const ctx = await marketContext(opts as never, { logLevel: "info" });
  // --json: the records go to stdout (pino JSON, synchronous writes), whatever --log-format says
  if (opts.json) configureLogging({ format: "json", stream: { write: (line: string) => process.stdout.write(line) } });
  const { runChallengerService } = await import("../../bot/service.ts"); // the engine and the prover load here only
  const account = ctx.clients.account.address.toLowerCase();
  const peers = await peerDiscovery(ctx);
  const r = await runChallengerService({
    clients: ctx.clients,
    deployment: ctx.deployment,
    store: ctx.store,
    board: ctx.board,
    dbPath: (opts.db as string | undefined) ?? join(ctx.config.stateDir, `bot-${account}.sqlite`),
    ballotsDir: join(ctx.config.stateDir, `ballots-${account}`),
    maxChallengeRounds: Number(rounds),
    heartbeatMs,
    ...(unavailableGraceS === undefined ? {} : { unavailableGraceS }),
    ...(stepRate === undefined ? {} : { stepRate }),
    ...(peers ? { discover: (accounts: readonly (string | null)[]) => peers.dial(accounts) } : {}),
    ...(metricsPort === undefined
      ? {}
      : { metrics: { port: Number(metricsPort), host: opts.metricsHost as string, onListening: (url: string) => void process.stderr.write(`pouw: metrics at ${url}/metrics, health at ${url}/healthz\n`) } }),
    once: opts.once === true,
  });
  if (opts.json) {
    process.stdout.write(
      jsonLine({
        event: "summary",
        account: r.account,
        audited: r.audited,
        failed: r.failed,
        notSampled: r.notSampled,
        receipts: r.receipts,
        transactionsConfirmed: r.confirmed.length,
        transactions: r.confirmed,
        waitingForFunds: r.waitingForFunds,
        findingsLost: r.findingsLost,
      }),
    );
    return;
  }
  const bad = r.failed;
  process.stdout.write(
    `audited ${r.audited} segments (${bad.length} failed${bad.length ? `: ${bad.map((b) => `job ${b.jobId} segment ${b.segment} step ${b.firstBadStep ?? "?"}`).join(", ")}` : ""}), ` +
      `${r.notSampled} not sampled, ${r.receipts} receipts signed, ${r.confirmed.length} transactions confirmed` +
      `${r.waitingForFunds ? `, ${r.waitingForFunds} intents waiting for funds` : ""}${r.findingsLost ? `, ${r.findingsLost} findings lost (see the error lines)` : ""}\n`,
  );
};

/** `claim`'s handler (the definitions and flags are in auditor.ts). */
export const claim = async (opts: Opts) => {
  const ctx = await marketContext(opts as never);
  const me = ctx.clients.account.address;
  // market/standing.ts: the same claims the dApp's auditor page sends through the wallet
  const claimed = await claimCredits(ctx.clients, ctx.deployment, AUDITOR_CREDITS);
  const [fromGame, fromVault, fromRegistry, txs] = [claimed.disputeGame, claimed.stakeVault, claimed.auditorRegistry, claimed.txs];
  if (opts.json) {
    process.stdout.write(
      jsonLine({ account: me, claimed: fromGame + fromVault + fromRegistry, disputeGame: fromGame, stakeVault: fromVault, auditorRegistry: fromRegistry, symbol: ctx.symbol, txs: txs.map(txJson) }),
    );
    return;
  }
  process.stdout.write(
    fromGame + fromVault + fromRegistry === 0n
      ? "nothing to claim\n"
      : `claimed ${fmt(fromGame + fromVault + fromRegistry)} ${ctx.symbol}: ${fmt(fromGame)} (disputes: deposits, rewards, panel fees) + ${fmt(fromVault)} (slash shares) + ${fmt(fromRegistry)} (forfeited bonds)\n${txLines(txs)}`,
  );
};
