/**
 * Shared fixtures for the audit check tests: runs of the tiny manifest (12 steps, 3 segments of 4)
 * trained once per process and cached by strategy.
 */
import { cp, rm } from "node:fs/promises";
import { join } from "node:path";
import { createRun, offlineSalt, parseManifest, parseStrategy, train, type Manifest, type Run, type TraceFile } from "../../verifier/src/ml/index.ts";
import { writeStepStates } from "../../verifier/src/checks/index.ts";
import { exampleJson, tempDir } from "../ml/helpers.ts";

export const JOB_ID = 5n;

export function tinyVariant(overrides: { dataSeed?: number; stepsPerSegment?: number; numerics?: "bitwise" | "tolerance" } = {}): Manifest {
  const j = exampleJson("tiny.json") as { data: object; training: object };
  return parseManifest({
    ...j,
    data: { ...j.data, ...(overrides.dataSeed !== undefined ? { seed: overrides.dataSeed } : {}) },
    training: { ...j.training, ...(overrides.stepsPerSegment !== undefined ? { stepsPerSegment: overrides.stepsPerSegment } : {}) },
    ...(overrides.numerics ? { numerics: overrides.numerics } : {}),
  });
}

export class Fixture {
  dir = "";
  run!: Run;
  private traces = new Map<string, { dir: string; trace: TraceFile }>();

  async setup(): Promise<void> {
    this.dir = await tempDir("checks");
    this.run = await createRun(tinyVariant(), { jobId: JOB_ID, salt: offlineSalt(JOB_ID) });
  }

  async teardown(): Promise<void> {
    // NOTE: maxRetries covers a file a just-closed writer (a stopped IPFS node's store) renames into place during the walk
    if (this.dir) await rm(this.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  }

  /** The trace dir of `strategy` (trained once); with `stepStates`, steps.json served too. */
  async trace(strategy: string, options: { stepStates?: boolean } = {}): Promise<{ dir: string; trace: TraceFile }> {
    const key = `${strategy}${options.stepStates ? "+steps" : ""}`;
    const cached = this.traces.get(key);
    if (cached) return cached;
    const dir = join(this.dir, key.replace(/[:/+]/g, "-"));
    const s = parseStrategy(strategy);
    // the states the provider actually trained (a cheater serves what it committed)
    const { trace, stepStateCids } = await train(this.run, { outDir: dir, strategy: s, evaluate: false, keepStepStates: options.stepStates === true });
    if (stepStateCids) await writeStepStates(this.run, dir, stepStateCids);
    const out = { dir, trace };
    this.traces.set(key, out);
    return out;
  }

  /** A fresh copy of a trace dir to tamper with. */
  async copy(strategy: string, label: string): Promise<string> {
    const { dir } = await this.trace(strategy);
    const to = join(this.dir, `copy-${label}`);
    await cp(dir, to, { recursive: true });
    return to;
  }
}
