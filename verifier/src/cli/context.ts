/**
 * What every chain command builds from its flags: the parsed config (once), the log level, the viem
 * clients for the configured RPC and key, the deployment addresses, the content store and the board (local,
 * layered over the remote `--source`s when there are any).
 *
 * NOTE: the chain actions (chain/index.ts, its ABIs), the key loader and the content stores are imported inside the
 * functions that build a context, never at the top: a command file that imports its helpers from here pays for them
 * only when its handler runs, so `--help` and argument errors do not (bench/cli.ts).
 */
import { getAddress, isAddress, parseUnits, type Address, type Chain, type PublicClient, type Transport } from "viem";
import { addConfigOptions, parseConfig, type Config, type ConfigDefaults, type ConfigFlags } from "../config/index.ts";
import { withConfig, withReadConfig, type ReadFlags } from "./options.ts";
import type { TxRef } from "../chain/send.ts";
import type { ChainClients, Deployment } from "../chain/index.ts";
import { InputError } from "../errors/index.ts";
import { configureLogging } from "../log/index.ts";
import type { BoardSource } from "../board/index.ts";
import type { IpfsNode } from "../store/ipfs.ts";
import type { PeerDiscovery } from "../store/ipfs-peers.ts";
import type { IpfsConfig } from "../config/index.ts";
import { onCommandEnd } from "./cleanup.ts";
import type { SegmentBoard } from "../market/segment-traces.ts";
import type { ContentSource, ContentStore, LocalDirStore } from "../store/index.ts";

/** The chain actions, loaded by the first context a handler builds. */
const chain = () => import("../chain/index.ts");

// the flag definitions live in options.ts (no viem); re-exported for the handlers that import them from here
export { addConfigOptions, withConfig, withReadConfig };

export type CliContext = {
  config: Config;
  chainId: number;
  clients: ChainClients;
  deployment: Deployment;
  store: ContentStore;
  board: SegmentBoard;
  /** The command's IPFS node (with --ipfs). */
  ipfs?: IpfsNode | undefined;
};

/**
 * The content store and segment board of the config: the local ones, read first, then (with `--ipfs`) the peers of
 * the command's IPFS node, then each `--source` in order (fetched content is cached in the local store; remote
 * board pointers are not copied). The IPFS node serves the local store and board while the command runs and is
 * stopped when it ends (cleanup.ts).
 */
export async function contentContext(config: Pick<Config, "storeDir" | "boardDir" | "sources" | "sourceTimeoutMs" | "ipfs">): Promise<{ store: ContentStore; board: SegmentBoard; ipfs: IpfsNode | undefined }> {
  const [{ LocalDirStore }, { HttpContentStore }, { LayeredStore }, { HttpBoard }, { SegmentBoard }] = await Promise.all([
    import("../store/index.ts"),
    import("../store/http.ts"),
    import("../store/layered.ts"),
    import("../board/http.ts"),
    import("../market/segment-traces.ts"),
  ]);
  const local = new LocalDirStore(config.storeDir);
  const options = { timeoutMs: config.sourceTimeoutMs };
  const ipfs = config.ipfs ? await startCommandIpfs(local, config.ipfs, config.boardDir) : undefined;
  const remotes: ContentSource[] = [...(ipfs ? [ipfs.source()] : []), ...config.sources.map((u) => new HttpContentStore(u, options))];
  const boards: BoardSource[] = [...(ipfs ? [ipfs.board()] : []), ...config.sources.map((u) => new HttpBoard(u, options))];
  const store = remotes.length === 0 ? local : new LayeredStore(local, remotes);
  return { store, board: new SegmentBoard(config.boardDir, store, boards), ipfs };
}

/** Starts the command's IPFS node (store/ipfs.ts), stopped when the command ends; says its addresses on stderr. */
export async function startCommandIpfs(local: LocalDirStore, ipfs: IpfsConfig, boardDir: string): Promise<IpfsNode> {
  const [{ startIpfsNode }, { LocalDirBoard }] = await Promise.all([import("../store/ipfs.ts"), import("../board/index.ts")]);
  const node = await startIpfsNode(local, { dir: ipfs.dir, listen: ipfs.listen, peers: ipfs.peers, timeoutMs: ipfs.timeoutMs, board: new LocalDirBoard(boardDir) });
  onCommandEnd(() => node.stop());
  process.stderr.write(`pouw: IPFS node ${node.peerId} at ${node.multiaddrs().join(" ")} (${node.connectedPeers().length} of ${ipfs.peers.length} peers connected)\n`);
  return node;
}

/**
 * Discovery from the chain (store/ipfs-peers.ts): dials the IPFS nodes the given accounts announced on the
 * deployment's PeerDirectory. Undefined without --ipfs; a deployment from before the PeerDirectory says so once
 * (then only --ipfs-peer is dialled).
 */
export async function peerDiscovery(ctx: { clients: { public: PublicClient<Transport, Chain> }; deployment: Deployment; ipfs?: IpfsNode | undefined }): Promise<PeerDiscovery | undefined> {
  const node = ctx.ipfs;
  if (!node) return undefined;
  const { peerDirectory, startBlock } = ctx.deployment;
  if (!peerDirectory) {
    process.stderr.write("pouw: the deployment has no PeerDirectory (deployed before it existed): no discovery from the chain, pass --ipfs-peer\n");
    return undefined;
  }
  const [{ PeerDiscovery }, { getAnnouncedPeers }] = await Promise.all([import("../store/ipfs-peers.ts"), import("../chain/getAnnouncedPeers.ts")]);
  return new PeerDiscovery(node, (account) => getAnnouncedPeers(ctx.clients.public, { peerDirectory, account, fromBlock: BigInt(startBlock) }));
}

/**
 * Announces the state dir's IPFS node under the command's account on the PeerDirectory, unless its latest
 * announcement already lists the same addresses. The node announced is the one with the state dir's key: this
 * command's, or the one of a `pouw serve --ipfs` on the same state dir (its addresses file), which outlives it.
 * Returns the transaction, or undefined when nothing was sent.
 */
export async function announceStateNode(ctx: CliContext): Promise<TxRef | undefined> {
  const node = ctx.ipfs;
  const { peerDirectory, startBlock } = ctx.deployment;
  if (!node || !peerDirectory) return undefined;
  const addrs = await node.stateDirAddrs();
  if (addrs.length === 0) {
    process.stderr.write("pouw: the state dir's IPFS node runs in another process that wrote no addresses: nothing announced\n");
    return undefined;
  }
  const { getAnnouncedPeers, announcePeers, txRef } = await chain();
  const last = await getAnnouncedPeers(ctx.clients.public, { peerDirectory, account: ctx.clients.account.address, fromBlock: BigInt(startBlock) });
  if (last && last.multiaddrs.length === addrs.length && last.multiaddrs.every((a, i) => a === addrs[i])) return undefined;
  const tx = txRef("announce", await announcePeers(ctx.clients, { peerDirectory, multiaddrs: addrs }));
  process.stderr.write(`pouw: announced IPFS node ${addrs.join(" ")} on the PeerDirectory (block ${tx.blockNumber})\n`);
  return tx;
}

/** Config + log level and format only (for commands that need no chain). */
export function configFrom(flags: ConfigFlags, defaults: ConfigDefaults = {}): Config {
  const config = parseConfig(flags, undefined, defaults);
  configureLogging({ level: config.logLevel, format: config.logFormat });
  return config;
}

/** The chain id at the config's RPC, or one InputError line (exit 2) when it cannot be reached. */
export async function reachChain(config: Pick<Config, "rpcUrl">): Promise<number> {
  const { fetchChainId } = await chain();
  return fetchChainId(config.rpcUrl).catch((err: unknown) => {
    throw new InputError(`cannot reach the RPC at ${config.rpcUrl} (start \`npx hardhat node\` or pass --rpc)`, { cause: err });
  });
}

/** Decoded reverts from here on print amounts in the deployment token's symbol (chain/revertText.ts). */
async function useTokenSymbol(client: PublicClient<Transport, Chain>, d: Deployment): Promise<string> {
  const { getTokenSymbol, setRevertTokenSymbol } = await chain();
  const symbol = (await getTokenSymbol(client, { token: d.token })) ?? "tokens";
  setRevertTokenSymbol(symbol);
  return symbol;
}

/**
 * The deployment file at `path`, checked once against the chain: it is for chain `chainId` and every contract in it
 * reports the VERSION this pouw's ABIs were generated for (DeploymentVersionError otherwise).
 */
async function loadDeployment(client: PublicClient<Transport, Chain>, path: string, chainId: number): Promise<Deployment> {
  const { checkDeploymentVersions, readDeployment } = await chain();
  const deployment = await readDeployment(path, chainId);
  await checkDeploymentVersions(client, { deployment });
  return deployment;
}

export async function chainContext(
  flags: ConfigFlags,
  opts: { needDeployment?: boolean; defaults?: ConfigDefaults } = {},
): Promise<Omit<CliContext, "deployment"> & { deployment: Deployment | undefined }> {
  const config = configFrom(flags, opts.defaults);
  const chainId = await reachChain(config);
  const [{ loadAccount }, { httpClients }] = await Promise.all([import("../config/keys.ts"), chain()]);
  const account = await loadAccount(config, chainId);
  const clients = httpClients(config.rpcUrl, chainId, { account, confirmations: config.confirmations, pollingIntervalMs: config.pollIntervalMs });
  const deployment = opts.needDeployment === false ? undefined : await loadDeployment(clients.public, config.deploymentPath, chainId);
  return { config, chainId, clients, deployment, ...(await contentContext(config)) };
}

export async function marketContext(flags: ConfigFlags, defaults: ConfigDefaults = {}): Promise<CliContext & { symbol: string }> {
  const c = await chainContext(flags, { defaults });
  return { ...c, deployment: c.deployment!, symbol: await useTokenSymbol(c.clients.public, c.deployment!) };
}

/**
 * What a read-only command has: a public client (no wallet), the deployment, the content, the token symbol, and the
 * account it reports on: `--address`, else the key's address when a key is given, else none. It never needs a key.
 */
export type ReadContext = {
  config: Config;
  chainId: number;
  clients: { public: PublicClient<Transport, Chain> };
  deployment: Deployment;
  store: ContentStore;
  board: SegmentBoard;
  ipfs?: IpfsNode | undefined;
  symbol: string;
  address: Address | undefined;
};

export type { ReadFlags };

export async function readContext(flags: ReadFlags): Promise<ReadContext> {
  const config = configFrom(flags);
  const chainId = await reachChain(config);
  const [{ loadAccount }, { httpPublicClient }] = await Promise.all([import("../config/keys.ts"), chain()]);
  let address: Address | undefined;
  if (flags.address !== undefined) address = getAddress(parseAddress("--address", flags.address));
  // NOTE: a key is optional here; when one is given it only names the account, nothing is signed
  else if (config.key.kind !== "none") address = (await loadAccount(config, chainId)).address;
  const client = httpPublicClient(config.rpcUrl, chainId, { pollingIntervalMs: config.pollIntervalMs });
  const deployment = await loadDeployment(client, config.deploymentPath, chainId);
  return { config, chainId, clients: { public: client }, deployment, symbol: await useTokenSymbol(client, deployment), address, ...(await contentContext(config)) };
}

/** A basis-points flag: 0..10000, or undefined when not given. */
export function parseBps(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[0-9]{1,5}$/.test(v) || Number(v) > 10_000) throw new InputError(`${flag} must be basis points 0..10000, got ${JSON.stringify(v)}`);
  return Number(v);
}

/** A decimal token amount (18 decimals), e.g. "1.5". */
export function parseAmount(flag: string, text: string): bigint {
  if (!/^[0-9]+(\.[0-9]{1,18})?$/.test(text)) throw new InputError(`${flag} must be a decimal token amount like 10 or 0.5, got ${JSON.stringify(text)}`);
  const v = parseUnits(text, 18);
  if (v === 0n) throw new InputError(`${flag} must be positive`);
  return v;
}

export function parseJobId(text: string): bigint {
  if (!/^[1-9][0-9]{0,76}$/.test(text)) throw new InputError(`JOB must be a job id (1, 2, ...), got ${JSON.stringify(text)}`);
  return BigInt(text);
}

export function parseSeconds(flag: string, text: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(text)) throw new InputError(`${flag} must be a whole number of seconds > 0, got ${JSON.stringify(text)}`);
  return Number(text);
}

export function parseAddress(flag: string, text: string): Address {
  if (!isAddress(text)) throw new InputError(`${flag} must be an address, got ${JSON.stringify(text)}`);
  return text;
}

export const fmt = (wei: bigint) => {
  const s = wei.toString().padStart(19, "0");
  const whole = s.slice(0, -18);
  const frac = s.slice(-18).replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole;
};

/** A mined transaction in a command's output: `what tx 0x.. in block N`, and as --json carries it. */
export const txText = (t: TxRef) => `${t.what} tx ${t.hash} in block ${t.blockNumber}`;
export const txJson = (t: TxRef) => ({ what: t.what, hash: t.hash, blockNumber: t.blockNumber.toString() });
/** The lines of every transaction a command sent, for its text output. */
export const txLines = (txs: readonly TxRef[]) => txs.map((t) => `  ${txText(t)}\n`).join("");


/** Makes sure the account holds `amount` of the token and has approved `spender` for it (market/funding.ts). */
export async function ensureFunds(ctx: CliContext, spender: Address, amount: bigint, mint: boolean): Promise<TxRef[]> {
  const { ensureTokenFunds } = await import("../market/funding.ts");
  return ensureTokenFunds(ctx.clients, ctx.deployment, spender, amount, { mint });
}
