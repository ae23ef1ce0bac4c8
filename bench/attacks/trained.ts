/**
 * The attacks that need real training: a provider trains examples/tiny.json (MNIST MLP, 12 steps in
 * 3 segments of 4, audit rate 1) with a cheat strategy of the engine and commits every segment through
 * runProviderJob (or, for `copy`, commits a peer's re-keyed trace); four ChallengerBots (the code `pouw auditor run`
 * runs: bit-exact recompute from the committed checkpoints, challenge, panel duty, resolve, claims) catch it on the
 * same in-process network. The bots' clock is fake (backoff and heartbeat advance per round); their logs are silent,
 * except that row 10 keeps its first bot's error lines (the "CANNOT CHALLENGE" line it shows).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { getAddress, maxUint256, parseEther } from "viem";
import { chainDisputeHooks, ChallengerBot } from "../../verifier/src/bot/index.ts";
import {
  acceptJob,
  approveToken,
  commitSegment,
  concede,
  DEFAULT_DISPUTE_PARAMS,
  finalize,
  getAuditorFunds,
  getDispute,
  getJob,
  getJobDisputes,
  getOpenJobIds,
  mintTestToken,
  type DisputeParams,
  type JobPolicy,
} from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { publishManifest } from "../../verifier/src/market/manifest-store.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { createRun, deploymentSalt, parseManifest, parseStrategy } from "../../verifier/src/ml/index.ts";
import { segmentStateHashes } from "../../verifier/src/ml/trace-file.ts";
import { train } from "../../verifier/src/ml/train.ts";
import { loadDetectionMatrix, packageDetectionPath } from "../../verifier/src/policy/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { HttpContentStore } from "../../verifier/src/store/http.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { LayeredStore } from "../../verifier/src/store/layered.ts";
import { AttackSucceeded, challengeStep, declaredTrace, everyone, measure, newWorld, snapshot, tokens, type Actor, type ActorName, type Row, type Sides } from "./world.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));
/** examples/tiny.json audited at rate 1 (every bot audits every segment), as the bot tests and the demo's plant job do. */
export const MANIFEST = parseManifest({ ...tiny, policy: { ...tiny.policy, auditRate: 1 } });
/** The `play` column of these rows: real training with the named strategy, caught by the bots. */
const TRAINED = "trained";

/** The bot tests' dispute parameters: panel of 3, 1-block seed, 10-minute vote windows, 1-token forfeit. */
const BOT_PARAMS: DisputeParams = { ...DEFAULT_DISPUTE_PARAMS, seedDelayBlocks: 1, commitWindowSeconds: 600, revealWindowSeconds: 600, panelForfeit: parseEther("1") };
const BOTS = ["H1", "H2", "H3", "H4"] as const;

export type TrainedAttack = {
  attack: string;
  /** An engine strategy (`skip:0.25`, ...) or `copy` (a peer's trace re-keyed). */
  strategy: string;
  /**
   * `leaves`: the provider publishes no board records; `all`: no board records and no checkpoints (absent: not found
   * anywhere); `unreachable`: the same, and the bots' only other source, the provider's server, is down (every read
   * of a checkpoint is SourceUnavailableError, never "not found").
   */
  withhold?: "leaves" | "all" | "unreachable";
  /** The README's auditor set-up: deployment defaults, every bot's balance bonded (`auditor bond 100 --mint`), one bot funded later. */
  readme?: boolean;
};

let root: string | undefined;
const workDir = (tag: string) => {
  root ??= mkdtempSync(join(tmpdir(), "pouw-bench-attacks-"));
  const dir = join(root, tag.replace(/[^a-z0-9]+/gi, "-"));
  mkdirSync(dir, { recursive: true });
  return dir;
};

/** Removes the rows' stores, boards and bot databases (a temporary directory). */
export function removeWorkDirs(): void {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
}

type StageOptions = { tag: string; readme?: boolean; extraSide?: readonly ActorName[]; unreachable?: boolean };

/**
 * A fresh deployment with the bot tests' parameters (or the README's: deployment defaults, bonds of 100 that are each
 * auditor's whole balance), a shared content store and board, four bots, and the ledger's first reading.
 */
async function stage(o: StageOptions) {
  const params = o.readme ? DEFAULT_DISPUTE_PARAMS : BOT_PARAMS;
  const bond = o.readme ? parseEther("100") : parseEther("5");
  const w = await newWorld({
    params,
    minBond: o.readme ? parseEther("100") : parseEther("1"),
    funded: ["buyer", "provider", ...BOTS, ...(o.extraSide ?? [])],
    // README: `auditor bond 100 --mint` mints exactly the bond; the bot tests' auditors hold 15 more for deposits
    tokens: (n: ActorName) => (BOTS.includes(n as (typeof BOTS)[number]) ? (o.readme ? bond : parseEther("20")) : parseEther("100")),
    approve: false,
    auditors: BOTS,
    bond,
    stake: parseEther("10"),
  });
  for (const n of o.extraSide ?? []) await approveToken(w.a[n].c, { token: w.d.token, spender: w.d.disputeGame, amount: maxUint256 });
  const dir = workDir(o.tag);
  const store = new LocalDirStore(join(dir, "store"));
  const board = new SegmentBoard(join(dir, "board"), store);
  // the provider's `pouw serve` behind the bots' own store, down: loopback port 9 (discard, privileged) refuses connections
  const botStore = o.unreachable ? new LayeredStore(store, [new HttpContentStore("http://127.0.0.1:9", { retries: 0, timeoutMs: 2_000 })]) : store;
  const bots: Actor[] = BOTS.map((n) => w.a[n]);
  const before = await snapshot(w, everyone({ side: [w.a.provider, ...(o.extraSide ?? []).map((n) => w.a[n])], honest: [w.a.buyer, ...bots] }));

  const clock = { t: 1_000_000_000 };
  const found = new Map<string, string>();
  const errorLines: string[] = [];
  const tickErrors: string[] = [];
  const botLog = (i: number) =>
    i === 0 && o.readme ? pino({ level: "error", base: undefined }, { write: (line: string) => void errorLines.push(String((JSON.parse(line) as { msg: string }).msg)) }) : pino({ level: "silent" });
  const running = bots.map(
    (b, i) =>
      new ChallengerBot({
        clients: b.c,
        deployment: w.d,
        store: botStore,
        board,
        dbPath: join(dir, `bot-${b.name}.sqlite`),
        dispute: chainDisputeHooks({ clients: b.c, deployment: w.d, ballotsDir: join(dir, `ballots-${b.name}`) }),
        log: botLog(i),
        now: () => clock.t,
        heartbeatMs: 0,
        onAudit: (e) => {
          const k = `${b.address}:${e.jobId}`;
          if (!e.verdict.ok && !found.has(k)) found.set(k, `${e.verdict.failure?.kind} at step ${e.verdict.firstBadStep}`);
        },
      }),
  );
  /** One pass of every bot; a failing tick is recorded and the bot goes on next pass, as `pouw auditor run` does. */
  const tickAll = async () => {
    clock.t += 3_600_000;
    for (const [i, b] of running.entries()) {
      try {
        await b.tick();
      } catch (err) {
        tickErrors.push(`${bots[i]!.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  };
  const disputesOf = (jobId: bigint) => getJobDisputes(w.a.buyer.c.public, { disputeGame: w.d.disputeGame, jobId, fromBlock: BigInt(w.d.startBlock) });

  /** The buyer posts a tiny.json job as `pouw buyer create` does; the provider accepts, trains with `strategy` and commits. */
  async function postAndTrain(strategy: string, withhold?: TrainedAttack["withhold"]): Promise<{ jobId: bigint; policy: JobPolicy }> {
    // README row: the stake quoted over the package's detection matrix, pay 1
    const { policy, payment } = o.readme
      ? await jobPolicyFor(MANIFEST, { payment: parseEther("1"), detection: { path: packageDetectionPath(), matrix: loadDetectionMatrix(packageDetectionPath(), { isDefault: true }) }, panel: { size: params.panelSize, feeWei: params.panelFee } })
      : await jobPolicyFor(MANIFEST, {});
    const { jobId } = await postJob(w.a.buyer.c, w.d, store, MANIFEST, policy, payment);
    w.jobs.push(jobId);
    await acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
    // a withholding provider keeps its board (and with `all` its checkpoints) to itself
    const privateStore = new LocalDirStore(join(dir, `provider-store-${jobId}`));
    await publishManifest(privateStore, MANIFEST);
    const pStore = withhold === "all" || withhold === "unreachable" ? privateStore : store;
    const pBoard = withhold ? new SegmentBoard(join(dir, `provider-board-${jobId}`), privateStore) : board;
    if (strategy === "copy") {
      // a peer's honest trace of the same manifest (another job), re-keyed by the copy strategy, committed segment by segment
      const peer = join(dir, `peer-${jobId}`);
      await train(await createRun(MANIFEST, { jobId: jobId + 1000n, salt: deploymentSalt(w.d, jobId + 1000n) }), { outDir: peer, strategy: { kind: "honest" }, evaluate: false });
      const copied = join(dir, `copy-${jobId}`);
      const { trace } = await train(await createRun(MANIFEST, { jobId, salt: deploymentSalt(w.d, jobId) }), { outDir: copied, strategy: { kind: "copy", dir: peer }, evaluate: false });
      const copyStore = new LocalDirStore(join(copied, "store"));
      for (const seg of trace.segments) {
        await pStore.put(await copyStore.get(seg.checkpointCid));
        await commitSegment(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId, segment: seg.index, stateHashes: segmentStateHashes(trace, seg.index), lossE6: BigInt(seg.lossE6), checkpointCid: seg.checkpointCid });
      }
    } else {
      await runProviderJob({ clients: w.a.provider.c, deployment: w.d, store: pStore, board: pBoard, stateDir: join(dir, "provider") }, jobId, { strategy: parseStrategy(strategy) });
    }
    return { jobId, policy };
  }

  /**
   * Blocks and time pass and the bots tick until no dispute is open and every job is Refunded or past its challenge
   * window (the bots tick through the window as a running `pouw auditor run` does, so what they only act on later in
   * it, content withheld past the grace period, is acted on); a job left Committed with nothing open when the bots are
   * done is finalized by its provider after the window (the cheater's move).
   */
  async function settle(): Promise<void> {
    const terminal = async () => {
      const now = await w.now();
      for (const jobId of w.jobs) {
        const j = await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId });
        if (j.openDisputes > 0 || (j.status !== "Refunded" && j.status !== "Finalized" && j.status !== "Committed")) return false;
        if (j.status === "Committed" && (j.deadline >= now || (await disputesOf(jobId)).length > 0)) return false;
      }
      return true;
    };
    for (let round = 0; round < 48; round++) {
      await tickAll();
      if (round >= 2 && (await terminal())) break;
      await w.mine(params.seedDelayBlocks + 1);
      if (round >= 3) await w.increase(Math.ceil(params.commitWindowSeconds / 3) + 1); // a third of a vote phase a round: a panel drawn in one round votes in the next
    }
    for (const jobId of w.jobs) {
      const j = await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId });
      if (j.status !== "Committed" || j.openDisputes > 0) continue;
      if (j.deadline >= (await w.now())) await w.warpTo(j.deadline + 1n);
      await tickAll(); // last chance: the window is closed
      await finalize(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
    }
    await tickAll(); // claims
  }

  /** "bot H1 found state-divergence at step 4, challenged step 4: PanelFault 3-0; job Refunded". */
  async function story(jobId: bigint): Promise<{ text: string; challenger: Actor | undefined }> {
    const job = await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId });
    const first = (await disputesOf(jobId))[0];
    if (!first) return { text: `no challenge; job ${job.status}`, challenger: undefined };
    const challenger = bots.find((b) => b.address === getAddress(first.challenger));
    let outcome: string;
    try {
      const dd = await getDispute(w.a.buyer.c.public, { disputeGame: w.d.disputeGame, disputeId: first.disputeId });
      outcome = `${dd.outcome}${dd.panel.length ? ` ${dd.faultVotes}-${dd.validVotes}` : ""}`;
    } catch (err) {
      outcome = `unreadable (${err instanceof Error ? err.message : String(err)})`;
    }
    const why = found.get(`${getAddress(first.challenger)}:${jobId}`);
    const who = challenger ? `bot ${challenger.name}` : `${first.challenger}`;
    return { text: `${who}${why ? ` found ${why},` : ""} challenged step ${first.step}: ${outcome}; job ${job.status}`, challenger };
  }

  const close = () => {
    for (const b of running) b.close();
  };
  return { w, params, bots, running, before, clock, errorLines, tickErrors, tickAll, disputesOf, postAndTrain, settle, story, close };
}

export async function trainedAttack(o: TrainedAttack): Promise<Row> {
  const st = await stage({ tag: o.attack, ...(o.readme ? { readme: true } : {}), ...(o.withhold === "unreachable" ? { unreachable: true } : {}) });
  const { w, bots, before } = st;
  const { jobId } = await st.postAndTrain(o.strategy, o.withhold);
  let readmeNote = "";
  if (o.readme) {
    // every bot has its whole balance bonded: each finds the bad step and keeps its challenge pending, none is sent
    await st.tickAll();
    const pending = st.running[0]!.summary().intents.filter((i) => i.kind === "challenge");
    if ((await st.disputesOf(jobId)).length !== 0) throw new Error("an unfunded bot opened a dispute");
    if (!pending.length || pending.some((i) => i.status !== "pending")) throw new AttackSucceeded(`the unfunded bot's challenge was dropped: ${JSON.stringify(pending.map((i) => [i.status, i.error]))}`);
    // `pouw auditor fund --mint` for the first auditor: the largest deposit among the open jobs, the shortfall minted
    const me = bots[0]!;
    const f = await getAuditorFunds(me.c.public, { deployment: w.d, account: me.address, jobIds: await getOpenJobIds(me.c.public, { jobMarket: w.d.jobMarket }) });
    const minted = f.deposit!.amount - f.tokenBalance;
    await mintTestToken(me.c, { token: w.d.token, to: me.address, amount: minted });
    // tokens minted from nowhere by `auditor fund --mint`: not part of the auditor's net
    before.set(me.address, { ...before.get(me.address)!, total: before.get(me.address)!.total + minted });
    const line = st.errorLines.find((l) => l.startsWith("CANNOT CHALLENGE"));
    readmeNote = `unfunded: challenge kept pending (bot logged "${line ? `${line.slice(0, 34)}...` : "?"}"), funded ${tokens(f.deposit!.amount)} by \`auditor fund\`; `;
  }
  await st.settle();
  const { text, challenger } = await st.story(jobId);
  const s: Sides = { side: [w.a.provider], challenger, honest: [w.a.buyer, ...bots.filter((b) => b !== challenger)] };
  const withheld = o.withhold === "leaves" ? "impossible: leaves are commitSegment calldata (provider published no board records); " : o.withhold === "all" ? "leaves and checkpoints withheld; " : o.withhold === "unreachable" ? "checkpoints withheld, provider's server down (reads time out, never 404); " : "";
  const failed = st.tickErrors.length ? `; ${st.tickErrors.length} bot ticks failed (${st.tickErrors[0]})` : "";
  st.close();
  return measure(w, s, before, o.attack, `${withheld}${readmeNote}${text}${failed}`, `${TRAINED} ${o.strategy}`);
}

/**
 * A dispute still open when its job faulted through another, in front of the bots: the bot H1 challenges the bad step
 * of a cheating job; the provider's sybil disputes a valid step of the same job and the provider concedes the sybil's
 * dispute, so the job faults first; H1's dispute is then decided by its own panel (the other bots). Then the provider
 * cheats again on a second job: the bots must still challenge it (they follow every dispute on the network).
 */
export async function supersededInFrontOfBots(): Promise<Row> {
  const attack = "12 superseded dispute vs the bots";
  const st = await stage({ tag: attack, extraSide: ["sybilA"] });
  const { w, bots, before } = st;
  const first = await st.postAndTrain("skip:0.25");
  await st.tickAll(); // H1 challenges the bad step
  const honest = (await st.disputesOf(first.jobId))[0];
  if (!honest) throw new Error("no bot challenged the first job");
  const sybil = await challengeStep(w, w.a.sybilA, first.jobId, 1); // a valid step
  await concede(w.a.provider.c, { disputeGame: w.d.disputeGame, disputeId: sybil });
  // H1's dispute is not closed by the concession: the bots on its panel decide it (settle ticks them)
  const second = await st.postAndTrain("skip:0.25");
  await st.settle();
  const one = await st.story(first.jobId);
  const two = await st.story(second.jobId);
  const challenger = bots.find((b) => b.address === getAddress(honest.challenger));
  const s: Sides = { side: [w.a.provider, w.a.sybilA], challenger, honest: [w.a.buyer, ...bots.filter((b) => b !== challenger)] };
  const failed = st.tickErrors.length ? `; ${st.tickErrors.length} bot ticks failed (${st.tickErrors[0]})` : "";
  st.close();
  return measure(w, s, before, attack, `job 1: ${one.text} (sybil's dispute Conceded); job 2: ${two.text}${failed}`, `${TRAINED} skip:0.25 x2`);
}

/**
 * A job the bots cannot audit, posted by the provider's own buyer address: its on-chain policy has 2-step segments
 * while its manifest (tiny.json, served like any other) has 4-step ones, and the provider commits one 3-leaf segment.
 * Then the provider cheats on the honest buyer's job: the bots must still catch that one.
 */
export async function poisonJobInFrontOfBots(): Promise<Row> {
  const attack = "13 unauditable job in front of the bots";
  const st = await stage({ tag: attack, extraSide: ["sybilB"] });
  const { w, bots, before } = st;
  const store = new LocalDirStore(join(workDir(attack), "store"));
  const poison: JobPolicy = { ...(await jobPolicyFor(MANIFEST, {})).policy, segments: 1, stepsPerSegment: 2 };
  const { jobId: poisonId } = await postJob(w.a.sybilB.c, w.d, store, MANIFEST, poison, parseEther("0.1"));
  w.jobs.push(poisonId);
  await acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId: poisonId });
  await commitSegment(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId: poisonId, segment: 0, stateHashes: declaredTrace(poisonId, 2), lossE6: 1n, checkpointCid: "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m" });
  const real = await st.postAndTrain("skip:0.25");
  await st.settle();
  const two = await st.story(real.jobId);
  const s: Sides = { side: [w.a.provider, w.a.sybilB], challenger: two.challenger, honest: [w.a.buyer, ...bots.filter((b) => b !== two.challenger)] };
  const failed = st.tickErrors.length ? `; ${st.tickErrors.length} bot ticks failed (${st.tickErrors[0]})` : "";
  st.close();
  return measure(w, s, before, attack, `sybil's job ${poisonId} (policy K = 2, manifest K = 4) committed; honest buyer's job: ${two.text}${failed}`, `${TRAINED} skip:0.25 + 1 unauditable job`);
}

/**
 * The provider's sybil disputes a valid step of the cheating job the moment its last segment is committed, before any
 * bot has audited it, hoping the bots hold back while a dispute is open (one fault slashes the whole lock).
 */
export async function sybilDisputeBeforeBots(): Promise<Row> {
  const attack = "14 sybil dispute ahead of the bots";
  const st = await stage({ tag: attack, extraSide: ["sybilA"] });
  const { w, bots, before } = st;
  const { jobId } = await st.postAndTrain("skip:0.25");
  await challengeStep(w, w.a.sybilA, jobId, 1); // valid: skip:0.25 first skips step 4
  await st.settle();
  const all = await st.disputesOf(jobId);
  const honest = all.find((x) => getAddress(x.challenger) !== w.a.sybilA.address);
  const challenger = honest ? bots.find((b) => b.address === getAddress(honest.challenger)) : undefined;
  const outcomes: string[] = [];
  for (const x of all) outcomes.push(`${getAddress(x.challenger) === w.a.sybilA.address ? "sybil" : (bots.find((b) => b.address === getAddress(x.challenger))?.name ?? "?")} step ${x.step}: ${(await getDispute(w.a.buyer.c.public, { disputeGame: w.d.disputeGame, disputeId: x.disputeId })).outcome}`);
  const s: Sides = { side: [w.a.provider, w.a.sybilA], challenger, honest: [w.a.buyer, ...bots.filter((b) => b !== challenger)] };
  const failed = st.tickErrors.length ? `; ${st.tickErrors.length} bot ticks failed (${st.tickErrors[0]})` : "";
  st.close();
  return measure(w, s, before, attack, `disputes: ${outcomes.join(", ")}; job ${(await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId })).status}${failed}`, `${TRAINED} skip:0.25`);
}
