/**
 * The handlers of `pouw provider` (provider.ts defines the commands and flags and loads this module only when one runs,
 * so `--help` and flag errors load no chain, engine or solver): each parses its arguments, calls the flow, renders.
 */
import cliProgress from "cli-progress";
import { readFile } from "node:fs/promises";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { getStakeAccount, httpClients, requireJob, requestWithdrawal, stakeDeposit, withdraw, type ChainClients } from "../../chain/index.ts";
import { InputError, PouwError } from "../../errors/index.ts";
import { ENGINES, parseThreads } from "../../ml/engines.ts";
import type { BackendName } from "../../ml/backend.ts";
import { formatStrategy, parseStrategy } from "../../ml/strategies.ts";
import type { SegmentProgress } from "../../provider/run-job.ts";
import type { OpeningMode } from "../../provider/openings.ts";
import type { ServePass } from "../../provider/serve.ts";
import { txRef } from "../../chain/send.ts";
import { chainDate } from "../../chain/revertText.ts";
import { announceStateNode, ensureFunds, fmt, marketContext, peerDiscovery, parseAmount, parseBps, parseJobId, txJson, txLines, type ReadFlags } from "../context.ts";

/** Prints `json` as one JSON line with --json, else `text`; bigints as decimal strings. */
function out(opts: { json?: unknown }, json: Record<string, unknown>, text: string): void {
  process.stdout.write(opts.json ? JSON.stringify(json, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) + "\n" : text);
}

type Opts = Record<string, string | boolean | undefined>;

/**
 * What Ctrl-C during `provider run` does: stop the progress bar (cli-progress shows the cursor again), say in one line
 * that a rerun resumes, and exit 130 (128 + SIGINT). Nothing is lost: every finished segment is committed on chain and
 * its checkpoint stored, and a rerun starts from the next one (provider/run-job.ts).
 */
export function interruptHandler(jobId: bigint, stop: () => void, o: { write?: (line: string) => void; exit?: (code: number) => void } = {}): () => void {
  const write = o.write ?? ((l: string) => process.stderr.write(l));
  const exit = o.exit ?? ((code: number) => process.exit(code));
  return () => {
    stop();
    write(`\npouw: interrupted: job ${jobId}'s committed segments are on chain; \`pouw provider run ${jobId}\` resumes from the next one\n`);
    exit(130);
  };
}

export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean };

export function reporter(stream: ProgressStream = process.stderr): { update: (p: SegmentProgress) => void; stop: () => void } {
  if (!stream.isTTY) {
    let last = 0;
    return {
      update: (p) => {
        if (performance.now() - last > 5000 || p.step === p.steps) {
          last = performance.now();
          stream.write(`job ${p.jobId} step ${p.step}/${p.steps} segment ${p.segment} loss ${p.loss.toFixed(4)}\n`);
        }
      },
      stop: () => {},
    };
  }
  let bar: cliProgress.SingleBar | undefined;
  return {
    update: (p) => {
      if (!bar) {
        bar = new cliProgress.SingleBar({ format: "job {job} [{bar}] {value}/{total} steps | segment {segment} | loss {loss}", stream, hideCursor: true }, cliProgress.Presets.shades_classic);
        bar.start(p.steps, p.step - 1, { job: p.jobId.toString(), segment: p.segment, loss: "-" });
      }
      bar.update(p.step, { segment: p.segment, loss: p.loss.toFixed(4) });
    },
    stop: () => {
      bar?.stop();
      bar = undefined;
    },
  };
}

/** `status`'s handler (the definitions and flags are in provider.ts). */
export const status = async (opts: ReadFlags & { json?: boolean }) => (await import("../account-status.ts")).providerStatus(opts);

/** `stake`'s handler (the definitions and flags are in provider.ts). */
export const stake = async (amountArg: string, opts: Opts) => {
  const amount = parseAmount("AMOUNT", amountArg);
  const ctx = await marketContext(opts as never);
  const txs = await ensureFunds(ctx, ctx.deployment.stakeVault, amount, opts.mint === true);
  txs.push(txRef("stakeDeposit", await stakeDeposit(ctx.clients, { stakeVault: ctx.deployment.stakeVault, amount })));
  const a = await getStakeAccount(ctx.clients.public, { stakeVault: ctx.deployment.stakeVault, provider: ctx.clients.account.address });
  out(
    opts,
    { account: ctx.clients.account.address, amount, free: a.free, locked: a.locked, txs: txs.map(txJson) },
    `staked ${fmt(amount)} ${ctx.symbol}: free ${fmt(a.free)}, locked ${fmt(a.locked)}\n${txLines(txs)}`,
  );
};

/** `unstake`'s handler (the definitions and flags are in provider.ts). */
export const unstake = async (amountArg: string, opts: Opts) => {
  const amount = parseAmount("AMOUNT", amountArg);
  const ctx = await marketContext(opts as never);
  const tx = txRef("requestWithdrawal", await requestWithdrawal(ctx.clients, { stakeVault: ctx.deployment.stakeVault, amount }));
  const a = await getStakeAccount(ctx.clients.public, { stakeVault: ctx.deployment.stakeVault, provider: ctx.clients.account.address });
  out(
    opts,
    { account: ctx.clients.account.address, pendingWithdrawal: a.pendingWithdrawal, withdrawableAt: chainDate(a.withdrawableAt), txs: [txJson(tx)] },
    `unbonding ${fmt(a.pendingWithdrawal)} ${ctx.symbol}, withdrawable at ${chainDate(a.withdrawableAt)} (pouw provider withdraw)\n${txLines([tx])}`,
  );
};

/** `withdraw`'s handler (the definitions and flags are in provider.ts). */
export const withdrawStake = async (opts: Opts) => {
  const ctx = await marketContext(opts as never);
  const a = await getStakeAccount(ctx.clients.public, { stakeVault: ctx.deployment.stakeVault, provider: ctx.clients.account.address });
  const tx = txRef("withdraw", await withdraw(ctx.clients, { stakeVault: ctx.deployment.stakeVault }));
  out(opts, { account: ctx.clients.account.address, withdrawn: a.pendingWithdrawal, txs: [txJson(tx)] }, `withdrew ${fmt(a.pendingWithdrawal)} ${ctx.symbol}\n${txLines([tx])}`);
};

/** `accept`'s handler (the definitions and flags are in provider.ts; the flow is market/provider-jobs.ts). */
export const accept = async (jobArg: string, opts: Opts) => {
  const jobId = parseJobId(jobArg);
  const ctx = await marketContext(opts as never);
  const { acceptProviderJob } = await import("../../market/provider-jobs.ts");
  const maxDataShareBps = parseBps("--max-data-share-bps", opts.maxDataShareBps as string | undefined);
  const { tx, job, providerPayWei, dataShareBps } = await acceptProviderJob({ ...ctx, stateDir: ctx.config.stateDir }, jobId, { peers: await peerDiscovery(ctx), amounts: { fmt, symbol: ctx.symbol }, maxDataShareBps });
  out(
    opts,
    { jobId, fromSegment: job.nextSegment, deadline: chainDate(job.deadline), payment: job.payment, dataShareBps, providerPay: providerPayWei, txs: [txJson(tx)] },
    `accepted job ${jobId} from segment ${job.nextSegment}; first deadline ${chainDate(job.deadline)}; pays ${fmt(providerPayWei)} of ${fmt(job.payment)} ${ctx.symbol} for segments ${job.nextSegment}..${job.policy.segments - 1} (data share ${dataShareBps / 100}%)\n${txLines([tx])}`,
  );
};

/** `run`'s handler (the definitions and flags are in provider.ts). */
/**
 * The clients of the attested machine's session key, read from `file` (its 32-byte private key in hex): a job accepted
 * at a tier whose evidence bound that key takes its segment commits from it only (JobMarket.committerOf), so the
 * key's address needs gas of its own. Everything else (lock, claim) stays with the provider's account.
 */
async function sessionKeyClients(ctx: Awaited<ReturnType<typeof marketContext>>, file: string): Promise<ChainClients> {
  let text: string;
  try {
    text = (await readFile(file, "utf8")).trim();
  } catch (e) {
    throw new InputError(`--session-key-file ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  const key = text.startsWith("0x") ? text : `0x${text}`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new InputError(`--session-key-file ${file}: must hold the session key's 32-byte private key in hex`);
  const account = privateKeyToAccount(key as Hex);
  return httpClients(ctx.config.rpcUrl, ctx.chainId, { account, confirmations: ctx.config.confirmations, pollingIntervalMs: ctx.config.pollIntervalMs });
}

/**
 * What `provider run` leaves to `provider serve` once it exits: a job still Active (a later run commits the rest) or
 * Committed/TimedOut stays disputable, so its openings and disputes need the service until its deadline; null when
 * the job is no longer this provider's to defend.
 */
export function leftToService(job: { status: string; deadline: bigint }, openingsDeployed: boolean): { until: string; duties: string[] } | null {
  if (job.status !== "Active" && job.status !== "Committed" && job.status !== "TimedOut") return null;
  const duties = [
    ...(openingsDeployed ? ["answer state openings (an unanswered one is slashed as withheld)"] : []),
    "appeal a unanimous first-round Fault on a valid step within its appeal window",
    "prove disputed linear-tile steps",
  ];
  const until = job.status === "Active" ? `the challenge window after the last commit (the segment deadline is ${chainDate(job.deadline)})` : chainDate(job.deadline);
  return { until, duties };
}

export const run = async (jobArg: string, opts: Opts) => {
  const jobId = parseJobId(jobArg);
  const strategy = parseStrategy(opts.strategy as string);
  // the engine: the manifest's unless --engine names one (checked against the manifest's numerics once it is fetched,
  // before any training); threads are an option of the pouw engine only
  const engineText = opts.engine as string | undefined;
  if (engineText !== undefined && !(ENGINES as readonly string[]).includes(engineText)) throw new InputError(`--engine must be one of ${ENGINES.join(", ")}, got ${JSON.stringify(engineText)}`);
  const engine = engineText as BackendName | undefined;
  const threads = parseThreads(opts.threads as string | undefined, engine ?? "pouw");
  if (strategy.kind === "copy" || strategy.kind === "full-copy" || strategy.kind === "steer") throw new InputError(`--strategy ${strategy.kind}:<dir> needs a finished peer trace; use \`pouw train\``);
  const ctx = await marketContext(opts as never);
  const sessionKeyFile = (opts.sessionKeyFile as string | undefined) ?? process.env.POUW_SESSION_KEY_FILE;
  const sessionClients = sessionKeyFile === undefined ? undefined : await sessionKeyClients(ctx, sessionKeyFile);
  const job = await requireJob(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket, jobId });
  const peers = await peerDiscovery(ctx);
  if (peers) {
    // readers find this party's node from the chain; the manifest comes from the buyer's announced node
    await announceStateNode(ctx);
    await peers.dial([job.buyer]);
  }
  const { runProviderJob } = await import("../../provider/run-job.ts"); // the engine loads here, not for every command
  const progress = reporter();
  const onInterrupt = interruptHandler(jobId, progress.stop);
  process.once("SIGINT", onInterrupt);
  try {
    const r = await runProviderJob({ clients: ctx.clients, sessionClients, deployment: ctx.deployment, store: ctx.store, board: ctx.board, stateDir: ctx.config.stateDir }, jobId, {
      strategy,
      onStep: progress.update,
      threads,
      ...(engine ? { engine } : {}),
      ...(opts.keepStates === true ? { keepStepStates: true } : {}),
    });
    progress.stop();
    const left = leftToService(await requireJob(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket, jobId }), ctx.deployment.stateOpenings !== undefined);
    const resumed = r.resumedFrom > 0 ? ` (resumed at segment ${r.resumedFrom})` : "";
    const idle: Record<string, string> = {
      Committed: "nothing to train (all segments committed)",
      Finalized: "nothing to train (finalized: claim with pouw provider claim)",
      TimedOut: `not trained: its segment deadline passed and the timeout was reported; your committed segments stay disputable until ${new Date(r.deadline * 1000).toISOString()}, then anyone can re-open the job (JobMarket.reopenJob)`,
    };
    out(
      opts,
      { jobId, status: r.status, resumedFrom: r.resumedFrom, committed: r.committed, strategy: formatStrategy(strategy), gasUsed: r.gasUsed, wallSeconds: r.wallSeconds, txs: r.txs.map(txJson), leftToService: left, ...(r.datasetCid ? { datasetCid: r.datasetCid } : {}) },
      (r.committed.length === 0
        ? `job ${jobId}: ${idle[r.status] ?? (r.status === "Active" ? "nothing to train (all segments committed)" : `not trained: the job is ${r.status}`)}\n`
        : `job ${jobId}: committed segments ${r.committed[0]}..${r.committed[r.committed.length - 1]}${resumed} with strategy ${formatStrategy(strategy)}${r.engine?.device ? `, engine ${r.engine.backend} (${r.engine.device}, ${r.engine.deviceMatmuls} matmuls on the device)` : ""}, gas ${r.gasUsed}, ${r.wallSeconds.toFixed(1)} s\n`) +
        txLines(r.txs) +
        (r.datasetCid ? `job ${jobId}: generated dataset ${r.datasetCid} (published to the store)\n` : "") +
        (left === null ? "" : `job ${jobId}: left to \`pouw provider serve\` until ${left.until}: ${left.duties.join("; ")}\n`),
    );
  } finally {
    process.removeListener("SIGINT", onInterrupt);
    progress.stop();
  }
};

/** `--openings`: how a state opening is answered (provider/openings.ts). */
export function parseOpeningMode(v: unknown): OpeningMode {
  if (v === undefined) return "recompute";
  if (v === "recompute" || v === "kept") return v;
  throw new InputError(`--openings ${String(v)}: must be recompute or kept`);
}

/** `--interval`: seconds between passes of `provider serve`, as milliseconds. */
export function parseIntervalSeconds(v: unknown): number {
  const n = v === undefined ? 15 : Number(v);
  if (typeof v === "boolean" || !Number.isFinite(n) || n <= 0 || n > 86_400) throw new InputError(`--interval ${String(v)}: must be a number of seconds in (0, 86400]`);
  return Math.round(n * 1000);
}

/** The text lines of one pass of the provider's duties (provider/serve.ts), one per action, opening or remaining job. */
export function passLines(pass: ServePass): string[] {
  const lines: string[] = [];
  for (const j of pass.jobs) {
    for (const a of j.openings.answered) {
      lines.push(`job ${j.jobId}: opening of state ${a.step} answered (${a.mode}, ${a.stepsReplayed} steps replayed, ${Math.round(a.cpuMs)} ms CPU, checkpoint ${a.checkpointCid})`);
    }
    for (const f of j.openings.failed) lines.push(`job ${j.jobId}: opening of state ${f.step} NOT answered: ${f.reason}`);
    if (j.error !== undefined) lines.push(`job ${j.jobId}: pass failed (retried): ${j.error}`);
    for (const r of j.disputes) {
      lines.push(`job ${j.jobId} dispute ${r.disputeId} step ${r.step}: ${r.action}: ${r.reason}${r.provingMs === undefined ? "" : ` (proving ${(r.provingMs / 1000).toFixed(1)} s, gas ${r.gasUsed})`}`);
    }
  }
  return lines;
}

function remainingLines(pass: ServePass): string[] {
  return pass.jobs.filter((j) => j.remaining !== null).map((j) => `job ${j.jobId} (${j.status}): served while ${j.remaining}`);
}

const passJson = (pass: ServePass) => ({ at: chainDate(pass.at), remaining: pass.remaining, openingsDeployed: pass.openingsDeployed, jobs: pass.jobs });

/** `defend`'s handler: one pass of the service over one job (the definitions and flags are in provider.ts). */
export const defend = async (jobArg: string, opts: Opts) => {
  const jobId = parseJobId(jobArg);
  const openings = parseOpeningMode(opts.openings);
  const strategy = parseStrategy((opts.strategy as string | undefined) ?? "honest");
  const ctx = await marketContext(opts as never);
  await requireJob(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket, jobId });
  const { servePass } = await import("../../provider/serve.ts"); // the engine and the prover load here
  const { releaseProver } = await import("../../zk/prove.ts");
  try {
    const pass = await servePass({ clients: ctx.clients, deployment: ctx.deployment, store: ctx.store, stateDir: ctx.config.stateDir }, { strategy, openings, jobIds: [jobId] });
    const lines = passLines(pass);
    if (!pass.jobs.some((j) => j.disputes.length > 0)) lines.push(`job ${jobId}: no disputes`);
    const job = pass.jobs[0]!;
    if (job.error !== undefined) throw new PouwError(`job ${jobId}: ${job.error}`);
    out(
      opts,
      { jobId, status: job.status, disputes: job.disputes, openings: job.openings, remaining: job.remaining, openingsDeployed: pass.openingsDeployed },
      [...lines, ...remainingLines(pass)].map((l) => `${l}\n`).join(""),
    );
  } finally {
    await releaseProver();
  }
};

/**
 * `serve`'s handler (the definitions and flags are in provider.ts): passes until nothing remains, or with --watch until
 * Ctrl-C. Text mode prints each line once (a dispute the panel is still deciding is not repeated every pass).
 */
export const serve = async (jobArgs: string[], opts: Opts) => {
  const jobIds = jobArgs.length === 0 ? undefined : jobArgs.map(parseJobId);
  const openings = parseOpeningMode(opts.openings);
  const pollMs = parseIntervalSeconds(opts.interval);
  const strategy = parseStrategy((opts.strategy as string | undefined) ?? "honest");
  const ctx = await marketContext(opts as never);
  const { serveProvider } = await import("../../provider/serve.ts");
  const { releaseProver } = await import("../../zk/prove.ts");
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  process.once("SIGINT", onInterrupt);
  process.once("SIGTERM", onInterrupt);
  const seen = new Set<string>();
  try {
    const last = await serveProvider(
      { clients: ctx.clients, deployment: ctx.deployment, store: ctx.store, stateDir: ctx.config.stateDir },
      {
        strategy,
        openings,
        ...(jobIds ? { jobIds } : {}),
        watch: opts.watch === true,
        pollMs,
        signal: stop.signal,
        onPass: (pass) => {
          if (opts.json) return out(opts, passJson(pass), "");
          const fresh = [...passLines(pass), ...remainingLines(pass)].filter((l) => !seen.has(l));
          for (const l of fresh) seen.add(l);
          if (fresh.length > 0) process.stdout.write(fresh.map((l) => `${l}\n`).join(""));
        },
      },
    );
    if (!opts.json) {
      process.stdout.write(
        last.remaining === 0
          ? `nothing remains: ${last.jobs.length === 0 ? "no job of yours is Active, Committed or TimedOut" : "every job served is past its challenge window with no open dispute"}; collect with pouw provider claim\n`
          : `stopped with ${last.remaining} job(s) still disputable: rerun pouw provider serve before their windows end\n`,
      );
    }
  } finally {
    process.removeListener("SIGINT", onInterrupt);
    process.removeListener("SIGTERM", onInterrupt);
    await releaseProver();
  }
};

/** `claim`'s handler (the definitions and flags are in provider.ts; the flow is market/provider-jobs.ts). */
export const claim = async (jobs: string[], opts: Opts) => {
  const ids = jobs.map(parseJobId);
  const ctx = await marketContext(opts as never);
  const { claimProviderJobs } = await import("../../market/provider-jobs.ts");
  const r = await claimProviderJobs({ ...ctx, stateDir: ctx.config.stateDir }, ids);
  let text = "";
  for (const j of r.jobs) {
    if (j.finalized) text += `job ${j.jobId}: finalized\n`;
    if (j.skipped) text += `job ${j.jobId}: ${j.skipped}\n`;
    if (j.provenance) {
      const p = j.provenance;
      text += `job ${j.jobId}: provenance ${p.alreadyAnchored ? "already anchored" : "anchored"} (record ${p.recordHash}, weights ${p.weightsCid}, ${p.receipts} receipts / ${p.auditedSegments} segments audited); wrote ${p.weightsPath} and ${p.recordPath}\n`;
    }
    if (j.kindResult?.tx) text += `job ${j.jobId}: ${j.kindResult.kind} result recorded on KindRecords${j.kindResult.resultCid ? ` (result ${j.kindResult.resultCid})` : ""}\n`;
    text += txLines(j.txs);
  }
  // NOTE: "claimed X" stays the line's start and end (the e2e tests and the walkthrough read it)
  text += r.claim === undefined ? "nothing to claim\n" : `claimed ${fmt(r.claimed)}\n${txLines([r.claim])}`;
  const results = r.jobs.map((j) => ({ jobId: j.jobId, status: j.status, finalized: j.finalized, skipped: j.skipped ?? null, provenance: j.provenance ?? null, kindResult: j.kindResult?.tx ? { kind: j.kindResult.kind, resultCid: j.kindResult.resultCid ?? "" } : null, txs: j.txs.map(txJson) }));
  out(opts, { jobs: results, claimed: r.claimed, symbol: ctx.symbol, txs: r.claim ? [txJson(r.claim)] : [] }, text);
};
