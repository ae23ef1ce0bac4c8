/**
 * `pouw serve [--host H] [--port P]`: serves this machine's content store and board read-only over HTTP
 * (serve/), so that auditors and buyers on other machines can read them with `--source <url>`. The provider
 * runs it next to `pouw provider run`; anyone holding the content can run one too. Runs until SIGINT/SIGTERM,
 * then stops accepting, lets requests in flight finish and exits 0. `--dapp [dir]` also serves the buyer dApp
 * (dapp/dist by default, built by `npm run dapp:build`) at /, with the deployment file as /deployment.json.
 * `--upload` accepts `PUT /ipfs/<cid>` into the store (body checked against the CID, at most `--upload-max-bytes`):
 * how the dApp publishes a job's manifest and small datasets to the store it is served from.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { LocalDirBoard } from "../../board/index.ts";
import { InputError } from "../../errors/index.ts";
import { DEFAULT_UPLOAD_MAX_BYTES, DEFAULT_UPLOAD_QUOTA_BYTES, startContentServer } from "../../serve/index.ts";
import { loadDappFiles } from "../../serve/dapp.ts";
import { LocalDirStore } from "../../store/index.ts";
import { collect } from "../../config/index.ts";
import { configFrom, startCommandIpfs } from "../context.ts";

type Opts = { host: string; port: string; maxConnections: string; upload?: boolean; uploadMaxBytes: string; uploadQuotaBytes: string; store?: string; stateDir?: string; logLevel?: string; dapp?: boolean | string; deployment?: string; ipfs?: boolean; ipfsListen?: string[] };

export const DEFAULT_SERVE_PORT = 8090;

function parsePort(text: string): number {
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) > 65_535) throw new InputError(`--port must be a TCP port 0..65535 (0 = any free port), got ${JSON.stringify(text)}`);
  return Number(text);
}

function parseUploadMax(text: string, flag = "--upload-max-bytes"): number {
  if (!/^[1-9][0-9]{0,9}$/.test(text)) throw new InputError(`${flag} must be a whole number of bytes >= 1, got ${JSON.stringify(text)}`);
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
    .option("--dapp [dir]", "also serve the buyer dApp at / (default dir: the package's dapp/dist; build it with npm run dapp:build)")
    .option("--deployment <file>", "with --dapp: the deployment file served as /deployment.json (default <state-dir>/deployment.json, when it exists)")
    .option("--ipfs", "also serve the store and board over IPFS (a Helia node: bitswap and /pouw/board/1.0.0 on libp2p TCP); prints its multiaddrs")
    .option("--ipfs-listen <multiaddr>", "with --ipfs: TCP address to listen on (default /ip4/127.0.0.1/tcp/0); repeatable", collect)
    .option("--upload", "also accept PUT /ipfs/<cid> into the store (the body must hash to <cid>): the dApp publishes manifests and small datasets with it")
    .option("--upload-max-bytes <n>", "with --upload: largest body accepted", String(DEFAULT_UPLOAD_MAX_BYTES))
    .option("--upload-quota-bytes <n>", "with --upload: most new bytes all uploads may add while the server runs (507 beyond)", String(DEFAULT_UPLOAD_QUOTA_BYTES))
    .option("--log-level <level>", "fatal|error|warn|info|debug|trace|silent (default warn; debug logs every request), env POUW_LOG_LEVEL")
    .action(async (opts: Opts) => {
      const port = parsePort(opts.port);
      const maxConnections = parseMaxConnections(opts.maxConnections);
      if (opts.host.trim() === "") throw new InputError("--host must not be empty");
      const uploadMaxBytes = parseUploadMax(opts.uploadMaxBytes);
      const uploadQuotaBytes = parseUploadMax(opts.uploadQuotaBytes, "--upload-quota-bytes");
      if (!opts.upload && opts.uploadQuotaBytes !== String(DEFAULT_UPLOAD_QUOTA_BYTES)) throw new InputError("--upload-quota-bytes limits --upload: give --upload too");
      if (!opts.upload && opts.uploadMaxBytes !== String(DEFAULT_UPLOAD_MAX_BYTES)) throw new InputError("--upload-max-bytes limits --upload: give --upload too");
      const config = configFrom({
        ...(opts.store ? { store: opts.store } : {}),
        ...(opts.stateDir ? { stateDir: opts.stateDir } : {}),
        ...(opts.logLevel ? { logLevel: opts.logLevel } : {}),
        ...(opts.ipfs ? { ipfs: true } : {}),
        ...(opts.ipfsListen ? { ipfsListen: opts.ipfsListen } : {}),
      });
      let dapp;
      if (opts.dapp !== undefined) {
        const dir = typeof opts.dapp === "string" ? opts.dapp : fileURLToPath(new URL("../../../../dapp/dist", import.meta.url));
        const deploymentPath = opts.deployment ?? (existsSync(config.deploymentPath) ? config.deploymentPath : undefined);
        dapp = await loadDappFiles(dir, deploymentPath === undefined ? {} : { deploymentPath });
      } else if (opts.deployment !== undefined) throw new InputError("--deployment is only served with --dapp");
      const store = new LocalDirStore(config.storeDir);
      const upload = opts.upload ? { store, maxBytes: uploadMaxBytes, quotaBytes: uploadQuotaBytes } : undefined;
      const server = await startContentServer({ store, board: new LocalDirBoard(config.boardDir), host: opts.host, port, maxConnections, ...(dapp ? { dapp } : {}), ...(upload ? { upload } : {}) });
      process.stdout.write(`serving ${config.storeDir} and ${config.boardDir} at ${server.url} (${upload ? `uploads by PUT /ipfs/<cid> up to ${uploadMaxBytes} bytes each, ${uploadQuotaBytes} in all` : "read-only"}; Ctrl-C stops)\n`);
      // the node serves the same directory: content `provider run` adds meanwhile is served at once (store/ipfs.ts)
      const node = config.ipfs ? await startCommandIpfs(store, config.ipfs, config.boardDir) : undefined;
      if (node) process.stdout.write(`ipfs ${node.peerId} at ${node.multiaddrs().join(" ")}\n`);
      if (dapp) process.stdout.write(`buyer dApp at ${server.url}/${dapp.has("/deployment.json") ? "" : " (no deployment file: open it with ?deployment=<url>)"}\n`);
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      await server.close();
      await node?.stop();
      process.stdout.write("stopped\n");
    });
}
