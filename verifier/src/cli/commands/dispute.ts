/**
 * `pouw dispute status DISPUTE [--json]`: one dispute (its job, step, phase, deadlines, panel, votes and outcome);
 * `pouw dispute status --job JOB [--json]`: every dispute of a job. Thin: it calls disputeStatus / disputeStatusById
 * (verifier/src/dispute/status.ts), the same reads the bots make. Read-only: needs no key. Exit 2 on bad input (a bad
 * or unknown dispute or job id, both or neither given, no DisputeGame in the deployment, unreachable RPC).
 */
import type { Command } from "commander";
import { withConfig } from "../options.ts";
import { lazyAction } from "../lazy-action.ts";

export function registerDispute(program: Command): void {
  const dispute = program.command("dispute").description("follow one-step disputes (challenge, panel votes, proofs)");
  withConfig(
    dispute
      .command("status")
      .description("one dispute by id (or a job's disputes with --job): job, step, phase, deadlines, panel, votes and outcome")
      .argument("[DISPUTE]", "dispute id")
      .option("--job <JOB>", "list every dispute of this job instead")
      .option("--json", "print the disputes as JSON"),
  ).action(lazyAction(() => import("./dispute-run.ts"), "status"));
}
