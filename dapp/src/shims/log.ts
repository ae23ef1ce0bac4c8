/**
 * The browser build's stand-in for verifier/src/log (pino writing to stderr): the same `logger(module)` surface,
 * writing to the console. dapp/build.ts resolves every import of log/index.ts here.
 */
type Fields = Record<string, unknown>;
type Log = (fieldsOrMsg: Fields | string, msg?: string) => void;
export type Logger = { trace: Log; debug: Log; info: Log; warn: Log; error: Log; fatal: Log; child: (b: Fields) => Logger };

const ORDER = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
let level: string = "warn";

export function setLogLevel(next: string): void {
  level = next;
}
export function configureLogging(o: { level?: string }): void {
  if (o.level !== undefined) level = o.level;
}
export function loggingState(): { level: string; format: "auto" } {
  return { level, format: "auto" };
}

export function logger(module: string): Logger {
  const at = (name: (typeof ORDER)[number]): Log => (a, b) => {
    if (ORDER.indexOf(name) < ORDER.indexOf(level as (typeof ORDER)[number])) return;
    const sink = name === "error" || name === "fatal" ? console.error : name === "warn" ? console.warn : console.log;
    if (typeof a === "string") sink(`${module}: ${a}`);
    else sink(`${module}: ${b ?? ""}`, a);
  };
  const l: Logger = { trace: at("trace"), debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), fatal: at("fatal"), child: () => l };
  return l;
}
