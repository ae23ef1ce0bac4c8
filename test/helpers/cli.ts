/**
 * The one place tests run `pouw`: in this process through main(argv) (`runPouw`, what CLI tests use), or as a
 * separate OS process for the one spawned smoke case per command family (each spawn costs ~3.5 s of CPU in module
 * loading: tfjs, viem, snarkjs). test/cli/in-process.ts, test/e2e/helpers.ts and test/ml/helpers.ts re-export these.
 *
 * @example
 *   const { code, stdout } = await runPouw(["quote", "--manifest", "examples/tiny.json", "--json"]);
 *   const out = await cliOk(["provider", "run", "1", "--rpc", node.url, ...]); // spawned, fails unless exit 0
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { main } from "../../verifier/src/cli/pouw.ts";
import { configureLogging, loggingState } from "../../verifier/src/log/index.ts";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
/** Node 22 from the dependencies (`hardhat test` runs on it too). */
export const NODE = join(ROOT, "node_modules/.bin/node");
export const CLI = join(ROOT, "verifier/src/cli/pouw.ts");

export type PouwRun = { code: number; stdout: string; stderr: string };

/**
 * `pouw ARGS` in this process, capturing what it writes to stdout and stderr and its exit code; process.exitCode and
 * the logging level are restored afterwards.
 */
export async function runPouw(args: string[]): Promise<PouwRun> {
  let stdout = "";
  let stderr = "";
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write;
  // the captured output is not a terminal (as in a spawned run with pipes), whether or not the test run's is
  const tty = [process.stdout.isTTY, process.stderr.isTTY];
  process.stdout.isTTY = false;
  process.stderr.isTTY = false;
  const before = process.exitCode;
  // the CLI sets the level and format from its flags; the tests' own (silent by default) come back afterwards
  const logging = loggingState();
  try {
    return { code: await main(args), stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    [process.stdout.isTTY, process.stderr.isTTY] = tty as [true, true];
    process.exitCode = before;
    configureLogging(logging);
  }
}

export type SpawnedRun = { status: number | null; stdout: string; stderr: string };

/** `pouw ARGS` as a separate OS process, blocking (the test process's environment, cwd the repository root). */
export function pouw(args: string[]): SpawnedRun {
  const r = spawnSync(NODE, [CLI, ...args], { encoding: "utf8", cwd: ROOT, timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `pouw ARGS` as a separate OS process without blocking (to run several at once, or beside an in-process case). */
export function pouwAsync(args: string[]): Promise<SpawnedRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, [CLI, ...args], { cwd: ROOT });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

export type CliResult = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

export type CliRun = { child: ChildProcess; done: Promise<CliResult>; onStderrLine: (fn: (line: string) => void) => void };

/**
 * Starts `pouw ARGS` as a separate OS process with a user's bare environment (PATH, HOME and `env` only), for long-running
 * commands (the bot, `pouw serve`) a test signals or reads line by line.
 */
export function startCli(args: string[], env: Record<string, string> = {}): CliRun {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const listeners: ((line: string) => void)[] = [];
  let partial = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => {
    const text = d.toString();
    stderr += text;
    partial += text;
    const lines = partial.split("\n");
    partial = lines.pop()!;
    for (const l of lines) for (const fn of listeners) fn(l);
  });
  const done = new Promise<CliResult>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done, onStderrLine: (fn) => listeners.push(fn) };
}

export async function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return startCli(args, env).done;
}

/** Like cli(), but fails the test with the process output unless it exits 0. */
export async function cliOk(args: string[], env: Record<string, string> = {}): Promise<string> {
  const r = await cli(args, env);
  if (r.code !== 0) throw new Error(`pouw ${args.join(" ")} exited ${r.code}: ${r.stderr.slice(-2000)}`);
  return r.stdout;
}
