import pino, { type Logger } from "pino";

/**
 * Root structured logger. Writes JSON to stderr so stdout stays free for command output.
 * Level comes from the parsed config (see cli), never from process.env here.
 */
let root: Logger = pino({ level: "warn", base: undefined }, pino.destination(2));

export function setLogLevel(level: string): void {
  root = pino({ level, base: undefined }, pino.destination(2));
}

/** A child logger per module: `const log = logger("bot")`. */
export function logger(module: string): Logger {
  return root.child({ module });
}
