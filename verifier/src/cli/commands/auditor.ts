/**
 * `pouw auditor bond|fund|run|claim` (and `attest`, commands/attest.ts): post an auditor bond, hold the bond tokens
 * challenge deposits take (`fund --disputes N`: N concurrent disputes, each deposit held until its dispute resolves), run the
 * challenger bot (until SIGINT/SIGTERM, or one pass with --once), and claim credits won in disputes (DisputeGame,
 * StakeVault and AuditorRegistry credits; the bot claims them too).
 *
 * `run` logs at info by default (start-up summary, audits, challenges, a heartbeat), pretty on a terminal and JSON
 * otherwise or with `--log-format json`; it starts even when the auditor is unbonded or unfunded, with an error line per
 * problem naming the fix, and refuses (exit 2) only when the deployment does not match the chain. With `--metrics-port N`
 * it also serves GET /healthz and a Prometheus GET /metrics on 127.0.0.1:N (`--metrics-host` to change; bot/metrics.ts).
 * With `--json` the bot's log records go to stdout as JSON, one object per line, and the run ends with one
 * `{"event":"summary",...}` line instead of the text summary (both count this run's audits, receipts and transactions,
 * not earlier runs' kept in the database) (the record fields, the `event` names and the summary's
 * keys are listed in docs/cli-json.md).
 */
import type { Command } from "commander";
import { withConfig, withReadConfig } from "../options.ts";
import { registerAuditorAttest } from "./attest.ts";
import { lazyAction } from "../lazy-action.ts";

/** bot/dispute/types.ts DEFAULT_MAX_CHALLENGE_ROUNDS, restated so that the help does not load the bot (a test checks they agree). */
export const DEFAULT_MAX_CHALLENGE_ROUNDS_CLI = 3;

export function registerAuditor(program: Command): void {
  const auditor = program.command("auditor").description("bond, audit (challenger bot), attest, status and claim");
  registerAuditorAttest(auditor);

  withReadConfig(
    auditor
      .command("status")
      .description("your bond and status, credits, token balance, and whether the market's panel pool can decide a dispute (read-only: no key with --address)")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./auditor-run.ts"), "status"));

  withConfig(
    auditor
      .command("bond")
      .description("post (add to) your auditor bond")
      .argument("<amount>", "tokens")
      .option("--mint", "dev chain: mint the amount if the balance is short")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./auditor-run.ts"), "bond"));

  withConfig(
    auditor
      .command("fund")
      .description("hold the bond tokens challenge deposits take (DisputeGame.requiredDeposit: challenger bond + panel fees); default AMOUNT: --disputes times the largest deposit among the open jobs")
      .argument("[amount]", "tokens the balance should reach")
      .option("--disputes <n>", "fund this many concurrent challenge deposits (each held until its dispute resolves)", "1")
      .option("--mint", "dev chain: mint the shortfall")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./auditor-run.ts"), "fund"));

  withConfig(
    auditor
      .command("run")
      .description("run the challenger bot: watch jobs, sample segments privately, audit, sign receipts, challenge, report timeouts, claim")
      .option("--db <file>", "bot state database (default <state-dir>/bot-<address>.sqlite)")
      .option("--once", "one pass, then exit")
      .option("--max-challenge-rounds <n>", "most challenges per (job, segment): a NoDecision on the bot's own dispute starts another round until then", String(DEFAULT_MAX_CHALLENGE_ROUNDS_CLI))
      .option(
        "--unavailable-grace <seconds>",
        "how long a segment's content may stay unavailable from every source before the bot treats it as withheld and challenges the segment's first step (default: a quarter of the job's challenge window, never past halfway to its deadline)",
      )
      .option(
        "--step-sampling <rate>",
        "step sampling: ask the provider (the deployment's StateOpenings) for the state before one private-random step of a committed segment with this probability per segment, and recompute that step (policy/step-sampling.ts: 1 - 0.01^(1/S) catches a cheat of every step of S segments with 0.99)",
      )
      .option("--heartbeat <seconds>", "a heartbeat line (jobs, audits, pending intents, balances) this often", "60")
      .option("--metrics-port <port>", "serve GET /healthz and Prometheus GET /metrics (audits, failures, challenges, balances) on this port (opt-in; 0: any free port)")
      .option("--metrics-host <host>", "address the metrics server listens on", "127.0.0.1")
      .option("--json", "machine-readable: every log record as one JSON object per line on stdout (an `event` field on audits, transactions, heartbeats...), then a summary object"),
  ).action(lazyAction(() => import("./auditor-run.ts"), "run"));

  withConfig(
    auditor
      .command("claim")
      .description("claim credits from the DisputeGame (challenge deposits back, challenger rewards, panel fees), the StakeVault (slash shares) and the AuditorRegistry (forfeited bonds)")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./auditor-run.ts"), "claim"));
}
