/**
 * Configuration, parsed ONCE from command-line flags and the environment into a frozen object that is
 * passed in to everything else. Nothing but this module reads process.env.
 *
 * Precedence: flag > environment variable > default.
 *
 *   --rpc URL                 POUW_RPC_URL          default http://127.0.0.1:8545
 *   --deployment FILE         POUW_DEPLOYMENT       default <state dir>/deployment.json
 *   --keystore FILE           POUW_KEYSTORE         Web3 Secret Storage v3 JSON keystore
 *   --hardhat-keystore NAME   POUW_HARDHAT_KEYSTORE key NAME in Hardhat's keystore (`npx hardhat keystore set NAME`)
 *   --hardhat-keystore-file F POUW_HARDHAT_KEYSTORE_FILE  default: Hardhat's global keystore.json
 *   --password-file FILE      POUW_KEYSTORE_PASSWORD (the password itself) for either keystore
 *   --private-key HEX         POUW_PRIVATE_KEY      ONLY on the local dev chain (id 31337), with a warning
 *   --store DIR               POUW_STORE_DIR        default <state dir>/store (content store; the board is <store>/../board)
 *   --source URL (repeatable) POUW_SOURCES          comma-separated; remote `pouw serve` (or IPFS gateway) base URLs,
 *                                                   read after the local store and board, in order
 *   --source-timeout MS       POUW_SOURCE_TIMEOUT_MS default 30000, per request attempt to a source (and per IPFS fetch)
 *   --ipfs                    POUW_IPFS=1           run an IPFS (Helia) node for the command: serve the store, fetch over bitswap
 *   --ipfs-peer MADDR (rep.)  POUW_IPFS_PEERS       comma-separated; peers to dial (/ip4/../tcp/../p2p/<peer id>)
 *   --ipfs-listen MADDR (rep.) POUW_IPFS_LISTEN     comma-separated; default /ip4/127.0.0.1/tcp/0
 *   --ipfs-timeout MS         POUW_IPFS_TIMEOUT_MS  default the --source-timeout: the longest wait for IPFS peers to
 *                                                   serve one CID (absent content ends there, IpfsFetchTimeoutError)
 *   --state-dir DIR           POUW_STATE_DIR        default .pouw
 *   --log-level LEVEL         POUW_LOG_LEVEL        default warn (`pouw auditor run`: info)
 *   --log-format FORMAT       POUW_LOG_FORMAT       auto|pretty|json, default auto (pretty on a terminal, else JSON)
 *   --confirmations N         POUW_CONFIRMATIONS    default 1
 *   --poll-interval MS        POUW_POLL_INTERVAL_MS default 1000
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import type { Hex } from "viem";
import { z } from "zod";
import { InputError } from "../errors/index.ts";
import { checkMultiaddr } from "../store/multiaddr.ts";

export class ConfigError extends InputError {
  override name = "ConfigError";
  override readonly code: string = "CONFIG";
}

export const DEV_CHAIN_ID = 31337;

export type KeySource =
  | { readonly kind: "none" }
  | { readonly kind: "keystore"; readonly path: string; readonly password: string }
  | { readonly kind: "hardhat-keystore"; readonly name: string; readonly path: string | undefined; readonly password: string }
  | { readonly kind: "private-key"; readonly key: Hex };

export type Config = {
  readonly rpcUrl: string;
  readonly deploymentPath: string;
  readonly key: KeySource;
  readonly storeDir: string;
  /** The board directory: always next to the store. */
  readonly boardDir: string;
  /** Remote content and board sources (base URLs, no trailing slash), read in this order after the local ones. */
  readonly sources: readonly string[];
  readonly sourceTimeoutMs: number;
  /** The command's IPFS node (store/ipfs.ts), when `--ipfs`: datastore dir, listen addresses, peers to dial. */
  readonly ipfs: IpfsConfig | undefined;
  readonly stateDir: string;
  readonly logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  readonly logFormat: "auto" | "pretty" | "json";
  readonly confirmations: number;
  readonly pollIntervalMs: number;
};

export type IpfsConfig = {
  readonly dir: string;
  readonly listen: readonly string[];
  readonly peers: readonly string[];
  /** Per fetch (and per dial or board read): the longest wait for the connected peers; absent content ends there. */
  readonly timeoutMs: number;
};

/** Raw flag values as commander gives them (all optional strings). */
export type ConfigFlags = {
  rpc?: string;
  deployment?: string;
  keystore?: string;
  hardhatKeystore?: string;
  hardhatKeystoreFile?: string;
  passwordFile?: string;
  privateKey?: string;
  store?: string;
  /** Repeatable --source (commander collects them). */
  source?: string[];
  sourceTimeout?: string;
  ipfs?: boolean;
  /** Repeatable --ipfs-peer / --ipfs-listen. */
  ipfsPeer?: string[];
  ipfsListen?: string[];
  ipfsTimeout?: string;
  stateDir?: string;
  logLevel?: string;
  logFormat?: string;
  confirmations?: string;
  pollInterval?: string;
};

const Raw = z.strictObject({
  rpcUrl: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
  stateDir: z.string().min(1),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]),
  logFormat: z.enum(["auto", "pretty", "json"]),
  confirmations: z.coerce.number({ error: "must be an integer" }).int("must be an integer").min(1).max(64),
  pollIntervalMs: z.coerce.number({ error: "must be a number of milliseconds" }).int().min(10).max(600_000),
});

const FLAG_OF: Record<string, string> = {
  rpcUrl: "--rpc / POUW_RPC_URL",
  stateDir: "--state-dir / POUW_STATE_DIR",
  logLevel: "--log-level / POUW_LOG_LEVEL",
  logFormat: "--log-format / POUW_LOG_FORMAT",
  confirmations: "--confirmations / POUW_CONFIRMATIONS",
  pollIntervalMs: "--poll-interval / POUW_POLL_INTERVAL_MS",
};

/** Adds the shared connection and key flags to a command. */
export function addConfigOptions(cmd: Command): Command {
  return cmd
    .option("--rpc <url>", "JSON-RPC endpoint (default http://127.0.0.1:8545, env POUW_RPC_URL)")
    .option("--deployment <file>", "deployment addresses written by `pouw deploy` (default <state-dir>/deployment.json)")
    .option("--keystore <file>", "encrypted JSON keystore (Web3 Secret Storage v3), env POUW_KEYSTORE")
    .option("--hardhat-keystore <name>", "key name in Hardhat's keystore, env POUW_HARDHAT_KEYSTORE")
    .option("--hardhat-keystore-file <file>", "Hardhat keystore file (default: Hardhat's global keystore.json)")
    .option("--password-file <file>", "file holding the keystore password (or env POUW_KEYSTORE_PASSWORD)")
    .option("--private-key <hex>", "raw private key: local dev chain (31337) only, env POUW_PRIVATE_KEY")
    .option("--store <dir>", "content store directory (default <state-dir>/store), env POUW_STORE_DIR")
    .option("--source <url>", "remote content/board source, e.g. a provider's `pouw serve` URL; repeat for more, read in order after the local store (env POUW_SOURCES, comma-separated)", collect)
    .option("--source-timeout <ms>", "timeout per request attempt to a --source (default 30000), env POUW_SOURCE_TIMEOUT_MS")
    .option("--ipfs", "run an IPFS (Helia) node for this command: serve the store over bitswap and fetch from peers before the --source URLs (env POUW_IPFS=1)")
    .option("--ipfs-peer <multiaddr>", "with --ipfs: a peer to dial, /ip4/<host>/tcp/<port>/p2p/<peer id>; repeat for more (env POUW_IPFS_PEERS, comma-separated)", collect)
    .option("--ipfs-listen <multiaddr>", "with --ipfs: TCP address to listen on (default /ip4/127.0.0.1/tcp/0); repeatable (env POUW_IPFS_LISTEN)", collect)
    .option("--ipfs-timeout <ms>", "with --ipfs: the longest wait for the peers to serve one CID before IpfsFetchTimeoutError (default the --source-timeout), env POUW_IPFS_TIMEOUT_MS")
    .option("--state-dir <dir>", "state directory (default .pouw), env POUW_STATE_DIR")
    .option("--log-level <level>", "fatal|error|warn|info|debug|trace|silent (default warn; info for `auditor run`), env POUW_LOG_LEVEL")
    .option("--log-format <format>", "auto|pretty|json: pretty `time level msg key=value` lines or pino JSON (default auto: pretty on a terminal), env POUW_LOG_FORMAT")
    .option("--confirmations <n>", "blocks to wait after inclusion (default 1), env POUW_CONFIRMATIONS")
    .option("--poll-interval <ms>", "event and receipt polling interval (default 1000), env POUW_POLL_INTERVAL_MS");
}

/** Commander's accumulator for a repeatable option. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export const MAX_SOURCES = 16;

const SourceUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

function sourceUrlProblem(u: string): string | undefined {
  const r = SourceUrl.safeParse(u);
  if (!r.success) return r.error.issues[0]!.message;
  const url = new URL(u);
  if (url.search !== "" || url.hash !== "" || /[?#]/.test(u)) return "must not have a query or fragment";
  if (url.username !== "" || url.password !== "") return "must not carry credentials";
  return undefined;
}

/**
 * The remote sources from `--source` (repeatable; given flags replace the environment) or POUW_SOURCES
 * (comma-separated), and the per-attempt timeout. Throws ConfigError naming the bad URL.
 */
export function parseSources(flags: Pick<ConfigFlags, "source" | "sourceTimeout">, env: NodeJS.ProcessEnv = process.env): { sources: readonly string[]; sourceTimeoutMs: number } {
  const given = flags.source ?? (env.POUW_SOURCES ?? "").split(",").map((u) => u.trim()).filter((u) => u !== "");
  if (given.length > MAX_SOURCES) throw new ConfigError(`--source / POUW_SOURCES: at most ${MAX_SOURCES} sources, got ${given.length}`);
  const sources: string[] = [];
  for (const u of given) {
    const problem = sourceUrlProblem(u);
    if (problem) throw new ConfigError(`--source / POUW_SOURCES: ${JSON.stringify(u)} ${problem}`);
    const normalized = u.replace(/\/+$/, "");
    if (!sources.includes(normalized)) sources.push(normalized);
  }
  const timeoutText = flags.sourceTimeout ?? env.POUW_SOURCE_TIMEOUT_MS ?? "30000";
  if (!/^[1-9][0-9]{0,6}$/.test(timeoutText) || Number(timeoutText) < 100) {
    throw new ConfigError(`--source-timeout / POUW_SOURCE_TIMEOUT_MS: must be milliseconds between 100 and 9999999, got ${JSON.stringify(timeoutText)}`);
  }
  return { sources: Object.freeze(sources), sourceTimeoutMs: Number(timeoutText) };
}

const list = (text: string | undefined) => (text ?? "").split(",").map((u) => u.trim()).filter((u) => u !== "");

/**
 * The IPFS node's config from `--ipfs`, `--ipfs-peer`, `--ipfs-listen`, `--ipfs-timeout` (or POUW_IPFS*); undefined
 * without --ipfs. The timeout defaults to `defaultTimeoutMs` (the --source-timeout).
 */
export function parseIpfs(flags: Pick<ConfigFlags, "ipfs" | "ipfsPeer" | "ipfsListen" | "ipfsTimeout">, stateDir: string, env: NodeJS.ProcessEnv = process.env, defaultTimeoutMs = 30_000): IpfsConfig | undefined {
  const envOn = env.POUW_IPFS;
  if (envOn !== undefined && !["", "0", "1", "true", "false"].includes(envOn)) throw new ConfigError(`POUW_IPFS: must be 1 or 0, got ${JSON.stringify(envOn)}`);
  const on = flags.ipfs === true || envOn === "1" || envOn === "true";
  const peers = flags.ipfsPeer ?? list(env.POUW_IPFS_PEERS);
  const listen = flags.ipfsListen ?? list(env.POUW_IPFS_LISTEN);
  if (!on) {
    if (flags.ipfsPeer || flags.ipfsListen || flags.ipfsTimeout) throw new ConfigError(`${flags.ipfsPeer ? "--ipfs-peer" : flags.ipfsListen ? "--ipfs-listen" : "--ipfs-timeout"} needs --ipfs`);
    return undefined;
  }
  const timeoutText = flags.ipfsTimeout ?? env.POUW_IPFS_TIMEOUT_MS ?? String(defaultTimeoutMs);
  if (!/^[1-9][0-9]{0,6}$/.test(timeoutText) || Number(timeoutText) < 100) {
    throw new ConfigError(`--ipfs-timeout / POUW_IPFS_TIMEOUT_MS: must be milliseconds between 100 and 9999999, got ${JSON.stringify(timeoutText)}`);
  }
  if (peers.length > MAX_SOURCES) throw new ConfigError(`--ipfs-peer / POUW_IPFS_PEERS: at most ${MAX_SOURCES} peers, got ${peers.length}`);
  try {
    for (const p of peers) checkMultiaddr(p, { peer: true });
    for (const l of listen) checkMultiaddr(l, { peer: false });
  } catch (err) {
    throw new ConfigError(`--ipfs-peer / --ipfs-listen: ${(err as Error).message}`, { cause: err });
  }
  return Object.freeze({ dir: join(stateDir, "ipfs"), listen: Object.freeze([...new Set(listen)]), peers: Object.freeze([...new Set(peers)]), timeoutMs: Number(timeoutText) });
}

function readPassword(flags: ConfigFlags, env: NodeJS.ProcessEnv): string {
  if (flags.passwordFile) {
    try {
      return readFileSync(flags.passwordFile, "utf8").replace(/\r?\n$/, "");
    } catch (err) {
      throw new ConfigError(`cannot read --password-file ${flags.passwordFile}`, { cause: err });
    }
  }
  const pw = env.POUW_KEYSTORE_PASSWORD;
  if (pw === undefined) throw new ConfigError("a keystore needs a password: --password-file FILE or env POUW_KEYSTORE_PASSWORD");
  return pw;
}

function keySource(flags: ConfigFlags, env: NodeJS.ProcessEnv): KeySource {
  const keystore = flags.keystore ?? env.POUW_KEYSTORE;
  const hardhat = flags.hardhatKeystore ?? env.POUW_HARDHAT_KEYSTORE;
  const raw = flags.privateKey ?? env.POUW_PRIVATE_KEY;
  const given = [keystore && "--keystore", hardhat && "--hardhat-keystore", raw && "--private-key"].filter(Boolean);
  if (given.length > 1) throw new ConfigError(`choose one key source, got ${given.join(" and ")}`);
  if (keystore) return { kind: "keystore", path: resolve(keystore), password: readPassword(flags, env) };
  if (hardhat) {
    const file = flags.hardhatKeystoreFile ?? env.POUW_HARDHAT_KEYSTORE_FILE;
    return { kind: "hardhat-keystore", name: hardhat, path: file ? resolve(file) : undefined, password: readPassword(flags, env) };
  }
  if (raw) {
    const key = raw.startsWith("0x") ? raw : `0x${raw}`;
    if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new ConfigError("--private-key must be 32 bytes of hex");
    return { kind: "private-key", key: key as Hex };
  }
  return { kind: "none" };
}

/** A command's own defaults, below its flags and the environment (`pouw auditor run` logs at info). */
export type ConfigDefaults = { logLevel?: Config["logLevel"] };

/**
 * Parses flags and environment into the Config. Throws ConfigError (an InputError: CLI exit 2) naming
 * the offending flag. The dev-chain-only rule for --private-key is enforced when the key is loaded
 * (keys.ts), because it needs the chain id.
 */
export function parseConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env, defaults: ConfigDefaults = {}): Config {
  const r = Raw.safeParse({
    rpcUrl: flags.rpc ?? env.POUW_RPC_URL ?? "http://127.0.0.1:8545",
    stateDir: flags.stateDir ?? env.POUW_STATE_DIR ?? ".pouw",
    logLevel: flags.logLevel ?? env.POUW_LOG_LEVEL ?? defaults.logLevel ?? "warn",
    logFormat: flags.logFormat ?? env.POUW_LOG_FORMAT ?? "auto",
    confirmations: flags.confirmations ?? env.POUW_CONFIRMATIONS ?? "1",
    pollIntervalMs: flags.pollInterval ?? env.POUW_POLL_INTERVAL_MS ?? "1000",
  });
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = String(issue.path[0]);
    throw new ConfigError(`${FLAG_OF[field] ?? field}: ${issue.message}`);
  }
  const stateDir = resolve(r.data.stateDir);
  const storeDir = resolve(flags.store ?? env.POUW_STORE_DIR ?? join(stateDir, "store"));
  const sources = parseSources(flags, env);
  const config: Config = {
    rpcUrl: r.data.rpcUrl,
    stateDir,
    deploymentPath: resolve(flags.deployment ?? env.POUW_DEPLOYMENT ?? join(stateDir, "deployment.json")),
    storeDir,
    boardDir: join(storeDir, "..", "board"),
    ...sources,
    ipfs: parseIpfs(flags, stateDir, env, sources.sourceTimeoutMs),
    key: Object.freeze(keySource(flags, env)),
    logLevel: r.data.logLevel,
    logFormat: r.data.logFormat,
    confirmations: r.data.confirmations,
    pollIntervalMs: r.data.pollIntervalMs,
  };
  return Object.freeze(config);
}
