/**
 * `pouw provider stake|unstake|withdraw|accept|run|serve|defend|claim` (and `attest prepare|request`, commands/attest.ts): manage stake, accept a job, train it segment by
 * segment committing each (resuming after a restart from the last committed segment), serve its duties until the
 * challenge window ends (openings, appeals, proofs: provider/serve.ts), finalize, anchor the
 * job's provenance record (provider/finalize-anchor.ts) and collect payment.
 */
import type { Command } from "commander";
import { withConfig, withReadConfig } from "../options.ts";
import { registerProviderAttest } from "./attest.ts";
import { lazyAction } from "../lazy-action.ts";

export function registerProvider(program: Command): void {
  const provider = program.command("provider").description("stake, accept, train, status, attest and get paid");
  registerProviderAttest(provider);

  withReadConfig(
    provider.command("status").description("your stake (free, locked, unbonding), credits, token balance and the jobs you accepted (read-only: no key with --address)").option("--json", "print JSON"),
  ).action(lazyAction(() => import("./provider-run.ts"), "status"));

  withConfig(
    provider
      .command("stake")
      .description("deposit stake into the StakeVault")
      .argument("<amount>", "tokens")
      .option("--mint", "dev chain: mint the amount if the balance is short")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./provider-run.ts"), "stake"));

  withConfig(provider.command("unstake").description("start unbonding free stake (withdraw after the unbonding delay)").argument("<amount>", "tokens").option("--json", "print JSON")).action(
    lazyAction(() => import("./provider-run.ts"), "unstake"),
  );

  withConfig(provider.command("withdraw").description("withdraw unbonded stake").option("--json", "print JSON")).action(lazyAction(() => import("./provider-run.ts"), "withdrawStake"));

  withConfig(
    provider
      .command("accept")
      .description("accept an open job (locks the policy's stake)")
      .argument("<job>")
      .option("--max-data-share-bps <bps>", "refuse a job whose data terms credit its corpora more than this share of the payment (basis points; default 2500: 25%)")
      .option("--json", "print JSON"),
  ).action(
    lazyAction(() => import("./provider-run.ts"), "accept"),
  );

  withConfig(
    provider
      .command("run")
      .description("train an accepted job segment by segment, publishing checkpoints and committing each segment; resumes after a restart. It exits after the last commit and prints what it leaves to `pouw provider serve` (openings and disputes until the challenge window ends)")
      .argument("<job>")
      .option(
        "--strategy <s>",
        "honest | skip:<f> | quarter-batch | stale:<k> | fp16 | plant:<step> | near-zero | state-poison[:<step>] | nan-plant[:<step>] | skip-powers[:<f>] | plant-spread:<n> | plant-bounded | skip-teacher[:<step>] (cheats are for demos and tests)",
        "honest",
      )
      .option("--threads <n>", "matmul threads of the pouw engine (1..64, default 1); the bits do not depend on it")
      .option("--engine <name>", "pouw | cpu | wasm | webgpu, one the job's numerics allow (default: the manifest's engine); webgpu (numerics bitwise-v3 only) runs the matmuls on a WebGPU device (VK_ICD_FILENAMES names its Vulkan driver, else SwiftShader when installed), the same bits, so auditors recompute on CPU")
      .option("--keep-states", "store every state's checkpoint while training (K a segment instead of 1), so that `provider serve --openings kept` answers a state opening without a replay")
      .option("--session-key-file <file>", "the attested machine's session key (32-byte hex private key; env POUW_SESSION_KEY_FILE): a job accepted at a tier that bound it commits from this key, which needs gas")
      .option("--json", "print the result as JSON (the progress stays on stderr)"),
  ).action(lazyAction(() => import("./provider-run.ts"), "run"));

  const strategyHelp = "the strategy the jobs were trained with (a recompute opening replays it)";
  withConfig(
    provider
      .command("serve")
      .description(
        "the provider's duties after its last commit, until every job's challenge window has ended: answer state openings, appeal a unanimous first-round Fault on a step it recomputes as valid (posting the challenger's bond; a step that is really faulty is not appealed), prove disputed linear-tile steps; exits when nothing remains (no job of yours is Active, or Committed/TimedOut before its deadline, and no dispute on yours is open)",
      )
      .argument("[jobs...]", "only these jobs (default: every job whose provider you are)")
      .option("--watch", "run as a service: never exit on its own (new jobs are served as you accept them); stop with Ctrl-C")
      .option("--interval <seconds>", "seconds between passes", "15")
      .option(
        "--openings <mode>",
        "recompute: replay from the segment's start checkpoint, at most K-1 training steps an opening and no extra storage (examples/mnist-fast.json: 219 ms CPU an opening on average, about 28 training steps); kept: answer from the per-state checkpoints `provider run --keep-states` stored (24 ms an opening, but 479 MB more storage and 3.7 s more training CPU a job there; bench/results/openings.json); a state without a kept record is replayed",
        "recompute",
      )
      .option("--strategy <s>", strategyHelp, "honest")
      .option("--json", "print one JSON line per pass"),
  ).action(lazyAction(() => import("./provider-run.ts"), "serve"));

  withConfig(
    provider
      .command("defend")
      .description("one pass of `pouw provider serve` over one job: answer its openings and defend its disputes (appeal, prove), then exit")
      .argument("<job>")
      .option("--openings <mode>", "recompute | kept (see provider serve --help)", "recompute")
      .option("--strategy <s>", strategyHelp, "honest")
      .option("--json", "print the result as JSON"),
  ).action(lazyAction(() => import("./provider-run.ts"), "defend"));

  withConfig(
    provider
      .command("claim")
      .description(
        "finalize your jobs whose challenge window has passed, anchor each one's provenance record (written next to the final weights and published to the store), then claim your payment credit",
      )
      .argument("[jobs...]")
      .option("--json", "print the result as JSON"),
  ).action(lazyAction(() => import("./provider-run.ts"), "claim"));
}
