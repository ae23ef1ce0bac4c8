import pino, { type Logger } from "pino";

/**
 * Root structured logger. Writes JSON to stderr so stdout stays free for command output.
 * Level comes from the parsed config (see cli), never from process.env here.
 *
 * Modules take their logger once, at import (`const log = logger("store")`), before the CLI has parsed
 * --log-level. So `logger` returns a handle that resolves to a child of the current root on each use:
 * after setLogLevel, every module's logger logs at the new level.
 */
let root: Logger = pino({ level: "warn", base: undefined }, pino.destination(2));
let generation = 0;

export function setLogLevel(level: string): void {
  root = pino({ level, base: undefined }, pino.destination(2));
  generation++;
}

/** A child logger per module: `const log = logger("bot")`; follows setLogLevel. */
export function logger(module: string): Logger {
  let child = root.child({ module });
  let made = generation;
  const current = (): Logger => {
    if (made !== generation) {
      child = root.child({ module });
      made = generation;
    }
    return child;
  };
  return new Proxy(child, {
    get(_target, prop) {
      const l = current();
      const v = Reflect.get(l, prop, l) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(l) : v;
    },
  });
}
