/**
 * A market on a node reached over HTTP (anvil, or any dev chain with the 31337 dev accounts funded), laid out as the
 * CLI lays out a state directory, so that `pouw auditor run --state-dir DIR` finds everything it reads there:
 * `DIR/deployment.json`, the content store `DIR/store` and the segment board `DIR/board`. The buyer and the providers
 * act in-process through verifier/src/chain and market/ (the parties the bench does not measure); the bots are the
 * measured part and run as the service a user runs (`startBotService`: `node verifier/src/cli/pouw.ts auditor run`,
 * one child process per bot, `--json` records on its stdout).
 *
 * Accounts: dev account 0 deploys, 1 is the buyer, 2.. the providers, then the auditors. Dev accounts past the node's
 * funded ones get ETH from account 0.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { maxUint256, parseEther, toHex, type Hex } from "viem";
import {
  acceptJob,
  approveToken,
  DEFAULT_DISPUTE_PARAMS,
  deployDisputeGame,
  deployMarket,
  devAccount,
  httpClients,
  minAuditorExitDelaySeconds,
  mintTestToken,
  postBond,
  stakeDeposit,
  writeDeployment,
  type ChainClients,
  type Deployment,
} from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { parseManifest, parseStrategy, type Manifest } from "../../verifier/src/ml/index.ts";
import { runProviderJob, type RunJobResult } from "../../verifier/src/provider/run-job.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { rpc } from "./anvil.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const POUW_CLI = join(ROOT, "verifier/src/cli/pouw.ts");

/** examples/tiny.json (12 steps, 3 segments of 4) at `auditRate`. */
export function tinyManifest(auditRate: number): Manifest {
  const tiny = JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8"));
  return parseManifest({ ...tiny, policy: { ...tiny.policy, auditRate } });
}

export const devKey = (i: number): Hex => toHex(devAccount(i).getHdKey().privateKey!);

export type ServiceMarketOptions = {
  providers: number;
  auditors: number;
  /** DisputeGame commit and reveal windows, seconds. */
  windowSeconds: number;
  /** Panel members per dispute (odd; default 3: four bonded auditors decide a dispute). */
  panelSize?: number;
  /** Tokens minted to each auditor before it bonds 5 (the rest pays challenge deposits). */
  auditorTokens?: bigint;
  pollingIntervalMs?: number;
};

export type ServiceMarket = Awaited<ReturnType<typeof deployServiceMarket>>;

/** Deploys the market and its DisputeGame (panel of 3), stakes the providers, bonds the auditors, passes the activation delay. */
export async function deployServiceMarket(url: string, stateDir: string, o: ServiceMarketOptions) {
  const chainId = Number(await rpc<string>(url, "eth_chainId"));
  const mk = (i: number): ChainClients => httpClients(url, chainId, { account: devAccount(i), pollingIntervalMs: o.pollingIntervalMs ?? 50 });
  const admin = mk(0);
  const buyer = mk(1);
  const providerIdx = [...Array(o.providers).keys()].map((i) => 2 + i);
  const auditorIdx = [...Array(o.auditors).keys()].map((i) => 2 + o.providers + i);
  for (const i of [1, ...providerIdx, ...auditorIdx]) {
    const a = devAccount(i).address;
    if ((await admin.public.getBalance({ address: a })) < parseEther("10")) {
      await admin.public.waitForTransactionReceipt({ hash: await admin.wallet.sendTransaction({ to: a, value: parseEther("100"), chain: admin.wallet.chain, account: admin.account }) });
    }
  }
  const params = { ...DEFAULT_DISPUTE_PARAMS, panelSize: o.panelSize ?? 3, seedDelayBlocks: 1, commitWindowSeconds: o.windowSeconds, revealWindowSeconds: o.windowSeconds, panelForfeit: parseEther("1") };
  const market = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: minAuditorExitDelaySeconds(params) });
  const game = await deployDisputeGame(admin, { deployment: market, params });
  const { gasUsed: _gas, ...rest } = market;
  const d: Deployment = { ...rest, disputeGame: game.disputeGame };
  await writeDeployment(join(stateDir, "deployment.json"), d);
  await mintTestToken(buyer, { token: d.token, to: buyer.account.address, amount: parseEther("1000000") });
  const providers = providerIdx.map(mk);
  for (const p of providers) {
    await mintTestToken(p, { token: d.token, to: p.account.address, amount: parseEther("100000") });
    await approveToken(p, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
    await stakeDeposit(p, { stakeVault: d.stakeVault, amount: parseEther("50000") });
  }
  const auditors = auditorIdx.map(mk);
  for (const a of auditors) {
    await mintTestToken(a, { token: d.token, to: a.account.address, amount: o.auditorTokens ?? parseEther("1000") });
    await approveToken(a, { token: d.token, spender: d.auditorRegistry, amount: maxUint256 });
    await postBond(a, { auditorRegistry: d.auditorRegistry, amount: parseEther("5") });
  }
  // the bonds count for panel snapshots once the activation delay (1 hour) has passed
  await advance(url, 3601);
  const store = new LocalDirStore(join(stateDir, "store"));
  const board = new SegmentBoard(join(stateDir, "board"), store);
  return { url, chainId, stateDir, d, admin, buyer, providers, auditors, providerIdx, auditorIdx, store, board, mk };
}

/** Moves the node's clock `seconds` forward and mines a block (evm_increaseTime + evm_mine). */
export async function advance(url: string, seconds: number): Promise<void> {
  await rpc(url, "evm_increaseTime", [seconds]);
  await rpc(url, "evm_mine", []);
}

/** Posts one job of `manifest` (its quoted policy and payment) and has `provider` accept it. */
export async function postAcceptedJob(m: ServiceMarket, manifest: Manifest, provider: ChainClients): Promise<bigint> {
  const quoted = await jobPolicyFor(manifest, {});
  const { jobId } = await postJob(m.buyer, m.d, m.store, manifest, quoted.policy, quoted.payment, {});
  await acceptJob(provider, { jobMarket: m.d.jobMarket, jobId });
  return jobId;
}

/** Trains and commits `jobId` as `provider` with `strategy` ("honest", "quarter-batch", "skip:0.3", ...). */
export function trainJob(m: ServiceMarket, provider: ChainClients, jobId: bigint, strategy: string, stateTag: string, maxSegments?: number): Promise<RunJobResult> {
  return runProviderJob({ clients: provider, deployment: m.d, store: m.store, board: m.board, stateDir: join(m.stateDir, "providers", stateTag) }, jobId, {
    strategy: parseStrategy(strategy),
    ...(maxSegments === undefined ? {} : { maxSegments }),
  });
}

/** One `--json` log record of a bot service (pino fields; `event` on the records a program acts on). */
export type BotRecord = Record<string, unknown> & { event?: string; msg?: string; level?: number };

export type BotService = {
  child: ChildProcess;
  records: BotRecord[];
  /** Resolves with the first record (already seen or to come) that `pred` accepts; rejects after `timeoutMs` or when the process exits. */
  waitFor: (pred: (r: BotRecord) => boolean, timeoutMs: number, what: string) => Promise<BotRecord>;
  /** Resident set size of the bot process, bytes (Linux /proc). */
  rssBytes: () => number | undefined;
  stderr: () => string;
  /** SIGTERM (the bot finishes its tick and exits), SIGKILL after 10 s; resolves once the process has exited. */
  stop: () => Promise<void>;
};

/** A bot service that did not log what was waited for. */
export class BotServiceError extends Error {
  override name = "BotServiceError";
}

/**
 * Starts `pouw auditor run` for dev account `account` against `rpcUrl` (a proxy in front of the node, to count its
 * requests) with the market's state directory, `--json` records on stdout, `--poll-interval pollMs`.
 */
export function startBotService(m: Pick<ServiceMarket, "stateDir">, account: number, rpcUrl: string, o: { pollMs?: number; extra?: readonly string[] } = {}): BotService {
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("POUW_")));
  const args = [POUW_CLI, "auditor", "run", "--rpc", rpcUrl, "--state-dir", m.stateDir, "--private-key", devKey(account), "--poll-interval", String(o.pollMs ?? 250), "--heartbeat", "3600", "--json", ...(o.extra ?? [])];
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const records: BotRecord[] = [];
  const waiters = new Set<{ pred: (r: BotRecord) => boolean; resolve: (r: BotRecord) => void }>();
  let pending = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => {
    pending += d.toString();
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      let r: BotRecord;
      try {
        r = JSON.parse(line) as BotRecord;
      } catch {
        continue;
      }
      records.push(r);
      for (const w of waiters) if (w.pred(r)) {
        waiters.delete(w);
        w.resolve(r);
      }
    }
  });
  child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const waitFor = (pred: (r: BotRecord) => boolean, timeoutMs: number, what: string) => {
    const seen = records.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise<BotRecord>((resolve, reject) => {
      const w = { pred, resolve: (r: BotRecord) => (clearTimeout(timer), resolve(r)) };
      const fail = (why: string) => {
        waiters.delete(w);
        const tail = records.slice(-8).map((r) => `${r.event ?? ""} ${r.msg ?? ""}`).join(" | ");
        reject(new BotServiceError(`bot ${account}: ${why} waiting for ${what}; last records: ${tail}; stderr: ${err.slice(-1500)}`));
      };
      const timer = setTimeout(() => fail(`${timeoutMs} ms passed`), timeoutMs);
      waiters.add(w);
      void exited.then(() => (waiters.has(w) ? (clearTimeout(timer), fail(`the process exited (${child.exitCode ?? child.signalCode})`)) : undefined));
    });
  };
  const rssBytes = () => {
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1];
      return kb === undefined ? undefined : Number(kb) * 1024;
    } catch {
      return undefined;
    }
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const kill = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.kill("SIGTERM");
    await exited;
    clearTimeout(kill);
  };
  return { child, records, waitFor, rssBytes, stderr: () => err, stop };
}
