/**
 * Shared set-up of the bot dispute tests: an in-process market with a DisputeGame (panel of 3), four bonded auditors
 * (dev accounts 5..8) and a stale:2 provider that committed every segment of examples/tiny.json (audit rate 1).
 * `bot(i)` is auditor i's ChallengerBot over the shared store and board, with its own SQLite file and ballots.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { maxUint256, parseEther, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { BotDb } from "../../verifier/src/bot/db.ts";
import { isSampled } from "../../verifier/src/bot/sampler.ts";
import { chainDisputeHooks, ChallengerBot } from "../../verifier/src/bot/index.ts";
import {
  acceptJob,
  approveToken,
  DEFAULT_ACTIVATION_DELAY_SECONDS,
  DEFAULT_DISPUTE_PARAMS,
  deployDisputeGame,
  deployMarket,
  minAuditorExitDelaySeconds,
  devAccount,
  getDispute,
  getJobDisputes,
  mintTestToken,
  postBond,
  providerClients,
  stakeDeposit,
  type ChainClients,
  type Deployment,
  type JobTerms,
  disputeGameAbi,
  getFaultAppeal,
} from "../../verifier/src/chain/index.ts";
import { registerManifestCorpora } from "../../verifier/src/market/contributor.ts";
import { dataTermsFor } from "../../verifier/src/market/data-terms.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { circuitPostOption } from "../../verifier/src/market/circuit-job.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { parseManifest, parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));
export const manifest = parseManifest({ ...tiny, policy: { ...tiny.policy, auditRate: 1 } });

/**
 * `window`: the commit and reveal windows, seconds. `auditorTokens(i)`: tokens minted to auditor i before it bonds
 * `auditorBond` (default 5; tokens default 20: 15 left for challenge deposits; 5 leaves an auditor bonded with nothing
 * for a deposit). `cheatSegments`:
 * the provider commits only this many segments and then stops (abandons the job); default all. `strategy`: the
 * provider's cheat (default stale:2). `auditRate`: the manifest's audit rate (default 1). `contributor`: a dev account
 * index: the manifest's corpus pays that account, which registers it in DataRegistry, and the job is posted with data
 * terms (10% of the payment to the corpus at finalize); default none (no terms). `base`: the manifest JSON (default
 * examples/tiny.json); a linear-tile one is posted with its circuit terms (market/circuit-job.ts circuitPostOption).
 * `requiredStake`: the job's stake instead of the quoted one (wei). `train: false`: the provider accepts the job but does
 * not run `runProviderJob` (the test commits segments itself).
 */
export async function cheatingJob(tag: string, window: number, o: CheatingJobOptions = {}) {
  return postCheatingJob(await botMarket(window, o), tag, o);
}

export type CheatingJobOptions = { auditorTokens?: (i: number) => bigint; auditorBond?: bigint; cheatSegments?: number; strategy?: string; auditRate?: number; contributor?: number; base?: typeof tiny; requiredStake?: bigint; content?: readonly Uint8Array[]; train?: boolean; challengeWindow?: number };

/**
 * The market half of cheatingJob: a fresh in-process network with the market and its DisputeGame deployed, the provider
 * (dev account 2) staked, the four auditors bonded and the activation delay passed. A file that posts several jobs
 * deploys once and reverts to a snapshot taken here before each (`conn.networkHelpers.takeSnapshot()`), then calls
 * postCheatingJob.
 */
export async function botMarket(window: number, o: Pick<CheatingJobOptions, "auditorTokens" | "auditorBond"> = {}) {
  const conn = await network.create();
  const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
  const [admin, buyer, cheat] = [mk(0), mk(1), mk(2)];
  const auditors = [mk(5), mk(6), mk(7), mk(8)];
  const params = { ...DEFAULT_DISPUTE_PARAMS, panelSize: 3, seedDelayBlocks: 1, commitWindowSeconds: window, revealWindowSeconds: window, panelForfeit: parseEther("1") };
  // the shortest exit delay DisputeGame accepts (it includes a 1-day margin, so it also covers the 1-day attestation window)
  const market = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: minAuditorExitDelaySeconds(params) });
  const game = await deployDisputeGame(admin, { deployment: market, params });
  const d: Deployment = { ...market, disputeGame: game.disputeGame };
  for (const c of [buyer, cheat]) await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("100") });
  await approveToken(cheat, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
  await stakeDeposit(cheat, { stakeVault: d.stakeVault, amount: parseEther("10") });
  for (const [i, a] of auditors.entries()) {
    await mintTestToken(a, { token: d.token, to: a.account.address, amount: o.auditorTokens?.(i) ?? parseEther("20") });
    await approveToken(a, { token: d.token, spender: d.auditorRegistry, amount: maxUint256 });
    await postBond(a, { auditorRegistry: d.auditorRegistry, amount: o.auditorBond ?? parseEther("5") });
  }
  // the bonds count for panel snapshots (taken at each challenge) once the activation delay (1 hour) has passed
  await conn.networkHelpers.time.increase(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));
  return { conn, mk, admin, buyer, cheat, auditors, d };
}

export type BotMarket = Awaited<ReturnType<typeof botMarket>>;

/**
 * One botMarket for the enclosing describe: deployed in a `before` hook, and reverted to that snapshot before each case,
 * so every case posts its own job (job 1 again) on the same deployment and the cases stay independent. Returns the
 * market's getter (valid inside the cases).
 */
export function botMarketPerFile(window: number, o: Pick<CheatingJobOptions, "auditorTokens" | "auditorBond"> = {}): () => BotMarket {
  let market: BotMarket | undefined;
  let deployed: Awaited<ReturnType<BotMarket["conn"]["networkHelpers"]["takeSnapshot"]>>;
  before(async () => {
    market = await botMarket(window, o);
    deployed = await market.conn.networkHelpers.takeSnapshot();
  });
  beforeEach(async () => deployed.restore());
  return () => {
    if (!market) throw new Error("botMarketPerFile: the market is deployed in a before hook; use it inside a case");
    return market;
  };
}

/**
 * The job half of cheatingJob on `market` (botMarket): posts the manifest's job, the provider accepts it and runs
 * `strategy`, in a fresh directory (store, board, the provider's state, each bot's SQLite file and ballots).
 * `o.auditorTokens` belongs to botMarket and is ignored here.
 */
export async function postCheatingJob(market: BotMarket, tag: string, o: Omit<CheatingJobOptions, "auditorTokens"> = {}) {
  const { conn, mk, admin, buyer, cheat, auditors, d } = market;
  const payout = o.contributor === undefined ? undefined : devAccount(o.contributor).address;
  const base = o.base ?? tiny;
  const m =
    o.auditRate === undefined && payout === undefined && o.base === undefined
      ? manifest
      : parseManifest({
          ...base,
          ...(payout === undefined ? {} : { corpora: base.corpora.map((c: object) => ({ ...c, payoutAddress: payout })) }),
          policy: { ...base.policy, auditRate: o.auditRate ?? 1 },
        });
  const dir = mkdtempSync(join(tmpdir(), `pouw-bot-${tag}-`));
  const store = new LocalDirStore(join(dir, "store"));
  const board = new SegmentBoard(join(dir, "board"), store);
  for (const bytes of o.content ?? []) await store.put(bytes);
  let terms: JobTerms | undefined;
  if (o.contributor !== undefined) {
    await registerManifestCorpora(mk(o.contributor), d.dataRegistry!, m);
    const t = await dataTermsFor(buyer.public, d, m, { mode: "require" });
    if (t.attached) terms = t.terms;
  }
  const quoted = await jobPolicyFor(m, terms ? { dataShareBps: terms.dataShareBps } : {});
  const payment = quoted.payment;
  const policy = {
    ...quoted.policy,
    ...(o.requiredStake === undefined ? {} : { requiredStake: o.requiredStake }),
    ...(o.challengeWindow === undefined ? {} : { challengeWindow: o.challengeWindow }),
  };
  const circuit = m.model.arch === "linear-tile" ? circuitPostOption(d, m) : undefined;
  const { jobId } = await postJob(buyer, d, store, m, policy, payment, { ...(terms ? { terms } : {}), ...(circuit ? { circuit } : {}) });
  await acceptJob(cheat, { jobMarket: d.jobMarket, jobId });
  if (o.train !== false) await runProviderJob({ clients: cheat, deployment: d, store, board, stateDir: join(dir, "state") }, jobId, {
    strategy: parseStrategy(o.strategy ?? "stale:2"),
    ...(o.cheatSegments === undefined ? {} : { maxSegments: o.cheatSegments }),
  });

  const hooks = (a: ChainClients, i: number, maxChallengeRounds?: number) =>
    chainDisputeHooks({ clients: a, deployment: d, ballotsDir: join(dir, `ballots${i}`), ...(maxChallengeRounds === undefined ? {} : { maxChallengeRounds }) });
  const bot = (i: number, maxChallengeRounds?: number) =>
    new ChallengerBot({ clients: auditors[i]!, deployment: d, store, board, dbPath: join(dir, `bot${i}.sqlite`), dispute: hooks(auditors[i]!, i, maxChallengeRounds) });
  const disputes = () => getJobDisputes(admin.public, { disputeGame: d.disputeGame!, jobId, fromBlock: BigInt(d.startBlock) });
  const dispute = (disputeId: bigint) => getDispute(admin.public, { disputeGame: d.disputeGame!, disputeId });
  return { dir, store, board, conn, admin, buyer, cheat, auditors, d, policy, payment, manifest: m, jobId, hooks, bot, disputes, dispute, mk };
}

export type CheatingJob = Awaited<ReturnType<typeof cheatingJob>>;

/**
 * Gives each of the `bots` bots of a job a sampling secret under which none of its `segments` segments is sampled at
 * `rate` (seeded search, not luck), written into the bot's SQLite file in `dir` before the bot opens it: the bots then
 * screen every segment and audit none.
 */
export function unsampledSecrets(dir: string, jobMarket: Hex, jobId: bigint, segments: number, rate: number, bots = 4): void {
  for (let i = 0; i < bots; i++) {
    let n = 0;
    let secret = "";
    do secret = (BigInt(i) * 1_000_000n + BigInt(n++)).toString(16).padStart(64, "0");
    while ([...Array(segments).keys()].some((s) => isSampled(secret, jobMarket, jobId, s, rate)));
    const db = new BotDb(join(dir, `bot${i}.sqlite`));
    db.setMeta("samplingSecret", secret);
    db.close();
  }
}

/**
 * Lets every open provider appeal window of a unanimous first-round Fault on `disputeGame` pass (the tests' cheats do
 * not appeal), so the bots' `resolve:D:settle` intents settle it on their next tick.
 */
export async function passAppealWindows(
  conn: { networkHelpers: { time: { increaseTo: (t: bigint) => Promise<void> } } },
  client: PublicClient<Transport, Chain>,
  disputeGame: Address,
): Promise<void> {
  const n = await client.readContract({ address: disputeGame, abi: disputeGameAbi, functionName: "disputeCount" });
  for (let id = 1n; id <= n; ++id) {
    const { deadline } = await getFaultAppeal(client, { disputeGame, disputeId: id });
    if (deadline !== undefined && deadline >= (await client.getBlock()).timestamp) await conn.networkHelpers.time.increaseTo(deadline + 1n);
  }
}
