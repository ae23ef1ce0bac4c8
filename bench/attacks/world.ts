/**
 * The stage of bench/attacks.ts: one in-process Hardhat network, named actors (dev accounts), a fresh market
 * deployment per attack (deployMarket + deployDisputeGame, registries included, wiring ended), the ledger that reads
 * every party's holdings before and after an attack (chain/getHoldings.ts), and the declared trajectory the
 * game-theory rows commit.
 *
 * Declared trajectory: rows that test the rules of the game rather than an ML check commit state hashes of a step
 * function over hashes, h(0) = keccak("init", job), h(t) = keccak("step", job, t, h(t-1)). A cheat replaces one state;
 * later states follow the step function from the cheated one (the cheater keeps training from what it produced).
 * Honest panel members decide with the rule of dispute/panel.ts decideStep over this step function: they read
 * the segment's leaves from SegmentCommitted, recompute from the segment's start to the disputed step and vote Valid
 * iff every transition is the step function's. Rows with real training (bench/attacks/trained.ts) use the engine and
 * the challenger bot instead.
 */
import { network } from "hardhat";
import { encodeAbiParameters, getAddress, keccak256, maxUint256, parseEther, zeroHash, type Address, type Hex } from "viem";
import {
  approveToken,
  commitSegment,
  ContractRevertError,
  createJob,
  DEFAULT_ACTIVATION_DELAY_SECONDS,
  DEFAULT_DISPUTE_PARAMS,
  deployDisputeGame,
  deployMarket,
  devAccount,
  drawPanel,
  getBallot,
  getDispute,
  getFaultAppeal,
  appealFault,
  getHoldings,
  getJob,
  getSegmentCommits,
  minAuditorExitDelaySeconds,
  mintTestToken,
  postBond,
  providerClients,
  resolveDispute,
  revealVote,
  commitVote,
  stakeDeposit,
  type ChainClients,
  type Deployment,
  type DisputeParams,
  type JobPolicy,
} from "../../verifier/src/chain/index.ts";
import { newSalt, openChallenge, voteCommitment, VOTE_VALUE, type PanelVote } from "../../verifier/src/dispute/index.ts";
import { SegmentTree } from "../../verifier/src/trace/index.ts";

export type Connection = Awaited<ReturnType<typeof network.create>>;

/** A party with a name (for the outcome lines) and its clients. */
export type Actor = { name: string; c: ChainClients; address: Address };

/** Dev-account index of every named actor; the same address plays the same role in every row. */
export const ROSTER = {
  deployer: 0,
  buyer: 1,
  provider: 2,
  sybilA: 3,
  sybilB: 4,
  honestChallenger: 5,
  H1: 6,
  H2: 7,
  H3: 8,
  H4: 9,
  H5: 10,
  S1: 11,
  S2: 12,
  S3: 13,
  S4: 14,
  S5: 15,
  S6: 16,
  S7: 17,
  squatter: 18,
  contributor: 19,
} as const;
export type ActorName = keyof typeof ROSTER;

/** Raised by an actor script when a step the rules must refuse went through: the attack worked (a bug). */
export class AttackSucceeded extends Error {
  override name = "AttackSucceeded";
}

/**
 * The dispute parameters of the game-theory rows: the deployment defaults (panel of 3, 2-block seed, 0.05 fee per
 * member, 1-token minimum challenger bond, eps 3%) with one-hour vote windows and a 2-token forfeit (bonds are 20).
 */
export const GAME_PARAMS: DisputeParams = { ...DEFAULT_DISPUTE_PARAMS, commitWindowSeconds: 3600, revealWindowSeconds: 3600, panelForfeit: parseEther("2") };

/** 2 segments of 4 steps, stake 10, 1-hour segment timeout, 1-day window, lam = 50% (the cap), 30% buyer, 20% burn, 10% timeout slash. */
export const GAME_POLICY: JobPolicy = {
  segments: 2,
  stepsPerSegment: 4,
  requiredStake: parseEther("10"),
  segmentTimeout: 3600,
  challengeWindow: 86_400,
  challengerBps: 5000,
  buyerBps: 3000,
  burnBps: 2000,
  timeoutSlashBps: 1000,
};
export const PAYMENT = parseEther("1");

export function tokens(wei: bigint): string {
  const neg = wei < 0n;
  const a = neg ? -wei : wei;
  const whole = a / 10n ** 18n;
  const frac = (a % 10n ** 18n).toString().padStart(18, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

// ---------------------------------------------------------------- declared trajectory

const initState = (jobId: bigint): Hex => keccak256(encodeAbiParameters([{ type: "string" }, { type: "uint256" }], ["pouw-bench-init", jobId]));

/** The declared honest step: h(t) from h(t-1). */
export function nextState(jobId: bigint, t: number, prev: Hex): Hex {
  return keccak256(encodeAbiParameters([{ type: "string" }, { type: "uint256" }, { type: "uint256" }, { type: "bytes32" }], ["pouw-bench-step", jobId, BigInt(t), prev]));
}

/**
 * h(0)..h(steps) of a job: the declared honest trajectory, or with `cheatAt` one state replaced (a skipped step, a
 * planted delta: what matters to the game is that h(cheatAt) is not the step of h(cheatAt - 1)); later states follow
 * the step function from the cheated one.
 */
export function declaredTrace(jobId: bigint, steps: number, cheatAt?: number, tag = "cheat"): Hex[] {
  const h: Hex[] = [initState(jobId)];
  for (let t = 1; t <= steps; t++) {
    h.push(t === cheatAt ? keccak256(encodeAbiParameters([{ type: "string" }, { type: "uint256" }, { type: "uint256" }], [tag, jobId, BigInt(t)])) : nextState(jobId, t, h[t - 1]!));
  }
  return h;
}

/** The panel rule (decideStep) over the declared step function, from the leaves on chain. */
export function declaredVerdict(jobId: bigint, leaves: readonly Hex[], firstStep: number, step: number, prevEnd: Hex | undefined): PanelVote {
  const start = firstStep === 0 ? initState(jobId) : prevEnd;
  if (leaves[0] !== start) return "Fault";
  let h = leaves[0]!;
  for (let t = firstStep + 1; t <= step; t++) {
    h = nextState(jobId, t, h);
    if (h !== leaves[t - firstStep]) return "Fault";
  }
  return "Valid";
}

// ---------------------------------------------------------------- the stage

export type World = {
  conn: Connection;
  d: Deployment & { disputeGame: Address; providerRegistry: Address; dataRegistry: Address };
  params: DisputeParams;
  a: Record<ActorName, Actor>;
  /** Every job this row created. */
  jobs: bigint[];
  mine: (n: number) => Promise<void>;
  increase: (seconds: number | bigint) => Promise<void>;
  /** Mines a block at time `t` (one block at the current time if `t` is not in the future). */
  warpTo: (t: bigint) => Promise<void>;
  /** The next transaction's block will have timestamp `t` (> the latest block's). */
  nextBlockAt: (t: bigint) => Promise<void>;
  now: () => Promise<bigint>;
};

let shared: Connection | undefined;
const clientsCache = new Map<number, ChainClients>();

/** The bench's one in-process network. */
export async function connection(): Promise<Connection> {
  shared ??= await network.create();
  return shared;
}

export function actorOf(conn: Connection, name: ActorName): Actor {
  const i = ROSTER[name];
  let c = clientsCache.get(i);
  if (!c) {
    c = providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 5 });
    clientsCache.set(i, c);
  }
  return { name, c, address: getAddress(c.account.address) };
}

export type WorldOptions = {
  params?: DisputeParams;
  minBond?: bigint;
  /** Actors minted tokens (`tokens`, default 1000 each) and, unless `approve` is false, approving every market contract (default: everyone but the deployer). */
  funded?: readonly ActorName[];
  tokens?: (name: ActorName) => bigint;
  approve?: boolean;
  /** Honest auditors that bond `bond` before the activation delay passes (default H1..H5). */
  auditors?: readonly ActorName[];
  bond?: bigint;
  /** Provider stake deposited (default 100). */
  stake?: bigint;
};

/** A fresh deployment on the shared network with the row's actors funded, staked and bonded (bonds already eligible). */
export async function newWorld(o: WorldOptions = {}): Promise<World> {
  const conn = await connection();
  const a = Object.fromEntries(Object.keys(ROSTER).map((n) => [n, actorOf(conn, n as ActorName)])) as Record<ActorName, Actor>;
  const params = o.params ?? GAME_PARAMS;
  const market = await deployMarket(a.deployer.c, { unbondingDelaySeconds: 60n, minBond: o.minBond ?? parseEther("10"), exitDelaySeconds: minAuditorExitDelaySeconds(params) });
  const game = await deployDisputeGame(a.deployer.c, { deployment: market, params });
  if (!game.wiring.sealed) throw new Error("deployment wiring did not end");
  const d = { ...market, disputeGame: game.disputeGame, providerRegistry: market.providerRegistry!, dataRegistry: market.dataRegistry! };
  const auditors = o.auditors ?? (["H1", "H2", "H3", "H4", "H5"] as const);
  // the auditors that bond are always funded
  const funded = [...new Set([...(o.funded ?? (Object.keys(ROSTER).filter((n) => n !== "deployer") as ActorName[])), ...auditors])];
  for (const n of funded) {
    const c = a[n].c;
    const amount = o.tokens?.(n) ?? parseEther("1000");
    if (amount > 0n) await mintTestToken(c, { token: d.token, to: a[n].address, amount });
    const spenders = o.approve === false ? [] : [d.jobMarket, d.stakeVault, d.auditorRegistry, d.disputeGame];
    for (const spender of spenders) await approveToken(c, { token: d.token, spender, amount: maxUint256 });
  }
  if (o.approve === false) {
    if (funded.includes("provider")) await approveToken(a.provider.c, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
    for (const n of auditors) await approveToken(a[n].c, { token: d.token, spender: d.auditorRegistry, amount: maxUint256 });
  }
  if (funded.includes("provider")) await stakeDeposit(a.provider.c, { stakeVault: d.stakeVault, amount: o.stake ?? parseEther("100") });
  for (const n of auditors) await postBond(a[n].c, { auditorRegistry: d.auditorRegistry, amount: o.bond ?? parseEther("20") });
  const h = conn.networkHelpers;
  await h.time.increase(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));
  return {
    conn,
    d,
    params,
    a,
    jobs: [],
    mine: async (n) => {
      await h.mine(n);
    },
    increase: async (s) => {
      await h.time.increase(Number(s));
    },
    warpTo: async (t) => {
      if (t > BigInt(await h.time.latest())) await h.time.setNextBlockTimestamp(Number(t));
      await h.mine(1);
    },
    nextBlockAt: async (t) => {
      await h.time.setNextBlockTimestamp(Number(t));
    },
    now: async () => BigInt(await h.time.latest()),
  };
}

/** Runs `p`, which the rules must refuse: returns the custom error's name; a success is the attack working. */
export async function refused(what: string, p: Promise<unknown>, expected?: string): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ContractRevertError) {
      if (expected && err.errorName !== expected) throw new AttackSucceeded(`${what}: reverted ${err.errorName}, expected ${expected}`);
      return err.errorName;
    }
    throw err;
  }
  throw new AttackSucceeded(`${what} went through`);
}

// ---------------------------------------------------------------- actions the rows share

/** The buyer posts a job with the game policy (or `policy`). */
export async function postGameJob(w: World, policy: JobPolicy = GAME_POLICY, buyer: Actor = w.a.buyer): Promise<bigint> {
  const { jobId } = await createJob(buyer.c, {
    jobMarket: w.d.jobMarket,
    manifestHash: keccak256(encodeAbiParameters([{ type: "string" }], ["bench-attacks-manifest"])),
    manifestUri: `cid:${CID}`,
    token: w.d.token,
    payment: PAYMENT,
    policy,
  });
  w.jobs.push(jobId);
  return jobId;
}

export const CID = "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m";

/** The provider commits segment `segment` of `trace` (K+1 leaves). */
export async function commit(w: World, jobId: bigint, trace: readonly Hex[], segment: number, K = GAME_POLICY.stepsPerSegment, who: Actor = w.a.provider) {
  return commitSegment(who.c, { jobMarket: w.d.jobMarket, jobId, segment, stateHashes: trace.slice(segment * K, segment * K + K + 1), lossE6: 1_000_000n, checkpointCid: CID });
}

/** The leaves of the segment holding `step`, as committed on chain, with their tree. */
export async function segmentOf(w: World, jobId: bigint, step: number, K = GAME_POLICY.stepsPerSegment) {
  const segment = Math.floor((step - 1) / K);
  const commits = await getSegmentCommits(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId, fromBlock: BigInt(w.d.startBlock) });
  const c = commits.find((x) => x.segment === segment);
  if (!c) throw new Error(`job ${jobId}: segment ${segment} is not committed`);
  const prev = commits.find((x) => x.segment === segment - 1);
  return { segment, firstStep: segment * K, commit: c, prevEnd: prev?.endStateHash, tree: new SegmentTree(segment * K, c.stateHashes) };
}

/** `who` challenges `step` of `jobId` from the on-chain leaves (openChallenge: deposit, commitChallenge, challenge). */
export async function challengeStep(w: World, who: Actor, jobId: bigint, step: number): Promise<bigint> {
  const s = await segmentOf(w, jobId, step);
  const r = await openChallenge(who.c, {
    disputeGame: w.d.disputeGame,
    token: w.d.token,
    jobId,
    endStateHash: s.commit.endStateHash,
    audit: { segment: s.segment, traceRoot: s.commit.traceRoot, step, prevStateHash: s.tree.stateHashes[step - 1 - s.firstStep]!, prevProof: s.tree.proof(step - 1), stateHash: s.tree.stateHashes[step - s.firstStep]!, proof: s.tree.proof(step) },
  });
  return r.disputeId;
}

/** How a panel member behaves: the honest rule, a fixed vote, or silence. */
export type Behaviour = "honest" | PanelVote | "silent";

/**
 * Plays a dispute's panel to its resolution: the seed blocks pass, an honest auditor draws, each member commits and
 * reveals per `behaviour(member)` (honest members recompute with the declared rule), then `resolver` resolves (after
 * the reveal deadline if someone stayed silent). A split Fault is appealed to a larger panel (the dispute stays Open
 * in its next round), which plays by the same behaviour, until the dispute settles. A member that already committed
 * (or revealed) in the current round is not asked again, so a round whose panel changed after a resolve (a redrawn
 * seat) is played on. `others` are actors outside the roster that may sit on the panel. Returns the outcome, the last
 * round's panel and the number of rounds the dispute reached.
 */
export async function playPanel(
  w: World,
  disputeId: bigint,
  behaviour: (m: Address) => Behaviour,
  resolver: Actor = w.a.H1,
  others: readonly Actor[] = [],
): Promise<{ outcome: string; panel: readonly Address[]; rounds: number }> {
  const game = w.d.disputeGame;
  const pub = resolver.c.public;
  const byAddress = new Map([...Object.values(w.a), ...others].map((x) => [x.address, x] as const));
  for (let plays = 0; plays < 12; ++plays) {
    let d = await getDispute(pub, { disputeGame: game, disputeId });
    const blocks = await pub.getBlockNumber();
    if (blocks <= d.seedBlock) await w.mine(Number(d.seedBlock - blocks) + 1);
    if (!d.panel.length) await drawPanel(resolver.c, { disputeGame: game, disputeId });
    d = await getDispute(pub, { disputeGame: game, disputeId });
    const s = await segmentOf(w, d.jobId, Number(d.step));
    const ballots: { m: Actor; vote: PanelVote; salt: Hex }[] = [];
    let committed = 0;
    let revealed = 0;
    for (const addr of d.panel) {
      const m = byAddress.get(getAddress(addr));
      if (!m) throw new Error(`panel member ${addr} is not a bench actor`);
      const ballot = await getBallot(pub, { disputeGame: game, disputeId, member: m.address });
      if (ballot.commitment !== zeroHash) {
        ++committed;
        if (ballot.vote !== "None") ++revealed;
        continue;
      }
      const b = behaviour(m.address);
      if (b === "silent") continue;
      const vote = b === "honest" ? declaredVerdict(d.jobId, s.commit.stateHashes, s.firstStep, Number(d.step), s.prevEnd) : b;
      const salt = newSalt();
      await commitVote(m.c, { disputeGame: game, disputeId, commitment: voteCommitment(vote, salt, m.address) });
      ballots.push({ m, vote, salt });
    }
    if (committed + ballots.length < d.panel.length) await w.warpTo(d.commitDeadline + 1n);
    for (const b of ballots) await revealVote(b.m.c, { disputeGame: game, disputeId, vote: VOTE_VALUE[b.vote], salt: b.salt });
    if (revealed + ballots.length < d.panel.length) await w.warpTo(d.revealDeadline + 1n);
    await resolveDispute(resolver.c, { disputeGame: game, disputeId });
    const after = await getDispute(pub, { disputeGame: game, disputeId });
    if (after.status !== "Open") return { outcome: after.outcome, panel: after.panel, rounds: Number(after.round) };
    // a unanimous first-round Fault waits for the provider's appeal: the provider knows its own step and appeals it
    // when it is valid (a captured panel), else lets the window pass
    const { deadline } = await getFaultAppeal(pub, { disputeGame: game, disputeId });
    if (deadline === undefined) continue;
    const provider = byAddress.get(getAddress(after.provider));
    if (provider && declaredVerdict(after.jobId, s.commit.stateHashes, s.firstStep, Number(after.step), s.prevEnd) === "Valid") {
      await appealFault(provider.c, { disputeGame: game, disputeId });
      continue;
    }
    await w.warpTo(deadline + 1n);
    await resolveDispute(resolver.c, { disputeGame: game, disputeId });
    const settled = await getDispute(pub, { disputeGame: game, disputeId });
    return { outcome: settled.outcome, panel: settled.panel, rounds: Number(settled.round) };
  }
  throw new Error(`dispute ${disputeId} still open after 12 plays of its panel`);
}

/**
 * Actors outside the roster (dev accounts from `firstIndex` on, given gas money), for rows that need larger auditor
 * pools or more challenger addresses than the roster has. Funded, approved and bonded like roster actors by the caller.
 */
export async function extraActors(w: World, prefix: string, count: number, firstIndex: number): Promise<Actor[]> {
  const out: Actor[] = [];
  for (let i = 0; i < count; ++i) {
    const c = providerClients(w.conn.provider, 31337, { account: devAccount(firstIndex + i), pollingIntervalMs: 5 });
    await w.conn.networkHelpers.setBalance(c.account.address, parseEther("1000"));
    out.push({ name: `${prefix}${i + 1}`, c, address: getAddress(c.account.address) });
  }
  return out;
}

/** Mints `amount` to `x` and approves every market contract (as newWorld does for roster actors). */
export async function fund(w: World, x: Actor, amount: bigint = parseEther("1000")): Promise<void> {
  await mintTestToken(x.c, { token: w.d.token, to: x.address, amount });
  for (const spender of [w.d.jobMarket, w.d.stakeVault, w.d.auditorRegistry, w.d.disputeGame]) await approveToken(x.c, { token: w.d.token, spender, amount: maxUint256 });
}

// ---------------------------------------------------------------- the ledger

export type Sides = {
  /** The provider and every address it controls. */
  side: readonly Actor[];
  /** The honest challenger (its net is reported alone), if the row has one. */
  challenger?: Actor | undefined;
  /** Every other honest party (auditors, buyer, contributor, honest providers). */
  honest: readonly Actor[];
  /** Addresses outside the bench's roster whose holdings count as honest (a corpus payout address). */
  honestAddresses?: readonly Address[];
};

export type Snapshot = Map<Address, { total: bigint; jobMarketCredit: bigint }>;

export async function snapshot(w: World, addresses: readonly Address[]): Promise<Snapshot> {
  const m: Snapshot = new Map();
  for (const account of new Set(addresses)) {
    const h = await getHoldings(w.a.buyer.c.public, { deployment: w.d, account });
    m.set(account, { total: h.total, jobMarketCredit: h.jobMarketCredit });
  }
  return m;
}

export const everyone = (s: Sides): Address[] => [...s.side, ...(s.challenger ? [s.challenger] : []), ...s.honest].map((x) => x.address).concat(s.honestAddresses ?? []);

export type Row = {
  attack: string;
  cheaterPaidWei: string;
  cheaterLossWei: string;
  honestChallengerNetWei: string;
  honestSlashedWei: string;
  outcome: string;
  /** How the row was played: `declared` (declared trace, scripted honest panel), `trained <strategy>` (real training, four ChallengerBots) or `-` (no job trace). */
  play: string;
};

/**
 * The row's numbers from two snapshots: the side's pay (JobMarket credits it gained, less the payments of finalized
 * jobs it posted itself) and net loss, the honest challenger's net, and what honest parties lost. The buyer's outlay for a job it received (Finalized) is a purchase,
 * not a loss; everything else an honest party ends below is counted as slashed.
 */
export async function measure(w: World, s: Sides, before: Snapshot, attack: string, outcome: string, play: string): Promise<Row> {
  const after = await snapshot(w, everyone(s));
  const delta = (a: Address) => after.get(a)!.total - before.get(a)!.total;
  let paid = 0n;
  let sideNet = 0n;
  for (const x of new Set(s.side.map((y) => y.address))) {
    sideNet += delta(x);
    const dc = after.get(x)!.jobMarketCredit - before.get(x)!.jobMarketCredit;
    if (dc > 0n) paid += dc;
  }
  // a job the side posted and paid itself (a wash job) is not pay: its payment is taken off the side's credit gain
  let bought = 0n;
  let washed = 0n;
  const sideSet = new Set(s.side.map((y) => y.address));
  for (const jobId of w.jobs) {
    const j = await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId });
    if (j.status !== "Finalized") continue;
    if (getAddress(j.buyer) === w.a.buyer.address) bought += j.payment;
    if (sideSet.has(getAddress(j.buyer))) washed += j.payment;
  }
  paid = paid > washed ? paid - washed : 0n;
  let slashed = 0n;
  for (const x of new Set([...s.honest.map((y) => y.address), ...(s.honestAddresses ?? []), ...(s.challenger ? [s.challenger.address] : [])])) {
    let net = delta(x);
    if (x === w.a.buyer.address) net += bought;
    if (net < 0n && x !== s.challenger?.address) slashed += -net;
  }
  const challengerNet = s.challenger ? delta(s.challenger.address) : 0n;
  return { attack, cheaterPaidWei: paid.toString(), cheaterLossWei: (-sideNet).toString(), honestChallengerNetWei: challengerNet.toString(), honestSlashedWei: slashed.toString(), outcome, play };
}
