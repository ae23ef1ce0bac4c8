import pino, { type DestinationStream, type Logger } from "pino";

/**
 * Root structured logger. Writes to stderr so stdout stays free for command output, in one of two formats:
 *   json    one pino JSON object per line (machines, log shippers; `--log-format json`)
 *   pretty  `12:04:05.123 INFO  bot: audit ok; receipt signed jobId=1 segment=0` (people; `--log-format pretty`)
 * The default, `auto`, is pretty when stderr is a terminal and JSON otherwise (a pipe, a file, a test harness).
 * Level and format come from the parsed config (see cli), never from process.env here.
 *
 * Modules take their logger once, at import (`const log = logger("store")`), before the CLI has parsed
 * --log-level. So `logger` returns a handle that resolves to a child of the current root on each use:
 * after setLogLevel / configureLogging, every module's logger logs at the new level and format.
 */
export type LogFormat = "auto" | "pretty" | "json";

let level = "warn";
let format: LogFormat = "auto";
let root: Logger = build();
let generation = 0;

function build(stream?: DestinationStream): Logger {
  const pretty = format === "pretty" || (format === "auto" && process.stderr.isTTY === true);
  const dest = stream ?? (pretty ? prettyDestination(process.stderr, { color: process.stderr.isTTY === true && process.stderr.hasColors?.() === true }) : pino.destination(2));
  return pino({ level, base: undefined }, dest);
}

/** The current level and format (a caller that changes them for a while, e.g. a CLI run inside tests, restores them). */
export function loggingState(): { level: string; format: LogFormat } {
  return { level, format };
}

export function setLogLevel(next: string): void {
  configureLogging({ level: next });
}

/** Sets the level and/or format of every module's logger; `stream` (tests) replaces stderr. */
export function configureLogging(o: { level?: string; format?: LogFormat; stream?: DestinationStream }): void {
  if (o.level !== undefined) level = o.level;
  if (o.format !== undefined) format = o.format;
  root = build(o.stream);
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

// ------------------------------------------------------------------ pretty

const LEVELS: Record<number, { name: string; color: string }> = {
  10: { name: "TRACE", color: "\x1b[90m" },
  20: { name: "DEBUG", color: "\x1b[36m" },
  30: { name: "INFO", color: "\x1b[32m" },
  40: { name: "WARN", color: "\x1b[33m" },
  50: { name: "ERROR", color: "\x1b[31;1m" },
  60: { name: "FATAL", color: "\x1b[41;97m" },
};

function value(v: unknown): string {
  if (typeof v === "string") return v === "" || /[\s"=]/.test(v) ? JSON.stringify(v) : v;
  if (typeof v === "number" || typeof v === "boolean" || v === null) return String(v);
  if (v && typeof v === "object" && "message" in v && typeof (v as Error).message === "string") return JSON.stringify((v as Error).message);
  return JSON.stringify(v);
}

/**
 * One pino JSON line as `HH:MM:SS.mmm LEVEL module: msg key=value ...` (local time; strings with spaces quoted).
 * A line that is not pino JSON is returned as it is.
 */
export function prettyLine(line: string, o: { color?: boolean } = {}): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.replace(/\n$/, "");
  }
  const { level: lv, time, module, msg, ...rest } = rec;
  const t = new Date(typeof time === "number" ? time : Date.now());
  const hms = `${String(t.getHours()).padStart(2, "0")}:${String(t.getMinutes()).padStart(2, "0")}:${String(t.getSeconds()).padStart(2, "0")}.${String(t.getMilliseconds()).padStart(3, "0")}`;
  const l = LEVELS[lv as number] ?? { name: String(lv), color: "" };
  const name = l.name.padEnd(5);
  const head = o.color && l.color ? `${l.color}${name}\x1b[0m` : name;
  const fields = Object.entries(rest)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(" ");
  return `${hms} ${head} ${module ? `${module}: ` : ""}${msg ?? ""}${fields ? ` ${fields}` : ""}`;
}

/** A pino destination that writes each record through prettyLine (synchronously, like pino.destination(2)). */
export function prettyDestination(out: { write(s: string): unknown }, o: { color?: boolean } = {}): DestinationStream {
  return {
    write(chunk: string) {
      for (const line of chunk.split("\n")) if (line !== "") out.write(`${prettyLine(line, o)}\n`);
    },
  };
}
