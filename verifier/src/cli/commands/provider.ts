/**
 * `pouw provider stake|unstake|withdraw|accept|run|claim` (and `attest prepare|request`, commands/attest.ts): manage stake, accept a job, train it segment by
 * segment committing each (resuming after a restart from the last committed segment), finalize, anchor the
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

  withConfig(provider.command("accept").description("accept an open job (locks the policy's stake)").argument("<job>").option("--json", "print JSON")).action(
    lazyAction(() => import("./provider-run.ts"), "accept"),
  );

  withConfig(
    provider
      .command("run")
      .description("train an accepted job segment by segment, publishing checkpoints and committing each segment; resumes after a restart")
      .argument("<job>")
      .option(
        "--strategy <s>",
        "honest | skip:<f> | quarter-batch | stale:<k> | fp16 | plant:<step> | near-zero | state-poison[:<step>] | nan-plant[:<step>] | skip-powers[:<f>] | plant-spread:<n> | plant-bounded | skip-teacher[:<step>] (cheats are for demos and tests)",
        "honest",
      )
      .option("--threads <n>", "matmul threads of the pouw engine (1..64, default 1); the bits do not depend on it")
      .option("--session-key-file <file>", "the attested machine's session key (32-byte hex private key; env POUW_SESSION_KEY_FILE): a job accepted at a tier that bound it commits from this key, which needs gas")
      .option("--json", "print the result as JSON (the progress stays on stderr)"),
  ).action(lazyAction(() => import("./provider-run.ts"), "run"));

  withConfig(
    provider
      .command("defend")
      .description(
        "linear-tile (circuit-class) jobs: prove every disputed non-first step of yours with Groth16 (DisputeGame.prove settles it Proven at once); first steps and wrong steps go to the panel",
      )
      .argument("<job>")
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
