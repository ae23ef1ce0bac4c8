/**
 * `pouw report JOB [--out FILE] [--json]`: the HTML report of any job, from the chain and the content store
 * (report/job.ts: timeline commit -> challenge -> votes -> resolve -> finalize with tx hashes and blocks, the flow of a
 * slashed stake, the payment split, receipts, provenance checks, the committed loss curve with the challenged step
 * marked). Read-only: needs no key. Writes FILE (default job-JOB.html in the working directory) and prints its path
 * and a one-line summary; --json prints the report's data as JSON instead of the summary (the file is still written).
 */
import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Command } from "commander";
import { requireJob } from "../../chain/index.ts";
import { parseJobId, readContext, withConfig, type ReadFlags } from "../context.ts";

export function registerReport(program: Command): void {
  withConfig(
    program
      .command("report")
      .description("render the HTML report of a job from the chain and the store: timeline, slashed-stake flows, receipts, provenance checks, loss curve")
      .argument("<JOB>", "job id")
      .option("--out <file>", "HTML file to write (default job-<JOB>.html)")
      .option("--json", "print the report's data as JSON"),
  ).action(async (jobText: string, opts: ReadFlags & { out?: string; json?: boolean }) => {
    const jobId = parseJobId(jobText);
    const ctx = await readContext(opts);
    await requireJob(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket, jobId });
    const { collectJobReport, renderJobReport } = await import("../../report/job.ts");
    const r = await collectJobReport({ client: ctx.clients.public, deployment: ctx.deployment, store: ctx.store, board: ctx.board, symbol: ctx.symbol }, jobId);
    const out = resolve(opts.out ?? `job-${jobId}.html`);
    await writeFile(out, renderJobReport(r));
    if (opts.json) {
      process.stdout.write(JSON.stringify({ ...r, path: out }) + "\n");
      return;
    }
    const s = r.flows.slash;
    process.stdout.write(
      `job ${jobId}: ${r.job.status}, ${r.timeline.length} events, ${r.disputes.length} dispute${r.disputes.length === 1 ? "" : "s"}` +
        `${r.detectedStep === null ? "" : ` (first challenged step ${r.detectedStep})`}${s ? `, ${s.slashed} slashed` : ""}, ${r.receipts.length} receipts, provenance ${r.provenance.status}` +
        `${r.kind?.claimed ? `, ${r.kind.kind} ${r.kind.kind === "evaluate" ? `mean loss ${(r.kind.claimed.meanScoreE6 / 1e6).toFixed(6)}` : `${r.kind.claimed.total} tokens`} over ${r.kind.committedExamples} examples (last leaf ${r.kind.leafCheck}), ${r.kind.examplesAudited} examples audited` : ""}\n` +
        `wrote ${out}\n`,
    );
  });
}
