/**
 * `pouw jobs [--status open,active,...] [--buyer A] [--provider A] [--limit N] [--json]`: the market's jobs, newest
 * first, with status, parties (EIP-55), segments, payment and stake in the token's symbol and the next deadline.
 * Read-only: needs no key. Warns on stderr when the market has too few eligible auditors to decide a dispute
 * (market/panel-pool.ts).
 */
import type { Command } from "commander";
import { LISTED_JOB_STATUS as LISTED } from "../../chain/enums.ts";
import { withConfig } from "../options.ts";
import { lazyAction } from "../lazy-action.ts";

export function registerJobs(program: Command): void {
  withConfig(
    program
      .command("jobs")
      .description("list the market's jobs (newest first): status, buyer, provider, segments, payment, stake, deadline")
      .option("--status <list>", `only these statuses, comma-separated: ${LISTED.map((x) => x.toLowerCase()).join(", ")}, all (default all)`)
      .option("--buyer <address>", "only this buyer's jobs")
      .option("--provider <address>", "only jobs this provider accepted")
      .option("--limit <n>", "at most this many jobs", "50")
      .option("--json", "print the jobs as JSON"),
  ).action(lazyAction(() => import("./jobs-run.ts"), "jobs"));
}
