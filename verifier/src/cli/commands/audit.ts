/**
 * `pouw audit --manifest M --trace DIR [--segments all|i,j|random:N] [--checks recompute,...] [--source URL] [--json]
 *   [--job-id N] [--salt 0x.. | --chain-id N --market 0x..] [--base-store DIR]`:
 * audits a provider's published trace directory (trace.json, store/, optional steps.json; checkpoints
 * missing from store/ are fetched from the `--source`s, e.g. the provider's `pouw serve`) with the
 * chosen checks and prints one line (or JSON object) per segment:
 * `{ segment, ok, firstBadStep, check, proof, costMs }`. Exit 0 when every audited segment passed,
 * 1 when one failed, 2 on bad input. Thin: the work is checks/audit.ts (auditRun) over the checks the bot and a
 * panel member call too (checks/recompute.ts, screen-segment.ts, decide.ts). A failure without a proof prints the
 * pipeline's reason why it names no step (`noClaim`).
 * A fine-tuning manifest's base checkpoint (the buyer's content, h(0) of segment 0) is read from the trace's store,
 * then `--base-store DIR`, then the `--source`s; none holding it is bad input (exit 2), not a segment's failure.
 * The job's salt (the data order the audit recomputes with) comes from the flags (salt-flags.ts), never from
 * trace.json; without flags it is the offline salt of the job id, and a trace that records another salt is
 * refused with the flags to give (exit 2).
 */
import type { Command } from "commander";
import { InputError } from "../../errors/index.ts";
import { auditRun, openTraceDir, parseChecks, parseSegmentSelection, readProgressCalibration, type AuditOptions, type SegmentVerdict } from "../../checks/index.ts";
import { createRun, isBitwiseNumerics, readManifestFile, readTraceFile } from "../../ml/index.ts";
import { checkpointSizeBound } from "../../ml/checkpoint.ts";
import { join } from "node:path";
import { collect, parseConfig, parseSources } from "../../config/index.ts";
import { LayeredStore } from "../../store/layered.ts";
import { HttpContentStore } from "../../store/http.ts";
import { ContentNotFoundError, LocalDirStore } from "../../store/index.ts";
import { addSaltOptions, saltFromFlags, type SaltFlags } from "../salt-flags.ts";

type Opts = SaltFlags & {
  manifest: string;
  trace: string;
  segments: string;
  checks?: string;
  json?: boolean;
  jobId?: string;
  progressCalibration?: string;
  progressAlarmRate?: string;
  toleranceThreshold?: string;
  freivaldsVectors?: string;
  source?: string[];
  sourceTimeout?: string;
  baseStore?: string;
  dataStore?: string;
};

function positiveNumber(flag: string, text: string): number {
  const x = Number(text);
  if (text.trim() === "" || !Number.isFinite(x) || x < 0) throw new InputError(`${flag} must be a non-negative number, got ${JSON.stringify(text)}`);
  return x;
}

export function registerAudit(program: Command): void {
  addSaltOptions(
    program
      .command("audit")
      .description("audit a provider's trace: recompute, Freivalds, progress, magnitude or tolerance checks per segment (docs/checks.md)")
      .requiredOption("--manifest <file>", "job manifest JSON")
      .requiredOption("--trace <dir>", "the provider's trace directory (trace.json, store/, steps.json)")
      .option("--segments <sel>", "all | i,j,... | random:N (auditor's private randomness)", "all")
      .option("--checks <list>", "comma-separated: recompute, freivalds, progress, magnitude, tolerance (default: recompute for bitwise manifests, tolerance for tolerance manifests)")
      .option("--job-id <n>", "the on-chain job id (default: the trace's)"),
  )
    .option("--progress-calibration <file>", "progress calibration JSON (checks/progress.ts calibrateProgress)")
    .option("--progress-alarm-rate <p>", "progress check's target false-alarm rate per segment", "0.01")
    .option("--tolerance-threshold <d>", "tolerance check threshold (relative per-step distance, bench/results/tolerance.json)")
    .option("--freivalds-vectors <k>", "Freivalds random vectors per product", "2")
    .option("--source <url>", "fetch checkpoints missing from the trace's store from this `pouw serve` (or IPFS gateway) URL; repeat for more, read in order (env POUW_SOURCES)", collect)
    .option("--source-timeout <ms>", "timeout per request attempt to a --source (default 30000), env POUW_SOURCE_TIMEOUT_MS")
    .option("--base-store <dir>", "content store holding a fine-tuning manifest's base checkpoint (read after the trace's store, before --source)")
    .option("--data-store <dir>", "content store holding a data set by content id (tabular-mlp, char-transformer on text by CID; default <state-dir>/store, env POUW_STORE_DIR; then the --sources)")
    .option("--json", "print a JSON report")
    .action(async (opts: Opts) => {
      const { sources, sourceTimeoutMs } = parseSources(opts);
      const manifest = await readManifestFile(opts.manifest);
      const segments = parseSegmentSelection(opts.segments);
      const checks = parseChecks(opts.checks ?? (isBitwiseNumerics(manifest.numerics) ? "recompute" : "tolerance"));
      const trace = await readTraceFile(join(opts.trace, "trace.json"));
      const jobIdText = opts.jobId ?? trace.jobId;
      // a job id is a uint256 on chain: a longer one is bad input (exit 2), not an encoding failure deep in the salt
      if (!/^(0|[1-9][0-9]*)$/.test(jobIdText) || BigInt(jobIdText) >= 1n << 256n) {
        throw new InputError(`${opts.jobId === undefined ? "trace.json jobId" : "--job-id"} must be a uint256 decimal, got ${JSON.stringify(jobIdText.length > 90 ? `${jobIdText.slice(0, 80)}...` : jobIdText)}${jobIdText.length > 90 ? ` (${jobIdText.length} digits)` : ""}`);
      }
      const { salt, source } = saltFromFlags(opts, BigInt(jobIdText));
      // a trace of another job id is reported as such by the audit (checkTarget); here only a missing salt flag
      if (source === "offline" && trace.jobId === jobIdText && trace.salt !== salt) {
        throw new InputError(
          `trace.json was trained for salt ${trace.salt}, not the offline salt of job ${jobIdText}: give the job's --salt, or --chain-id and --market (salt = keccak256(abi.encode(chainId, jobMarket, jobId)))`,
        );
      }
      const options: AuditOptions = {
        checks,
        segments,
        freivalds: { vectors: positiveNumber("--freivalds-vectors", opts.freivaldsVectors ?? "2") },
        ...(opts.progressCalibration
          ? { progress: { calibration: await readProgressCalibration(opts.progressCalibration), falseAlarmRate: positiveNumber("--progress-alarm-rate", opts.progressAlarmRate ?? "0.01") } }
          : {}),
        ...(opts.toleranceThreshold ? { tolerance: { threshold: positiveNumber("--tolerance-threshold", opts.toleranceThreshold) } } : {}),
      };
      if (checks.includes("progress") && !options.progress) throw new InputError("--checks progress needs --progress-calibration FILE");
      if (checks.includes("tolerance") && !options.tolerance) throw new InputError("--checks tolerance needs --tolerance-threshold D");
      const remotes = [...(opts.baseStore ? [new LocalDirStore(opts.baseStore)] : []), ...sources.map((u) => new HttpContentStore(u, { timeoutMs: sourceTimeoutMs }))];
      // a data set by content id (and an adapter job's frozen base, a distillation job's teacher) is read from --data-store (default the configured store), then the --sources, and checked against its CID
      const dataStore = manifest.corpora[0]?.package === undefined || manifest.adapter || manifest.distill ? { store: new LayeredStore(new LocalDirStore(parseConfig({ store: opts.dataStore }).storeDir), remotes) } : {};
      const run = await createRun(manifest, { jobId: BigInt(jobIdText), salt, ...dataStore });
      const ctx = await openTraceDir(run, opts.trace, undefined, remotes);
      const init = manifest.init;
      if ("checkpointCid" in init && (segments.kind !== "list" || segments.segments.includes(0))) {
        // segment 0's committed start is checked against h(0), which a fine-tuning manifest computes from its base
        if (!(await ctx.store.has(init.checkpointCid))) {
          try {
            await ctx.store.get(init.checkpointCid, { maxBytes: checkpointSizeBound(run.paramSpecs, run.optSpecs) });
          } catch (err) {
            if (!(err instanceof ContentNotFoundError)) throw err;
            throw new InputError(`the manifest's base checkpoint ${init.checkpointCid} is not in the trace's store${opts.baseStore ? ", --base-store" : ""}${sources.length > 0 ? " or any --source" : ""}: segment 0's initial state cannot be computed (give --base-store DIR or --source URL)`, { cause: err });
          }
        }
      }
      const report = await auditRun(ctx, options);
      if (opts.json) {
        const summary = (s: SegmentVerdict) => ({ segment: s.segment, ok: s.ok, firstBadStep: s.firstBadStep, check: s.check, failure: s.failure, proof: s.proof, ...(s.noClaim ? { noClaim: s.noClaim } : {}), costMs: Math.round(s.costMs * 10) / 10 });
        process.stdout.write(JSON.stringify({ manifestHash: report.manifestHash, jobId: report.jobId, ok: report.ok, segments: report.segments.map(summary) }, null, 2) + "\n");
      } else {
        const lines = report.segments.map((s) =>
          s.ok
            ? `segment ${s.segment}: ok (${s.check}) ${s.costMs.toFixed(0)} ms`
            : `segment ${s.segment}: FAIL ${s.check}: ${s.failure!.kind}${s.firstBadStep !== null ? ` at step ${s.firstBadStep}` : ""} (${s.failure!.message}) ${s.costMs.toFixed(0)} ms${s.noClaim ? `\n  no challenge claim: ${s.noClaim}` : ""}`,
        );
        lines.push(report.ok ? `all ${report.segments.length} audited segments ok` : `${report.segments.filter((s) => !s.ok).length} of ${report.segments.length} audited segments failed`);
        process.stdout.write(lines.join("\n") + "\n");
      }
      if (!report.ok) process.exitCode = 1;
    });
}
