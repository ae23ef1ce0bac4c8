/**
 * `pouw serve [--host H] [--port P]`: serves this machine's content store and board read-only over HTTP
 * (serve/), so that auditors and buyers on other machines can read them with `--source <url>`. The provider
 * runs it next to `pouw provider run`; anyone holding the content can run one too. Runs until SIGINT/SIGTERM,
 * then stops accepting, lets requests in flight finish and exits 0.
 */
import type { Command } from "commander";
import { LocalDirBoard } from "../../board/index.ts";
import { InputError } from "../../errors/index.ts";
import { startContentServer } from "../../serve/index.ts";
import { LocalDirStore } from "../../store/index.ts";
import { configFrom } from "../context.ts";

type Opts = { host: string; port: string; maxConnections: string; store?: string; stateDir?: string; logLevel?: string };

export const DEFAULT_SERVE_PORT = 8090;

function parsePort(text: string): number {
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) > 65_535) throw new InputError(`--port must be a TCP port 0..65535 (0 = any free port), got ${JSON.stringify(text)}`);
  return Number(text);
}

function parseMaxConnections(text: string): number {
  if (!/^[1-9][0-9]{0,5}$/.test(text)) throw new InputError(`--max-connections must be a whole number >= 1, got ${JSON.stringify(text)}`);
  return Number(text);
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("serve this machine's content store (GET/HEAD /ipfs/<cid>) and board (GET /board/<jobMarket>/<jobId>/<segment|provenance>) read-only over HTTP, for other parties' --source")
    .option("--host <address>", "address to listen on; 0.0.0.0 or :: for every interface", "127.0.0.1")
    .option("--port <n>", "TCP port; 0 picks a free one (the URL is printed)", String(DEFAULT_SERVE_PORT))
    .option("--max-connections <n>", "concurrent connections accepted", "64")
    .option("--store <dir>", "content store directory to serve (default <state-dir>/store; the board is <store>/../board), env POUW_STORE_DIR")
    .option("--state-dir <dir>", "state directory (default .pouw), env POUW_STATE_DIR")
    .option("--log-level <level>", "fatal|error|warn|info|debug|trace|silent (default warn; debug logs every request), env POUW_LOG_LEVEL")
    .action(async (opts: Opts) => {
      const port = parsePort(opts.port);
      const maxConnections = parseMaxConnections(opts.maxConnections);
      if (opts.host.trim() === "") throw new InputError("--host must not be empty");
      const config = configFrom({ ...(opts.store ? { store: opts.store } : {}), ...(opts.stateDir ? { stateDir: opts.stateDir } : {}), ...(opts.logLevel ? { logLevel: opts.logLevel } : {}) });
      const server = await startContentServer({ store: new LocalDirStore(config.storeDir), board: new LocalDirBoard(config.boardDir), host: opts.host, port, maxConnections });
      process.stdout.write(`serving ${config.storeDir} and ${config.boardDir} at ${server.url} (read-only; Ctrl-C stops)\n`);
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      await server.close();
      process.stdout.write("stopped\n");
    });
}
