#!/usr/bin/env node
/**
 * `pouw`: the PoUW command line. Commands are thin: they parse flags, call the same library
 * functions the bot and the tests call, print, and exit non-zero with a one-line reason on bad input.
 *
 * Exit codes: 0 success, 1 a check failed / the operation was refused, 2 bad input, 130 interrupted (Ctrl-C).
 *
 * NOTE: this file and commands/index.ts import only commander and the error classes; each command family is
 * imported when it is the one invoked (commands/index.ts), so `pouw --help` and `pouw --version` load no chain,
 * engine or proof library.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { PouwError, InputError } from "../errors/index.ts";
import { setRevertTokenSymbol } from "../chain/display.ts";
import { registerCommands } from "./commands/index.ts";
import { closeCommandResources } from "./cleanup.ts";

/** The package's version (package.json), what `pouw --version` prints. */
export const POUW_VERSION: string = (JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/**
 * The program: with `argv`, only the command family it invokes is loaded (the rest are names in the help listing);
 * without, every family (the whole command tree, for tests that walk it).
 */
export async function buildProgram(argv?: readonly string[]): Promise<Command> {
  const program = new Command("pouw")
    .description("PoUW: a verifiable market for outsourced ML training")
    .version(POUW_VERSION, "-V, --version", "print the pouw version")
    .showHelpAfterError()
    .exitOverride();
  await registerCommands(program, argv);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    const program = await buildProgram(argv);
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version exit 0; usage errors were already printed by commander
      return err.exitCode === 0 ? 0 : 2;
    }
    // an unknown job is bad input wherever it is met (chain/errors.ts UnknownJobError), whatever found it
    if (err instanceof InputError || (err instanceof PouwError && err.code === "UNKNOWN_JOB")) {
      process.stderr.write(`pouw: ${err.shortMessage}\n`);
      return 2;
    }
    if (err instanceof PouwError) {
      process.stderr.write(`pouw: ${err.shortMessage}\n`);
      return 1;
    }
    process.stderr.write(`pouw: unexpected error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await closeCommandResources();
    // the command's token symbol for decoded reverts (cli/context.ts) ends with the command
    setRevertTokenSymbol(undefined);
  }
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("/pouw")) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
