/**
 * `pouw auditor bond|run|claim`: post an auditor bond, run the challenger bot (until SIGINT/SIGTERM, or
 * one pass with --once), and claim credits won in disputes.
 */
import { join } from "node:path";
import type { Command } from "commander";
import { auditorRegistryAbi, claimBondCredit, claimStakeCredit, postBond, stakeVaultAbi } from "../../chain/index.ts";
import { chainDisputeHooks, ChallengerBot, DEFAULT_MAX_CHALLENGE_ROUNDS } from "../../bot/index.ts";
import { InputError } from "../../errors/index.ts";
import { ensureFunds, fmt, marketContext, parseAmount, withConfig } from "../context.ts";

type Opts = Record<string, string | boolean | undefined>;

export function registerAuditor(program: Command): void {
  const auditor = program.command("auditor").description("bond, audit (challenger bot) and claim");

  withConfig(auditor.command("bond").description("post (add to) your auditor bond").argument("<amount>", "tokens").option("--mint", "dev chain: mint the amount if the balance is short")).action(
    async (amountArg: string, opts: Opts) => {
      const amount = parseAmount("AMOUNT", amountArg);
      const ctx = await marketContext(opts as never);
      await ensureFunds(ctx, ctx.deployment.auditorRegistry, amount, opts.mint === true);
      await postBond(ctx.clients, { auditorRegistry: ctx.deployment.auditorRegistry, amount });
      const a = await ctx.clients.public.readContract({ address: ctx.deployment.auditorRegistry, abi: auditorRegistryAbi, functionName: "auditorOf", args: [ctx.clients.account.address] });
      const counts = `counts for dispute panels and attestation committees from ${new Date(Number(a.eligibleFrom) * 1000).toISOString()}`;
      process.stdout.write(`bond ${fmt(a.bond)}, ${a.status === 1 ? `active (${counts})` : "not active (below the minimum bond)"}\n`);
    },
  );

  withConfig(
    auditor
      .command("run")
      .description("run the challenger bot: watch jobs, sample segments privately, audit, sign receipts, challenge, report timeouts, claim")
      .option("--db <file>", "bot state database (default <state-dir>/bot-<address>.sqlite)")
      .option("--once", "one pass, then exit")
      .option("--max-challenge-rounds <n>", "most challenges per (job, segment): a NoDecision on the bot's own dispute starts another round until then", String(DEFAULT_MAX_CHALLENGE_ROUNDS)),
  ).action(async (opts: Opts) => {
    const rounds = String(opts.maxChallengeRounds);
    if (!/^[1-9][0-9]{0,2}$/.test(rounds)) throw new InputError(`--max-challenge-rounds must be a whole number from 1 to 999, got ${JSON.stringify(rounds)}`);
    const ctx = await marketContext(opts as never);
    const dbPath = (opts.db as string | undefined) ?? join(ctx.config.stateDir, `bot-${ctx.clients.account.address.toLowerCase()}.sqlite`);
    const dispute = chainDisputeHooks({
      clients: ctx.clients,
      deployment: ctx.deployment,
      ballotsDir: join(ctx.config.stateDir, `ballots-${ctx.clients.account.address.toLowerCase()}`),
      maxChallengeRounds: Number(rounds),
    });
    const bot = new ChallengerBot({ clients: ctx.clients, deployment: ctx.deployment, store: ctx.store, board: ctx.board, dbPath, dispute });
    if (opts.once) {
      await bot.tick();
    } else {
      const stop = () => bot.stop();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      await bot.run();
    }
    const s = bot.summary();
    bot.close();
    const bad = s.audits.filter((a) => !a.ok);
    process.stdout.write(
      `audited ${s.audits.length} segments (${bad.length} failed${bad.length ? `: ${bad.map((b) => `job ${b.jobId} segment ${b.segment} step ${b.firstBadStep ?? "?"}`).join(", ")}` : ""}), ` +
        `${s.sampledOut} not sampled, ${s.receipts} receipts signed, ${s.intents.filter((i) => i.status === "confirmed").length} transactions confirmed\n`,
    );
  });

  withConfig(auditor.command("claim").description("claim credits from the StakeVault (slash shares) and the AuditorRegistry (forfeited bonds)")).action(async (opts: Opts) => {
    const ctx = await marketContext(opts as never);
    const me = ctx.clients.account.address;
    const { stakeVault, auditorRegistry } = ctx.deployment;
    const fromVault = await ctx.clients.public.readContract({ address: stakeVault, abi: stakeVaultAbi, functionName: "creditOf", args: [me] });
    const fromRegistry = await ctx.clients.public.readContract({ address: auditorRegistry, abi: auditorRegistryAbi, functionName: "creditOf", args: [me] });
    if (fromVault > 0n) await claimStakeCredit(ctx.clients, { stakeVault });
    if (fromRegistry > 0n) await claimBondCredit(ctx.clients, { auditorRegistry });
    process.stdout.write(fromVault + fromRegistry === 0n ? "nothing to claim\n" : `claimed ${fmt(fromVault)} (slash shares) + ${fmt(fromRegistry)} (forfeited bonds)\n`);
  });
}
