/**
 * The handlers of `pouw auditor` (auditor.ts defines the commands and flags and loads this module only when one runs,
 * so `--help` and flag errors load no chain, engine or solver): each parses its arguments, calls the flow, renders.
 */
import { join } from "node:path";
import { getAuditor, getAuditorFunds, getOpenJobIds, mintTestToken, postBond } from "../../chain/index.ts";
import { InputError, PouwError } from "../../errors/index.ts";
import { configureLogging } from "../../log/index.ts";
import { txRef, type TxRef } from "../../chain/send.ts";
import { AUDITOR_CREDITS, claimCredits } from "../../market/standing.ts";
import { ensureFunds, fmt, marketContext, peerDiscovery, parseAmount, parseSeconds, txJson, txLines, type ReadFlags } from "../context.ts";

const jsonLine = (v: Record<string, unknown>) => JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x)) + "\n";

type Opts = Record<string, string | boolean | undefined>;

/** `status`'s handler (the definitions and flags are in auditor.ts). */
export const status = async (opts: ReadFlags & { json?: boolean }) => (await import("../account-status.ts")).auditorStatus(opts);

/** `bond`'s handler (the definitions and flags are in auditor.ts). */
export const bond = async (amountArg: string, opts: Opts) => {
  const amount = parseAmount("AMOUNT", amountArg);
  const ctx = await marketContext(opts as never);
  const txs = await ensureFunds(ctx, ctx.deployment.auditorRegistry, amount, opts.mint === true);
  txs.push(txRef("postBond", await postBond(ctx.clients, { auditorRegistry: ctx.deployment.auditorRegistry, amount })));
  const a = await getAuditor(ctx.clients.public, { auditorRegistry: ctx.deployment.auditorRegistry, auditor: ctx.clients.account.address });
  const eligibleFrom = new Date(Number(a.eligibleFrom) * 1000).toISOString();
  if (opts.json) {
    process.stdout.write(jsonLine({ account: ctx.clients.account.address, bond: a.bond, active: a.status === 1, eligibleFrom, txs: txs.map(txJson) }));
    return;
  }
  const counts = `counts for dispute panels and attestation committees from ${eligibleFrom}`;
  process.stdout.write(`bond ${fmt(a.bond)}, ${a.status === 1 ? `active (${counts})` : "not active (below the minimum bond)"}\n${txLines(txs)}`);
};

/** `fund`'s handler (the definitions and flags are in auditor.ts). */
export const fund = async (amountArg: string | undefined, opts: Opts) => {
  const disputesText = String(opts.disputes ?? "1");
  if (!/^[1-9][0-9]{0,2}$/.test(disputesText)) throw new InputError(`--disputes must be a whole number from 1 to 999, got ${JSON.stringify(disputesText)}`);
  if (amountArg !== undefined && disputesText !== "1") throw new InputError("give AMOUNT or --disputes N, not both");
  const disputes = BigInt(disputesText);
  const ctx = await marketContext(opts as never);
  const { clients, deployment: d } = ctx;
  const me = clients.account.address;
  if (!d.disputeGame) throw new InputError("the deployment has no DisputeGame: there is no challenge deposit to fund");
  const jobIds = await getOpenJobIds(clients.public, { jobMarket: d.jobMarket });
  const before = await getAuditorFunds(clients.public, { deployment: d, account: me, jobIds });
  const deposit = before.deposit!;
  const target = amountArg === undefined ? deposit.amount * disputes : parseAmount("AMOUNT", amountArg);
  const why =
    deposit.jobId === undefined ? "the floor: minimum challenger bond + panel fees, no open job" : `job ${deposit.jobId}, the largest among ${jobIds.length} open job${jobIds.length === 1 ? "" : "s"}`;
  let balance = before.tokenBalance;
  const txs: TxRef[] = [];
  if (balance < target) {
    if (opts.mint !== true || !d.devToken) {
      throw new PouwError(`token balance ${fmt(balance)} < ${fmt(target)}: transfer ${fmt(target - balance)} tokens (${d.token}) to ${me}${d.devToken ? " or pass --mint on the dev chain" : ""}`);
    }
    txs.push(txRef("mint", await mintTestToken(clients, { token: d.token, to: me, amount: target - balance })));
    balance = target;
  }
  if (balance < deposit.amount) process.stderr.write(`pouw: warning: ${fmt(balance)} does not cover one deposit of ${fmt(deposit.amount)}\n`);
  if (opts.json) {
    process.stdout.write(
      jsonLine({
        account: me,
        tokenBalance: balance,
        deposit: deposit.amount,
        depositJobId: deposit.jobId ?? null,
        depositsFunded: deposit.amount === 0n ? 0 : balance / deposit.amount,
        ethBalance: before.ethBalance,
        challengeGasCost: before.challengeGasCost,
        txs: txs.map(txJson),
      }),
    );
    return;
  }
  process.stdout.write(
    `token balance ${fmt(balance)}; one challenge deposit is ${fmt(deposit.amount)} (${why}): ${deposit.amount === 0n ? 0n : balance / deposit.amount} concurrent disputes funded; ` +
      `ETH ${fmt((before.ethBalance / 10n ** 12n) * 10n ** 12n)} (a challenge's gas ~${fmt(((before.challengeGasCost + 10n ** 12n - 1n) / 10n ** 12n) * 10n ** 12n)}); the bot approves DisputeGame for each deposit itself\n${txLines(txs)}`,
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
  const stateOpenings = ctx.deployment.stateOpenings;
  // INVARIANT: step sampling asks the deployment's own StateOpenings (the one the panels read for the challenge)
  if (stepRate !== undefined && !stateOpenings) {
    throw new InputError(`--step-sampling ${stepRate}: the deployment has no stateOpenings (StateOpenings), so no provider can be asked for a state; deploy one with \`pouw deploy\` (it deploys StateOpenings unless --no-state-openings) or run without --step-sampling`);
  }
  // --json: the records go to stdout (pino JSON, synchronous writes), whatever --log-format says
  if (opts.json) configureLogging({ format: "json", stream: { write: (line: string) => process.stdout.write(line) } });
  const { chainDisputeHooks, ChallengerBot } = await import("../../bot/index.ts"); // the engine and the prover load here only
  const dbPath = (opts.db as string | undefined) ?? join(ctx.config.stateDir, `bot-${ctx.clients.account.address.toLowerCase()}.sqlite`);
  const dispute = chainDisputeHooks({
    clients: ctx.clients,
    deployment: ctx.deployment,
    ballotsDir: join(ctx.config.stateDir, `ballots-${ctx.clients.account.address.toLowerCase()}`),
    maxChallengeRounds: Number(rounds),
  });
  const peers = await peerDiscovery(ctx);
  const discover = peers ? (accounts: readonly (string | null)[]) => peers.dial(accounts) : undefined;
  const bot = new ChallengerBot({
    clients: ctx.clients,
    deployment: ctx.deployment,
    store: ctx.store,
    board: ctx.board,
    dbPath,
    dispute,
    heartbeatMs,
    ...(unavailableGraceS === undefined ? {} : { unavailableGraceS }),
    ...(stepRate !== undefined && stateOpenings ? { stepSampling: { stateOpenings, rate: stepRate } } : {}),
    ...(discover ? { discover } : {}),
  });
  let metrics: Awaited<ReturnType<typeof startMetricsServer>> | undefined;
  let running = true;
  const { startMetricsServer } = await import("../../bot/metrics.ts");
  try {
    await bot.startup();
    if (metricsPort !== undefined) {
      const { clients, deployment } = ctx;
      const account = clients.account.address;
      metrics = await startMetricsServer({
        port: Number(metricsPort),
        host: opts.metricsHost as string,
        view: {
          summary: () => bot.summary(),
          funds: () => getAuditorFunds(clients.public, { deployment, account }),
          blockNumber: () => clients.public.getBlockNumber(),
          running: () => running,
          health: () => bot.health(),
          chainCounters: () => bot.chainCounters(),
        },
      });
      process.stderr.write(`pouw: metrics at ${metrics.url}/metrics, health at ${metrics.url}/healthz\n`);
    }
    if (opts.once) {
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
  const bad = s.audits.filter((a) => !a.ok);
  const waiting = s.waitingForFunds;
  const lost = s.intents.filter((i) => i.kind === "challenge" && i.status === "failed").length;
  const confirmed = s.intents.filter((i) => i.status === "confirmed").length;
  if (opts.json) {
    process.stdout.write(
      jsonLine({
        event: "summary",
        account: ctx.clients.account.address,
        audited: s.audits.length,
        failed: bad.map((b) => ({ jobId: b.jobId, segment: b.segment, firstBadStep: b.firstBadStep ?? null })),
        notSampled: s.sampledOut,
        receipts: s.receipts,
        transactionsConfirmed: confirmed,
        transactions: s.intents.filter((i) => i.status === "confirmed").map((i) => ({ kind: i.kind, txHash: i.txHash })),
        waitingForFunds: waiting,
        findingsLost: lost,
      }),
    );
    return;
  }
  process.stdout.write(
    `audited ${s.audits.length} segments (${bad.length} failed${bad.length ? `: ${bad.map((b) => `job ${b.jobId} segment ${b.segment} step ${b.firstBadStep ?? "?"}`).join(", ")}` : ""}), ` +
      `${s.sampledOut} not sampled, ${s.receipts} receipts signed, ${confirmed} transactions confirmed` +
      `${waiting ? `, ${waiting} intents waiting for funds` : ""}${lost ? `, ${lost} findings lost (see the error lines)` : ""}\n`,
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
