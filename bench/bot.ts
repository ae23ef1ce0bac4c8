/**
 * `npm run bench:bot [-- --jobs N --cheaters F --providers P --bots K --idle-seconds S --audit-rate R --rpc URL --out FILE]`:
 * the challenger bot as a service on a local node, measured from outside. Defaults: 100 jobs of examples/tiny.json
 * (12 steps, 3 segments) at audit rate 1, 10% of them trained by cheaters (`skip:0.3`: steps 4, 7 and 10 skipped),
 * 8 providers, 4 bots, 60 s idle windows, a fresh anvil on a free port (`--rpc URL`: another dev node with the
 * 31337 dev accounts; it must be fresh).
 *
 * 1. Deploys the market (DisputeGame panel of 3, or 1 with fewer than 4 bots), stakes the providers, bonds the bots'
 *    accounts and writes the state directory `pouw auditor run` reads (bench/bot/market.ts).
 * 2. Starts K bots as services (`pouw auditor run --json`, one child process each), each behind its own counting
 *    JSON-RPC proxy (bench/bot/rpc-proxy.ts): every request a bot sends is counted by method, every transaction it
 *    broadcasts kept.
 * 3. Idle load: with 1, 10 and N open jobs (posted and accepted, nothing committed), once every bot has indexed them
 *    (its requests settle), no block is mined for S seconds; requests per bot per minute = requests in the window
 *    * 60 / S.
 * 4. Activity: the providers train every job in-process (P at a time), while a block is mined every second (a chain
 *    with a block time: dispute seeds and windows need blocks); the bots audit, sign receipts, challenge, sit on the
 *    panels and resolve. The run waits until every cheating job is slashed (or --settle-seconds pass), then moves the
 *    clock past the jobs' challenge window and finalizes every honest job.
 * 5. Reports (table on stdout, JSON in bench/results/bot.json or --out): cheaters slashed before their window ends,
 *    honest jobs paid, receipts recorded, disputes per cheater, bot transactions (distinct signed transactions seen at
 *    the proxies; mined and reverted), RPC requests per bot per minute at each idle level (and by method), peak RSS
 *    per bot, wall times. Exits 1 when a target does not hold: every cheater slashed in its window, every honest job
 *    paid, disputes per cheater <= 1.2, idle requests per bot per minute with N open jobs <= 460 (10% of the 4,600 a
 *    bot that read every open job each tick sent).
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodeFunctionData, keccak256, parseTransaction, type Abi, type Hex } from "viem";
import { auditorRegistryAbi } from "../verifier/src/chain/abi/AuditorRegistry.ts";
import { disputeGameAbi } from "../verifier/src/chain/abi/DisputeGame.ts";
import { jobMarketAbi } from "../verifier/src/chain/abi/JobMarket.ts";
import { jobRecordsAbi } from "../verifier/src/chain/abi/JobRecords.ts";
import { stakeVaultAbi } from "../verifier/src/chain/abi/StakeVault.ts";
import { testTokenAbi } from "../verifier/src/chain/abi/TestToken.ts";
import { finalize, getJob, getJobDisputes, getJobOutcome, getReceiptsRecorded, getSegmentCommits } from "../verifier/src/chain/index.ts";
import { rpc, startAnvil, type AnvilNode } from "./bot/anvil.ts";
import { advance, deployServiceMarket, postAcceptedJob, startBotService, tinyManifest, trainJob, type BotService } from "./bot/market.ts";
import { startRpcProxy, type MethodCounts, type RpcProxy } from "./bot/rpc-proxy.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Idle requests per bot per minute with 100 open jobs before the bot read jobs by new blocks (issue measurement). */
const BASELINE_IDLE_PER_MINUTE = 4_600;
const DISPUTES_PER_CHEATER_MAX = 1.2;

class BenchArgError extends Error {
  override name = "BenchArgError";
}

type Args = { jobs: number; cheaters: number; providers: number; bots: number; idleSeconds: number; auditRate: number; settleSeconds: number; rpc: string | undefined; out: string };

function parseArgs(argv: string[]): Args {
  const a: Args = { jobs: 100, cheaters: 0.1, providers: 8, bots: 4, idleSeconds: 60, auditRate: 1, settleSeconds: 900, rpc: undefined, out: join(ROOT, "bench/results/bot.json") };
  const num = (flag: string, v: string | undefined, min: number, max: number, int = true): number => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < min || n > max || (int && !Number.isInteger(n))) throw new BenchArgError(`${flag} must be ${int ? "a whole number" : "a number"} from ${min} to ${max}, got ${JSON.stringify(v)}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i]!;
    const v = argv[i + 1];
    switch (f) {
      case "--jobs": a.jobs = num(f, v, 1, 1000); break;
      case "--cheaters": a.cheaters = num(f, v, 0, 1, false); break;
      case "--providers": a.providers = num(f, v, 1, 20); break;
      case "--bots": a.bots = num(f, v, 2, 10); break;
      case "--idle-seconds": a.idleSeconds = num(f, v, 5, 600); break;
      case "--audit-rate": a.auditRate = num(f, v, 0.01, 1, false); break;
      case "--settle-seconds": a.settleSeconds = num(f, v, 30, 7200); break;
      case "--rpc": if (!v) throw new BenchArgError("--rpc needs a URL"); a.rpc = v; break;
      case "--out": if (!v) throw new BenchArgError("--out needs a file"); a.out = v; break;
      default: throw new BenchArgError(`unknown flag ${f}`);
    }
    i++;
  }
  return a;
}

/** "Contract.function" of a raw transaction sent to one of the deployment's contracts (for the reverted ones). */
function callName(raw: Hex, d: Record<string, unknown>): string {
  const tx = parseTransaction(raw);
  const abis: [string, Abi][] = [["DisputeGame", disputeGameAbi], ["JobMarket", jobMarketAbi], ["JobRecords", jobRecordsAbi], ["StakeVault", stakeVaultAbi], ["AuditorRegistry", auditorRegistryAbi], ["Token", testTokenAbi]];
  const keyOf: Record<string, string> = { DisputeGame: "disputeGame", JobMarket: "jobMarket", JobRecords: "jobRecords", StakeVault: "stakeVault", AuditorRegistry: "auditorRegistry", Token: "token" };
  for (const [name, abi] of abis) {
    if (String(d[keyOf[name]!]).toLowerCase() !== tx.to?.toLowerCase()) continue;
    try {
      return `${name}.${decodeFunctionData({ abi, data: tx.data! }).functionName}`;
    } catch {
      return `${name}.${tx.data?.slice(0, 10)}`;
    }
  }
  return `${tx.to}.${tx.data?.slice(0, 10)}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const perMinute = (n: number, seconds: number) => Math.round((n * 60) / seconds);

/** Requests an idle bot sends every tick (its head read, its event filter's poll): the rest is work. */
const IDLE_METHODS = new Set(["eth_getBlockByNumber", "eth_blockNumber", "eth_getFilterChanges", "eth_chainId"]);
const work = (p: RpcProxy) => Object.entries(p.counts()).reduce((s, [k, v]) => (IDLE_METHODS.has(k) ? s : s + v), 0);

/** Waits until no bot sent a work request (anything but the idle head and filter reads) for `quietMs`, at most `maxMs`. */
async function settle(proxies: readonly RpcProxy[], quietMs: number, maxMs: number): Promise<void> {
  const until = Date.now() + maxMs;
  let last = proxies.map(work);
  let quietSince = Date.now();
  while (Date.now() < until) {
    await sleep(250);
    const now = proxies.map(work);
    if (now.some((w, i) => w !== last[i])) quietSince = Date.now();
    last = now;
    if (Date.now() - quietSince >= quietMs) return;
  }
}

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv);
  const started = performance.now();
  const cheatEvery = args.cheaters > 0 ? Math.max(1, Math.round(1 / args.cheaters)) : Infinity;
  const isCheater = (i: number) => Number.isFinite(cheatEvery) && i % cheatEvery === 0;
  const dir = mkdtempSync(join(tmpdir(), "pouw-bench-bot-"));
  let node: AnvilNode | undefined;
  const proxies: RpcProxy[] = [];
  const bots: BotService[] = [];
  let ticker: ReturnType<typeof setInterval> | undefined;
  const log = (s: string) => process.stderr.write(`bench:bot [${((performance.now() - started) / 1000).toFixed(0)} s] ${s}\n`);
  try {
    if (args.rpc) {
      if (Number(await rpc<string>(args.rpc, "eth_chainId")) !== 31337) throw new BenchArgError(`${args.rpc} is not a 31337 dev chain`);
    } else {
      node = await startAnvil(["--accounts", String(2 + args.providers + Math.max(args.bots, 4) + 2)]);
    }
    const url = args.rpc ?? node!.url;
    log(`node ${url}${node ? " (anvil started for this run)" : ""}; state in ${dir}`);
    const m = await deployServiceMarket(url, dir, { providers: args.providers, auditors: args.bots, windowSeconds: 60, panelSize: args.bots >= 4 ? 3 : 1 });
    const manifest = tinyManifest(args.auditRate);
    for (const [i, idx] of m.auditorIdx.entries()) {
      const p = await startRpcProxy(url);
      proxies.push(p);
      bots.push(startBotService(m, idx, p.url, { pollMs: 1_000 }));
      void i;
    }
    await Promise.all(bots.map((b) => b.waitFor((r) => r.event === "startup", 300_000, "the start-up summary")));
    log(`${bots.length} bots started`);
    const rss = bots.map(() => 0);
    const sampleRss = () => bots.forEach((b, i) => (rss[i] = Math.max(rss[i]!, b.rssBytes() ?? 0)));
    const rssTimer = setInterval(sampleRss, 2_000);

    // idle load at 1, 10 and N open jobs
    const jobs: { jobId: bigint; cheater: boolean; provider: number }[] = [];
    const levels = [...new Set([1, 10, args.jobs].filter((n) => n <= args.jobs))];
    const idle: { openJobs: number; seconds: number; perBotPerMinute: number[]; byMethodPerBotPerMinute: MethodCounts[] }[] = [];
    for (const level of levels) {
      while (jobs.length < level) {
        const i = jobs.length;
        const provider = i % args.providers;
        jobs.push({ jobId: await postAcceptedJob(m, manifest, m.providers[provider]!), cheater: isCheater(i), provider });
      }
      await settle(proxies, 3_000, 120_000);
      const marks = proxies.map((p) => p.mark());
      await sleep(args.idleSeconds * 1000);
      const win = proxies.map((p, i) => p.since(marks[i]!));
      idle.push({
        openJobs: level,
        seconds: Math.round(win[0]!.seconds),
        perBotPerMinute: win.map((w) => perMinute(w.total, w.seconds)),
        byMethodPerBotPerMinute: win.map((w) => Object.fromEntries(Object.entries(w.counts).map(([k, v]) => [k, perMinute(v, w.seconds)]))),
      });
      log(`idle with ${level} open jobs: ${win.map((w) => perMinute(w.total, w.seconds)).join(", ")} requests per bot per minute`);
    }

    // activity: a block a second; every job trained, P providers at a time
    ticker = setInterval(() => void rpc(url, "evm_mine").catch(() => undefined), 1_000);
    const activityStarted = performance.now();
    const queue = [...jobs];
    await Promise.all(
      [...Array(args.providers).keys()].map(async (p) => {
        for (let j = queue.findIndex((x) => x.provider === p); j >= 0; j = queue.findIndex((x) => x.provider === p)) {
          const job = queue.splice(j, 1)[0]!;
          await trainJob(m, m.providers[p]!, job.jobId, job.cheater ? "skip:0.3" : "honest", `job-${job.jobId}`);
        }
      }),
    );
    const trainedS = (performance.now() - activityStarted) / 1000;
    log(`${jobs.length} jobs trained in ${trainedS.toFixed(0)} s; waiting for the bots`);
    const from = BigInt(m.d.startBlock);
    const cheaters = jobs.filter((j) => j.cheater);
    const slashedNow = async () => (await Promise.all(cheaters.map((j) => getJobOutcome(m.admin.public, { deployment: m.d, jobId: j.jobId })))).filter((o) => o.slashed > 0n).length;
    const settleUntil = Date.now() + args.settleSeconds * 1000;
    for (let n = await slashedNow(); n < cheaters.length && Date.now() < settleUntil; n = await slashedNow()) {
      await sleep(5_000);
      log(`${n}/${cheaters.length} cheaters slashed`);
    }
    // the honest jobs' receipts: every bot done with its audits (its requests settle back to head reads)
    clearInterval(ticker);
    ticker = undefined;
    await settle(proxies, 5_000, 300_000);
    const activityS = (performance.now() - activityStarted) / 1000;
    sampleRss();

    // outcome of the cheating jobs, before the clock moves
    const cheaterRows = [];
    for (const j of cheaters) {
      const o = await getJobOutcome(m.admin.public, { deployment: m.d, jobId: j.jobId });
      const commits = await getSegmentCommits(m.admin.public, { jobMarket: m.d.jobMarket, jobId: j.jobId, fromBlock: from });
      const lastCommit = commits.reduce((b, c) => (c.blockNumber > b ? c.blockNumber : b), 0n);
      const ends = Number((await m.admin.public.getBlock({ blockNumber: lastCommit })).timestamp) + o.job.policy.challengeWindow;
      const slashAt = o.slashes[0] ? Number((await m.admin.public.getBlock({ blockNumber: o.slashes[0].blockNumber })).timestamp) : undefined;
      const disputes = await getJobDisputes(m.admin.public, { disputeGame: m.d.disputeGame!, jobId: j.jobId, fromBlock: from });
      const botOf = (a: string) => m.auditors.findIndex((x) => x.account.address.toLowerCase() === a.toLowerCase());
      cheaterRows.push({
        jobId: j.jobId.toString(),
        slashed: o.slashed > 0n,
        beforeWindow: slashAt !== undefined && slashAt < ends,
        disputes: disputes.length,
        challenges: disputes.map((x) => ({ bot: botOf(x.challenger), segment: x.segment, step: x.step, block: Number(x.blockNumber) })),
        status: o.job.status,
      });
    }

    // honest jobs: past the challenge window, finalized by their providers
    await advance(url, Number(manifest.policy.challengeWindowSeconds) + 1);
    const honestRows = [];
    for (const j of jobs.filter((x) => !x.cheater)) {
      const before = await getJob(m.admin.public, { jobMarket: m.d.jobMarket, jobId: j.jobId });
      if (before.status === "Committed") await finalize(m.providers[j.provider]!, { jobMarket: m.d.jobMarket, jobId: j.jobId }).catch((err: unknown) => log(`job ${j.jobId}: finalize failed: ${(err as Error).message.split("\n")[0]}`));
      const o = await getJobOutcome(m.admin.public, { deployment: m.d, jobId: j.jobId });
      honestRows.push({ jobId: j.jobId.toString(), paid: o.job.status === "Finalized" && (o.finalized?.providerPay ?? 0n) > 0n, slashed: o.slashed > 0n, status: o.job.status });
    }
    let receipts = 0;
    for (const j of jobs) receipts += (await getReceiptsRecorded(m.admin.public, { jobRecords: m.d.jobRecords, jobId: j.jobId, fromBlock: from })).length;

    // the bots' transactions, as the proxies saw them
    const txRows = [];
    for (const [i, p] of proxies.entries()) {
      const byHash = new Map(p.rawTxs().map((r) => [keccak256(r as Hex), r as Hex]));
      const hashes = [...byHash.keys()];
      const revertedCalls: string[] = [];
      let reverted = 0;
      let mined = 0;
      for (const h of hashes) {
        const r = await m.admin.public.getTransactionReceipt({ hash: h }).catch(() => undefined);
        if (!r) continue;
        mined++;
        if (r.status === "reverted") {
          reverted++;
          revertedCalls.push(callName(byHash.get(h)!, m.d));
        }
      }
      txRows.push({ bot: m.auditors[i]!.account.address, broadcasts: p.rawTxs().length, signed: hashes.length, mined, reverted, revertedCalls, requests: p.total() });
    }
    const idleAtMax = idle.find((x) => x.openJobs === args.jobs)!;
    const worstIdle = Math.max(...idleAtMax.perBotPerMinute);
    const disputes = cheaterRows.reduce((s, r) => s + r.disputes, 0);
    const result = {
      date: new Date().toISOString(),
      command: `npm run bench:bot -- ${argv.join(" ")}`.trim(),
      node: args.rpc ? args.rpc : "anvil (started by the bench)",
      machine: "the shared 2-core development machine (load from other sessions)",
      config: { jobs: args.jobs, cheaterShare: args.cheaters, cheaters: cheaters.length, providers: args.providers, bots: args.bots, auditRate: args.auditRate, idleSeconds: args.idleSeconds, manifest: "examples/tiny.json", cheat: "skip:0.3", pollIntervalMs: 1000, blockTimeDuringActivityS: 1 },
      cheaters: { total: cheaters.length, slashed: cheaterRows.filter((r) => r.slashed).length, slashedBeforeWindow: cheaterRows.filter((r) => r.beforeWindow).length, disputes, disputesPerCheater: cheaters.length ? disputes / cheaters.length : 0, rows: cheaterRows },
      honest: { total: honestRows.length, paid: honestRows.filter((r) => r.paid).length, slashed: honestRows.filter((r) => r.slashed).length },
      receipts,
      botTransactions: { signed: txRows.reduce((s, r) => s + r.signed, 0), reverted: txRows.reduce((s, r) => s + r.reverted, 0), perBot: txRows },
      idleRequestsPerBotPerMinute: idle,
      rssMiB: rss.map((b) => Math.round(b / 2 ** 20)),
      wallSeconds: { total: Math.round((performance.now() - started) / 1000), training: Math.round(trainedS), activity: Math.round(activityS) },
      targets: {
        everyCheaterSlashedBeforeWindow: cheaterRows.every((r) => r.beforeWindow),
        everyHonestJobPaid: honestRows.every((r) => r.paid),
        disputesPerCheater: { max: DISPUTES_PER_CHEATER_MAX, ok: cheaters.length === 0 || disputes / cheaters.length <= DISPUTES_PER_CHEATER_MAX },
        idlePerBotPerMinuteAtMaxJobs: { max: BASELINE_IDLE_PER_MINUTE / 10, worst: worstIdle, ok: worstIdle <= BASELINE_IDLE_PER_MINUTE / 10 },
      },
    };
    mkdirSync(dirname(args.out), { recursive: true });
    writeFileSync(args.out, JSON.stringify(result, null, 2) + "\n");
    const rows: [string, string][] = [
      ["jobs (cheaters)", `${args.jobs} (${cheaters.length}), ${args.providers} providers, ${args.bots} bots, audit rate ${args.auditRate}`],
      ["cheaters slashed before their window", `${result.cheaters.slashedBeforeWindow}/${cheaters.length}`],
      ["honest jobs paid", `${result.honest.paid}/${result.honest.total}`],
      ["receipts recorded", String(receipts)],
      ["disputes per cheater", cheaters.length ? (disputes / cheaters.length).toFixed(2) : "-"],
      ["bot transactions (reverted)", `${result.botTransactions.signed} (${result.botTransactions.reverted})`],
      ...idle.map((x): [string, string] => [`idle RPC/bot/min, ${x.openJobs} open job${x.openJobs === 1 ? "" : "s"}`, x.perBotPerMinute.join(", ")]),
      ["bot RSS peak, MiB", result.rssMiB.join(", ")],
      ["wall time, s", `${result.wallSeconds.total} (training ${result.wallSeconds.training}, activity ${result.wallSeconds.activity})`],
    ];
    const w = Math.max(...rows.map(([k]) => k.length));
    process.stdout.write(`bench:bot\n${rows.map(([k, v]) => `  ${k.padEnd(w)}  ${v}`).join("\n")}\nwritten ${args.out}\n`);
    clearInterval(rssTimer);
    const failed = Object.entries(result.targets).filter(([, v]) => (typeof v === "boolean" ? !v : !v.ok)).map(([k]) => k);
    if (failed.length) process.stderr.write(`bench:bot: targets not met: ${failed.join(", ")}\n`);
    return failed.length ? 1 : 0;
  } finally {
    if (ticker) clearInterval(ticker);
    await Promise.all(bots.map((b) => b.stop()));
    await Promise.all(proxies.map((p) => p.close()));
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:bot: ${err instanceof BenchArgError ? "" : "FAILED: "}${(err as Error).message}\n`);
    process.exit(err instanceof BenchArgError ? 2 : 1);
  },
);
