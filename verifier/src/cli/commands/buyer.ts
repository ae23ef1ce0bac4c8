/**
 * `pouw buyer create|status|fetch|cancel|claim`: post a job for a manifest (stake from quotePolicy over the
 * package's measured detection matrix by default, or `--detection FILE`; `--no-quote` takes the manifest's
 * policy; flags override; data terms over the manifest's corpora when they are registered in the
 * deployment's DataRegistry, market/data-terms.ts), follow it, fetch the final weights with the provider's anchored provenance
 * record (verified against the chain), cancel an unaccepted job, and claim every credit owed to the buyer (refunds and slash shares). `create` parses its flags, calls
 * market/create-job.ts (the plan in market/plan-job.ts is the dApp's too) and prints the result (text or --json).
 */
import type { Command } from "commander";
import { DEFAULT_DATA_SHARE_BPS } from "../../market/data-share.ts";
import { withConfig, withReadConfig } from "../options.ts";
import { lazyAction } from "../lazy-action.ts";

export function registerBuyer(program: Command): void {
  const buyer = program.command("buyer").description("post and follow training jobs");

  withConfig(
    buyer
      .command("create")
      .description("post a job for a manifest: escrow the payment and anchor the manifest hash")
      .requiredOption("--manifest <file>", "job manifest JSON")
      .option("--pay <amount>", "payment in tokens, or \"compute\": what the job's FLOPs are worth at the default compute price (default: the manifest's policy.paymentWei)")
      .option("--allow-underpriced", "post a payment below what the job's compute is worth (refused by default: an honest provider would train at a loss)")
      .option("--detection <file>", "detection matrix the quote sizes the stake with (default: the package's bench/results/detection.json)")
      .option("--no-quote", "no quote: the stake is the manifest's policy.providerStakeWei")
      .option("--margin <m>", "strict margin of the quote, > 0: every cheat class's expected loss >= (1 + m) x its gain (default 0.25)")
      .option("--integrity-value <tokens>", "V: what a planted or unfinished model would cost you; the quote prices every class's gain as max(compute saved, V) (default 0)")
      .option("--stake <amount>", "override: provider stake required (tokens; no quote is run)")
      .option("--segment-timeout <seconds>", "override: seconds the provider has per segment (default 3600)")
      .option("--challenge-window <seconds>", "override: challenge window after the last segment (default: manifest)")
      .option("--challenger-bps <bps>", "override: challenger share of a fault slash")
      .option("--buyer-bps <bps>", "override: buyer share of a fault slash")
      .option("--burn-bps <bps>", "override: burned share of a fault slash")
      .option("--timeout-slash-bps <bps>", "override: share of the lock slashed on a missed deadline")
      .option("--data-share-bps <bps>", `share of the payment credited to the corpora at finalize when data terms are attached (default ${DEFAULT_DATA_SHARE_BPS})`)
      .option("--data-terms", "require data terms: fail unless every corpus is registered in the deployment's DataRegistry")
      .option("--no-data-terms", "never attach data terms (createJob: no contributor share, no tier floor)")
      .option("--examples-per-segment <K>", "evaluate/generate manifests: examples a segment commits (must divide the examples; default the largest divisor up to 50)")
      .option("--mint", "dev chain: mint the payment if the balance is short")
      .option("--json", "print the job as JSON"),
  ).action(lazyAction(() => import("./buyer-run.ts"), "create"));

  withReadConfig(
    buyer
      .command("status")
      .description("a job's status, committed segments, where its money went (slash shares, refund, pay) and how much was audited (read-only: no key; --address for whose credit)")
      .argument("<job>")
      .option("--json"),
  ).action(lazyAction(() => import("./buyer-run.ts"), "status"));

  withConfig(
    buyer
      .command("fetch")
      .description("final weights and the provenance record the final provider anchored, verified against the chain (exit 1 naming the first failing item)")
      .argument("<job>")
      .requiredOption("--out <dir>", "output directory")
      .option("--json", "print the result as JSON"),
  ).action(lazyAction(() => import("./buyer-run.ts"), "fetch"));

  withConfig(buyer.command("cancel").description("cancel a job nobody has accepted; the escrow becomes your credit").argument("<job>").option("--json", "print JSON")).action(
    lazyAction(() => import("./buyer-run.ts"), "cancel"),
  );

  withConfig(
    buyer.command("claim").description("claim everything credited to you as a buyer: refunds and pay (JobMarket) and your share of a provider's slash (StakeVault)").option("--json", "print JSON"),
  ).action(lazyAction(() => import("./buyer-run.ts"), "claim"));
}
