/**
 * `pouw ARGS` run in this process (verifier/src/cli/pouw.ts `main`), capturing what it writes to stdout and stderr and
 * its exit code; process.exitCode and the logging level are restored afterwards. For CLI tests that need no child
 * process.
 *
 * @example
 *   const { code, stdout } = await runPouw(["quote", "--manifest", "examples/tiny.json", "--json"]);
 */
import { main } from "../../verifier/src/cli/pouw.ts";
import { configureLogging, loggingState } from "../../verifier/src/log/index.ts";

export type PouwRun = { code: number; stdout: string; stderr: string };

export async function runPouw(args: string[]): Promise<PouwRun> {
  let stdout = "";
  let stderr = "";
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write;
  const before = process.exitCode;
  // the CLI sets the level and format from its flags; the tests' own (silent by default) come back afterwards
  const logging = loggingState();
  try {
    return { code: await main(args), stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    process.exitCode = before;
    configureLogging(logging);
  }
}
