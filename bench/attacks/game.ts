/**
 * The attacks on the rules of the game, each an actor script over a fresh deployment (bench/attacks/world.ts):
 * the provider and the addresses it controls (sybil challengers A and B, sybil auditors S1..S7) play the attack, the
 * honest challenger and auditors H1..H5 play by the rules, and every step is a real transaction through the chain
 * actions. Traces are the declared trajectory of world.ts (the cheat is a declared divergent state); honest panel
 * members vote by the panel rule over it. A step the rules must refuse is sent anyway and its revert is reported by
 * name; if it goes through, the script throws AttackSucceeded.
 */
import { getAddress, keccak256, parseEther, toHex, type Address, type Hex, type LocalAccount } from "viem";
import {
  acceptJob,
  approveToken,
  cancelJob,
  challengeCommitment,
  challengeStep as challengeStepTx,
  commitChallenge,
  commitSegment,
  concede,
  createJob,
  dataRegistryAbi,
  disputeGameAbi,
  drawAttestationCommittee,
  drawPanel,
  finalize,
  getAttestationRequest,
  getDispute,
  getDisputeParams,
  getJob,
  jobMarketAbi,
  newChallengeSalt,
  postBond,
  getRequestFee,
  recordAttestation,
  registerCorpus,
  reopenJob,
  reportTimeout,
  requestAttestation,
  requestExit,
  resolveDispute,
  ROLE_IDS,
  sendContractTx,
  stakeVaultAbi,
  auditorRegistryAbi,
  commitVote,
  getAuditor,
  revealVote,
  type JobPolicy,
} from "../../verifier/src/chain/index.ts";
import { newSalt, voteCommitment, VOTE_VALUE, type PanelVote } from "../../verifier/src/dispute/index.ts";
import { registerManifestCorpora } from "../../verifier/src/market/contributor.ts";
import { dataTermsFor } from "../../verifier/src/market/data-terms.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { parseManifest } from "../../verifier/src/ml/index.ts";
import { contentDigestOf } from "../../verifier/src/provenance/chain.ts";
import { providerRegistryDomain, signAttestationVerified } from "../../verifier/src/receipts/index.ts";
import {
  AttackSucceeded,
  challengeStep,
  commit,
  declaredTrace,
  declaredVerdict,
  everyone,
  GAME_POLICY,
  measure,
  newWorld,
  playPanel,
  postGameJob,
  refused,
  segmentOf,
  snapshot,
  tokens,
  type Actor,
  type Row,
  type Sides,
  type World,
} from "./world.ts";
import { readFileSync } from "node:fs";

/** The `play` column: a declared trace (world.ts), or no job trace at all. */
const DECLARED = "declared";
const NO_TRACE = "-";
const K = GAME_POLICY.stepsPerSegment;
const STEPS = GAME_POLICY.segments * K;
const L = GAME_POLICY.requiredStake;
const LAM = BigInt(GAME_POLICY.challengerBps);
/** The non-challenger share of the lock: what the provider side must lose at least on any fault. */
const NON_CHALLENGER = (L * (10_000n - LAM)) / 10_000n;

const honestAuditors = (w: World): Actor[] => [w.a.H1, w.a.H2, w.a.H3, w.a.H4, w.a.H5];
const sides = (w: World, side: Actor[], challenger?: Actor, extraHonest: Actor[] = []): Sides => ({ side, challenger, honest: [w.a.buyer, ...honestAuditors(w), ...extraHonest] });
const honestPanel = () => "honest" as const;

/** A job accepted by the provider, its trace, and the ledger's first reading (taken before the buyer escrows). */
async function startJob(w: World, s: Sides, cheatAt: number | undefined, tag = "cheat", policy: JobPolicy = GAME_POLICY) {
  const before = await snapshot(w, everyone(s));
  const jobId = await postGameJob(w, policy);
  await acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
  return { before, jobId, trace: declaredTrace(jobId, policy.segments * policy.stepsPerSegment, cheatAt, tag) };
}

/** The commit half of a challenge now, the challenge itself whenever `send` is called (a later block). */
async function prepareChallenge(w: World, who: Actor, jobId: bigint, step: number, salt: Hex = newChallengeSalt()) {
  await commitChallenge(who.c, { disputeGame: w.d.disputeGame, jobId, segment: Math.floor((step - 1) / GAME_POLICY.stepsPerSegment), step, salt });
  const args = async () => {
    const s = await segmentOf(w, jobId, step);
    return {
      disputeGame: w.d.disputeGame,
      jobId,
      segment: s.segment,
      step,
      traceRoot: s.commit.traceRoot,
      endStateHash: s.commit.endStateHash,
      hPrev: s.tree.stateHashes[step - 1 - s.firstStep]!,
      proofPrev: s.tree.proof(step - 1),
      hStep: s.tree.stateHashes[step - s.firstStep]!,
      proofStep: s.tree.proof(step),
      salt,
    };
  };
  return { salt, args, send: async (as: Actor = who) => (await challengeStepTx(as.c, await args())).disputeId };
}

const outcomeOf = async (w: World, disputeId: bigint) => (await getDispute(w.a.buyer.c.public, { disputeGame: w.d.disputeGame, disputeId })).outcome;

/** Throws when the side lost less than the non-challenger share of the lock (rule (a) of docs/disputes.md). */
function atLeastNonChallenger(row: Row, lock = L): Row {
  const need = (lock * (10_000n - LAM)) / 10_000n;
  if (BigInt(row.cheaterLossWei) < need) throw new AttackSucceeded(`${row.attack}: the provider side lost ${tokens(BigInt(row.cheaterLossWei))} < (1 - lam) L = ${tokens(need)}`);
  return row;
}

// ---------------------------------------------------------------- 2: end state bound to the last leaf

export async function backdooredEndState(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "honestChallenger"] });
  const s = sides(w, [w.a.provider], w.a.honestChallenger);
  // honest steps, then the backdoored final weights: commitSegment takes no end state, so the backdoor can only be bound as the last leaf
  const { before, jobId, trace } = await startJob(w, s, STEPS, "backdoor");
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  const seg = await segmentOf(w, jobId, STEPS);
  if (seg.commit.endStateHash !== trace[STEPS]) throw new AttackSucceeded("the committed end state is not the last leaf");
  const id = await challengeStep(w, w.a.honestChallenger, jobId, STEPS);
  const { outcome } = await playPanel(w, id, honestPanel);
  const row = await measure(w, s, before, "2a backdoored end state", `end state = last leaf (commitSegment has no end-state argument): the backdoor h(${STEPS}) is step ${STEPS}, challenged: ${outcome}`, DECLARED);
  return atLeastNonChallenger(row);
}

export async function boundaryPlant(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "honestChallenger"] });
  const s = sides(w, [w.a.provider], w.a.honestChallenger);
  const { before, jobId, trace } = await startJob(w, s, undefined);
  await commit(w, jobId, trace, 0);
  // segment 1 starting from a planted state instead of segment 0's end
  const planted = [keccak256(toHex(`planted-${jobId}`)), ...trace.slice(K + 1, 2 * K + 1)];
  const err = await refused("commitSegment(1) from a planted start", commitSegment(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId, segment: 1, stateHashes: planted, lossE6: 1n, checkpointCid: "x" }), "JobMarketBoundaryMismatch");
  // the only place left for the plant is a step: step K+1, which is challengeable; the caught provider concedes
  const cheat = declaredTrace(jobId, STEPS, K + 1, "plant");
  await commit(w, jobId, cheat, 1);
  const id = await challengeStep(w, w.a.honestChallenger, jobId, K + 1);
  await concede(w.a.provider.c, { disputeGame: w.d.disputeGame, disputeId: id });
  const row = await measure(w, s, before, "2b boundary plant", `impossible: ${err} (segment 1 must start at h(${K})); the plant moved into step ${K + 1} was challenged: ${await outcomeOf(w, id)}`, DECLARED);
  return atLeastNonChallenger(row);
}

// ---------------------------------------------------------------- 3: rewards a sybil cannot take

export async function sybilConcession(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "sybilA", "honestChallenger"] });
  const s = sides(w, [w.a.provider, w.a.sybilA], w.a.honestChallenger);
  const { before, jobId, trace } = await startJob(w, s, 2);
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  const sybil = await challengeStep(w, w.a.sybilA, jobId, 5); // a valid step
  const honest = await challengeStep(w, w.a.honestChallenger, jobId, 2);
  await concede(w.a.provider.c, { disputeGame: w.d.disputeGame, disputeId: sybil });
  const err = await refused("concede the honest dispute after the fault", concede(w.a.provider.c, { disputeGame: w.d.disputeGame, disputeId: honest }), "DisputeGameSuperseded");
  // the honest dispute is still decided by its own panel (resolving it before the votes reverts DisputeGameVotingOpen)
  await refused("resolve the honest dispute before its panel voted", resolveDispute(w.a.honestChallenger.c, { disputeGame: w.d.disputeGame, disputeId: honest }), "DisputeGameVotingOpen");
  await playPanel(w, honest, honestPanel);
  const row = await measure(w, s, before, "3a sybil concession", `sybil's dispute on valid step 5 ${await outcomeOf(w, sybil)}, honest's on step 2 ${await outcomeOf(w, honest)} by its own panel (${err} on a second concede; its panel paid from the pool): the reward to the fault a panel decided (the concession earns none); side lost >= (1-lam)L = ${tokens(NON_CHALLENGER)}`, DECLARED);
  return atLeastNonChallenger(row);
}

export async function mempoolCopy(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "sybilB", "honestChallenger"] });
  const s = sides(w, [w.a.provider, w.a.sybilB], w.a.honestChallenger);
  const { before, jobId, trace } = await startJob(w, s, 2);
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  const honest = await prepareChallenge(w, w.a.honestChallenger, jobId, 2);
  // the copier sees the honest challenge (salt included) before it is mined and sends the same arguments itself
  const e1 = await refused("copied challenge", honest.send(w.a.sybilB), "DisputeGameChallengeNotCommitted");
  // copying the commitment does not help either: the challenger's address is in its preimage
  await sendContractTx(w.a.sybilB.c, { address: w.d.disputeGame, abi: disputeGameAbi, functionName: "commitChallenge", args: [jobId, 0n, challengeCommitment(jobId, 2, w.a.honestChallenger.address, honest.salt)] });
  await w.mine(1);
  await refused("copied challenge with the copied commitment", honest.send(w.a.sybilB), "DisputeGameChallengeNotCommitted");
  const id = await honest.send();
  const { outcome } = await playPanel(w, id, honestPanel);
  const row = await measure(w, s, before, "3b mempool copy of a challenge", `impossible: ${e1} (also with the commitment copied); the honest challenge went through: ${outcome}`, DECLARED);
  return atLeastNonChallenger(row);
}

export async function challengerShareTooHigh(): Promise<Row> {
  const w = await newWorld({ funded: ["sybilB", "provider"], auditors: [] });
  // the provider's own buyer address posts a job paying the whole slash to challengers (so a self-report would cost nothing)
  const s = sides(w, [w.a.provider, w.a.sybilB]);
  const before = await snapshot(w, everyone(s));
  const p: JobPolicy = { ...GAME_POLICY, challengerBps: 10_000, buyerBps: 0, burnBps: 0 };
  const mk = (policy: JobPolicy) =>
    createJob(w.a.sybilB.c, { jobMarket: w.d.jobMarket, manifestHash: keccak256(toHex("m")), manifestUri: "cid:x", token: w.d.token, payment: parseEther("1"), policy });
  const err = await refused("createJob(challengerBps 10,000)", mk(p), "JobMarketChallengerShareTooHigh");
  await refused("createJob(challengerBps 5,001)", mk({ ...p, challengerBps: 5001, buyerBps: 4999 }), "JobMarketChallengerShareTooHigh");
  return measure(w, s, before, "3c challengerBps 10,000", `impossible: ${err}(10000, 5000) (5,001 too: the cap is 5,000)`, NO_TRACE);
}

export async function selfReportAtCap(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "sybilA", "honestChallenger"] });
  const s = sides(w, [w.a.provider, w.a.sybilA], w.a.honestChallenger);
  const { before, jobId, trace } = await startJob(w, s, 2);
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  // the provider's sybil pre-commits to its own faulty step and front-runs the honest challenger
  const sybil = await prepareChallenge(w, w.a.sybilA, jobId, 2);
  const honest = await prepareChallenge(w, w.a.honestChallenger, jobId, 2);
  const id = await sybil.send();
  const err = await refused("honest challenge of the step the sybil took", honest.send(), "DisputeGameDisputeOpen");
  await concede(w.a.provider.c, { disputeGame: w.d.disputeGame, disputeId: id });
  const row = await measure(w, s, before, "3d self-report at the cap (lam = 50%)", `sybil front-ran the honest challenge (${err} for the honest one, at no cost to it) and the provider conceded: side kept lam L, lost exactly (1-lam)L`, DECLARED);
  return atLeastNonChallenger(row);
}

// ---------------------------------------------------------------- 4: panel picked after the seed

export async function panelAfterSeed(): Promise<Row> {
  const late = ["S2", "S3", "S4", "S5", "S6", "S7"] as const;
  const w = await newWorld({ funded: ["buyer", "provider", "honestChallenger", "H1", "H2", "H3", "H4", "H5", "S1", ...late], auditors: ["H1", "H2", "H3", "H4", "H5", "S1"] });
  const sybils = [w.a.S1, ...late.map((n) => w.a[n])];
  const s = sides(w, [w.a.provider, ...sybils], w.a.honestChallenger);
  const { before, jobId, trace } = await startJob(w, s, 2);
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  const id = await challengeStep(w, w.a.honestChallenger, jobId, 2);
  const d0 = await getDispute(w.a.buyer.c.public, { disputeGame: w.d.disputeGame, disputeId: id });
  await w.mine(Number(d0.seedBlock - (await w.a.buyer.c.public.getBlockNumber())) + 1);
  // the seed is public now: the panel a draw gives without the attacker's moves...
  const snap = await w.conn.networkHelpers.takeSnapshot();
  await drawPanel(w.a.H1.c, { disputeGame: w.d.disputeGame, disputeId: id });
  const untouched = (await getDispute(w.a.buyer.c.public, { disputeGame: w.d.disputeGame, disputeId: id })).panel.map((x) => getAddress(x));
  await snap.restore();
  // ...and with them: six fresh sybil bonds and the old sybil's exit, all in view of the seed
  for (const n of late) await postBond(w.a[n].c, { auditorRegistry: w.d.auditorRegistry, amount: parseEther("20") });
  await requestExit(w.a.S1.c, { auditorRegistry: w.d.auditorRegistry });
  await drawPanel(w.a.S2.c, { disputeGame: w.d.disputeGame, disputeId: id });
  const panel = (await getDispute(w.a.buyer.c.public, { disputeGame: w.d.disputeGame, disputeId: id })).panel.map((x) => getAddress(x));
  if (panel.join() !== untouched.join()) throw new AttackSucceeded(`the sybils' bonds/exit after the seed changed the panel: ${untouched} -> ${panel}`);
  const sybilSet = new Set(sybils.map((x) => x.address));
  const { outcome } = await playPanel(w, id, (m) => (sybilSet.has(m) ? "Valid" : "honest"));
  const names = panel.map((x) => Object.values(w.a).find((y) => y.address === x)!.name).join(", ");
  const row = await measure(w, s, before, "4 panel picked after the seed", `panel [${names}] identical with and without 6 sybil bonds + 1 exit after the seed (snapshot at challengedAt, activation delay); sybils vote Valid: ${outcome}`, DECLARED);
  return atLeastNonChallenger(row);
}

// ---------------------------------------------------------------- rows 15 and 18: an honest dispute with S1 drawn

/** Rows 15 and 18's world: five honest auditors and the provider's sybil S1, a stale job with both segments committed. */
async function s1World() {
  const w = await newWorld({ funded: ["buyer", "provider", "honestChallenger", "H1", "H2", "H3", "H4", "H5", "S1"], auditors: ["H1", "H2", "H3", "H4", "H5", "S1"] });
  const s = sides(w, [w.a.provider, w.a.S1], w.a.honestChallenger);
  const { before, jobId, trace } = await startJob(w, s, 2);
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  return { w, s, before, jobId };
}

/**
 * The honest challenger's dispute of `step` (default 2) with its panel drawn, re-played one block later (from a
 * snapshot) until the draw holds S1: the attacks of rows 15, 18 and 25 are conditional on that draw. At most 16 draws.
 */
async function challengeUntilS1Drawn(w: World, jobId: bigint, step = 2, who: Actor = w.a.honestChallenger): Promise<{ id: bigint; panel: Address[]; draws: number }> {
  const pub = w.a.buyer.c.public;
  const game = w.d.disputeGame;
  for (let draws = 1; ; ++draws) {
    const snap = await w.conn.networkHelpers.takeSnapshot();
    const id = await challengeStep(w, who, jobId, step);
    const d0 = await getDispute(pub, { disputeGame: game, disputeId: id });
    await w.mine(Number(d0.seedBlock - (await pub.getBlockNumber())) + 1);
    await drawPanel(w.a.H1.c, { disputeGame: game, disputeId: id });
    const panel = (await getDispute(pub, { disputeGame: game, disputeId: id })).panel.map((x) => getAddress(x));
    if (panel.includes(w.a.S1.address)) return { id, panel, draws };
    if (draws >= 16) throw new Error(`S1 not drawn in ${draws} draws`);
    await snap.restore();
    await w.mine(1);
  }
}

// ---------------------------------------------------------------- 15: a concession timed after the reveals

/**
 * The provider's old sybil auditor S1 sits on the panel of an honest dispute on the faulty step and votes Valid. A
 * concession counts no vote, so a provider that could concede after seeing the reveals would give S1 a free vote
 * (concede when it loses: no forfeit, and the honest majority earns no fee; keep PanelValid when it wins). The bench
 * needs S1 on the panel, so it re-plays the challenge one block later until the draw holds it (the attack is
 * conditional on that draw); the concession is then refused after the commits and after the reveals.
 */
export async function concedeAfterReveals(): Promise<Row> {
  const { w, s, before, jobId } = await s1World();
  const pub = w.a.buyer.c.public;
  const game = w.d.disputeGame;
  const { id, panel, draws } = await challengeUntilS1Drawn(w, jobId);
  const bond0 = (await getAuditor(pub, { auditorRegistry: w.d.auditorRegistry, auditor: w.a.S1.address })).bond;
  const seg = await segmentOf(w, jobId, 2);
  const byAddress = new Map(Object.values(w.a).map((x) => [x.address, x] as const));
  const ballots = panel.map((m) => {
    const vote: PanelVote = m === w.a.S1.address ? "Valid" : declaredVerdict(jobId, seg.commit.stateHashes, seg.firstStep, 2, seg.prevEnd);
    return { m: byAddress.get(m)!, vote, salt: newSalt() };
  });
  for (const b of ballots) await commitVote(b.m.c, { disputeGame: game, disputeId: id, commitment: voteCommitment(b.vote, b.salt, b.m.address) });
  const e1 = await refused("concede once every member committed", concede(w.a.provider.c, { disputeGame: game, disputeId: id }), "DisputeGameConcessionClosed");
  for (const b of ballots) await revealVote(b.m.c, { disputeGame: game, disputeId: id, vote: VOTE_VALUE[b.vote], salt: b.salt });
  await refused("concede after the reveals, before the resolve", concede(w.a.provider.c, { disputeGame: game, disputeId: id }), "DisputeGameConcessionClosed");
  await resolveDispute(w.a.H1.c, { disputeGame: game, disputeId: id });
  // S1's Valid made the Fault a split: appealed to a larger panel, where S1 votes Valid again and the honest members
  // the truth, until the last round settles and judges every round
  const appealed = (await getDispute(pub, { disputeGame: game, disputeId: id })).status === "Open";
  if (appealed) await playPanel(w, id, (m) => (m === w.a.S1.address ? "Valid" : "honest"));
  const bond1 = (await getAuditor(pub, { auditorRegistry: w.d.auditorRegistry, auditor: w.a.S1.address })).bond;
  if (bond1 >= bond0) throw new AttackSucceeded(`S1 lost the vote and kept its bond ${tokens(bond0)}`);
  const names = panel.map((x) => byAddress.get(x)!.name).join(", ");
  const votes = ballots.map((b) => `${b.m.name} ${b.vote}`).join(", ");
  const row = await measure(
    w,
    s,
    before,
    "15 concede after the reveals",
    `panel [${names}] (S1 drawn at draw ${draws}); votes ${votes}; concede refused ${e1} after the commits and after the reveals${appealed ? "; the split Fault was appealed (S1 Valid in every round)" : ""}: ${await outcomeOf(w, id)}, S1 forfeited ${tokens(bond0 - bond1)}, the majority earned its fees`,
    DECLARED,
  );
  return atLeastNonChallenger(row);
}

// ---------------------------------------------------------------- 16, 17, 18: holes found by a later review

/**
 * A lock too small to pay the panel: a job with a 1-wei stake (posted by the provider's own buyer address, or by a
 * buyer who under-quoted; here the bench's buyer), and one a wei below the floor lam L = n f, so that a fault would pay a challenger share below the panel's fees (every honest
 * challenger would pay the difference, so nobody would catch its cheat). acceptJob refuses both; the side cancels.
 */
export async function lockCannotPayPanel(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider"], auditors: [] });
  const s = sides(w, [w.a.provider]);
  const before = await snapshot(w, everyone(s));
  const fees = w.params.panelFee * BigInt(w.params.panelSize);
  const floor = (fees * 10_000n + LAM - 1n) / LAM; // least L with L * lam / 10,000 >= n f
  const errs: string[] = [];
  for (const requiredStake of [1n, floor - 1n]) {
    const jobId = await postGameJob(w, { ...GAME_POLICY, requiredStake });
    errs.push(await refused(`acceptJob of a ${requiredStake}-wei lock`, acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId }), "JobMarketLockCannotPayPanel"));
    await cancelJob(w.a.buyer.c, { jobMarket: w.d.jobMarket, jobId });
  }
  return measure(w, s, before, "16 lock too small to pay the panel", `impossible: ${errs[0]} for a 1-wei lock and for ${tokens(floor - 1n)} (lam L one wei below n f = ${tokens(fees)}; the floor itself is ${tokens(floor)}); the buyer cancelled both`, NO_TRACE);
}

/**
 * Panel re-rolls by lapsing seeds, and the choice of a reseed: with the honest bots offline, the provider (with two
 * bonded sybil auditors among seven) sees the panel the first seed of an honest dispute on its faulty step would draw
 * (the seed is public once its block is mined; here a draw inside a snapshot), lets that seed lapse (256 blocks) and
 * asks for a new draw. The rule: asking gains nothing, so the draw is refused or gives the very panel the first seed
 * gave; a different panel is a second look the favoured party chose (best of two: for 2 of 7, a sybil majority goes
 * from 1/7 to 13/49) and the row fails. A seed is never re-anchored (DisputeGameSeedExpired), so the dispute ends
 * NoDecision with no panel, and the honest challenger's next challenge is decided by a fresh panel.
 */
export async function panelReroll(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "honestChallenger", "H1", "H2", "H3", "H4", "H5", "S1", "S2"], auditors: ["H1", "H2", "H3", "H4", "H5", "S1", "S2"] });
  const s = sides(w, [w.a.provider, w.a.S1, w.a.S2], w.a.honestChallenger);
  const { before, jobId, trace } = await startJob(w, s, 2);
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  const pub = w.a.buyer.c.public;
  const game = w.d.disputeGame;
  const sybils = new Set([w.a.S1.address, w.a.S2.address]);
  const names = (p: readonly Address[]) => p.map((x) => Object.values(w.a).find((y) => y.address === getAddress(x))?.name ?? x).join(", ");
  const id = await challengeStep(w, w.a.honestChallenger, jobId, 2);
  const d0 = await getDispute(pub, { disputeGame: game, disputeId: id });
  await w.mine(Number(d0.seedBlock - (await pub.getBlockNumber())) + 1);
  // the panel the first seed draws, as the provider sees it before anyone draws
  const look = await w.conn.networkHelpers.takeSnapshot();
  await drawPanel(w.a.provider.c, { disputeGame: game, disputeId: id });
  const first = (await getDispute(pub, { disputeGame: game, disputeId: id })).panel.map((x) => getAddress(x));
  await look.restore();
  // it lets the seed lapse and asks for the one reseed
  await w.mine(258);
  let choice: string;
  let reseeds = 0;
  let err = "";
  try {
    await drawPanel(w.a.provider.c, { disputeGame: game, disputeId: id });
  } catch (e) {
    err = await refused("the reseed after a lapse the provider chose", Promise.reject(e));
  }
  let d = await getDispute(pub, { disputeGame: game, disputeId: id });
  if (err) choice = `the draw after the lapse refused ${err} (no reseed)`;
  else {
    if (!d.panel.length) {
      ++reseeds;
      await w.mine(Number(d.seedBlock - (await pub.getBlockNumber())) + 1);
      await drawPanel(w.a.provider.c, { disputeGame: game, disputeId: id });
      d = await getDispute(pub, { disputeGame: game, disputeId: id });
    }
    const second = d.panel.map((x) => getAddress(x));
    if ([...second].sort().join() !== [...first].sort().join()) {
      throw new AttackSucceeded(`the provider let the first seed lapse and the reseed drew another panel: [${names(first)}] -> [${names(second)}] (best of two, chosen by the party it favours)`);
    }
    choice = `the reseed after its lapse drew the same panel [${names(second)}]`;
  }
  if (!d.panel.length) {
    // no panel: each further lapse is refused, then the dispute ends NoDecision
    for (let tries = 0; tries < 5 && !err; ++tries) {
      d = await getDispute(pub, { disputeGame: game, disputeId: id });
      await w.mine(Number(d.seedBlock - (await pub.getBlockNumber())) + 258);
      try {
        await drawPanel(w.a.provider.c, { disputeGame: game, disputeId: id });
        ++reseeds;
      } catch (e) {
        err = await refused("a second reseed", Promise.reject(e), "DisputeGameSeedExpired");
      }
    }
    if (!err) throw new AttackSucceeded(`the provider re-anchored the seed ${reseeds} times`);
    d = await getDispute(pub, { disputeGame: game, disputeId: id });
    await w.warpTo(d.revealDeadline + 1n);
    await resolveDispute(w.a.H1.c, { disputeGame: game, disputeId: id });
    const nd = await outcomeOf(w, id);
    const again = await challengeStep(w, w.a.honestChallenger, jobId, 2);
    const { outcome } = await playPanel(w, again, (m) => (sybils.has(m) ? "Valid" : "honest"));
    const row = await measure(w, s, before, "17 panel re-roll and reseed choice", `${choice}${reseeds ? `; ${reseeds} reseed(s)` : ""}: ${nd} with no panel; the honest next challenge: ${outcome}`, DECLARED);
    return atLeastNonChallenger(row);
  }
  const { outcome } = await playPanel(w, id, (m) => (sybils.has(m) ? "Valid" : "honest"));
  const row = await measure(w, s, before, "17 panel re-roll and reseed choice", `${choice}; sybils vote Valid: ${outcome}`, DECLARED);
  return atLeastNonChallenger(row);
}

/** The challenge rounds the challenger bot opens on one segment by default (`pouw auditor run --max-challenge-rounds`). */
const BOT_CHALLENGE_ROUNDS = 3;

/**
 * Tie exhaustion: the provider's sybil auditor S1 sits on every panel of the honest challenger's disputes of its faulty
 * step (the script re-plays each challenge until the draw holds S1) and votes Valid; one honest member per panel stays
 * silent (offline), the third votes Fault: 1-1. The honest challenger challenges again after each NoDecision, as its
 * bot does, up to the bot's 3 rounds; then the window runs out and the provider asks to be paid. The rule asked for:
 * a silent seat is redrawn (its member forfeits) instead of ending the round in a tie, so the step is decided Fault;
 * every tie is judged (S1's tie votes forfeit); a job whose disputes exhaust their rounds never pays the provider.
 */
export async function tieExhaustion(): Promise<Row> {
  const { w, s, before, jobId } = await s1World();
  const pub = w.a.buyer.c.public;
  const bondOf = async () => (await getAuditor(pub, { auditorRegistry: w.d.auditorRegistry, auditor: w.a.S1.address })).bond;
  const bond0 = await bondOf();
  const silentOnes = new Set<Address>();
  const outcomes: string[] = [];
  for (let round = 0; round < BOT_CHALLENGE_ROUNDS; ++round) {
    const { id, panel } = await challengeUntilS1Drawn(w, jobId);
    const silent = panel.find((m) => m !== w.a.S1.address)!;
    silentOnes.add(silent);
    const r = await playPanel(w, id, (m) => (m === w.a.S1.address ? "Valid" : m === silent ? "silent" : "honest"));
    outcomes.push(r.outcome);
    if (r.outcome !== "NoDecision") break;
  }
  let job = await getJob(pub, { jobMarket: w.d.jobMarket, jobId });
  let end = `job ${job.status}`;
  if (job.status === "Committed") {
    await w.warpTo(BigInt(job.deadline) + 1n);
    try {
      await finalize(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
      job = await getJob(pub, { jobMarket: w.d.jobMarket, jobId });
      end = `the window ran out and the provider finalized: job ${job.status}`;
    } catch (e) {
      end = `finalize after the window refused ${await refused("finalize after the ties", Promise.reject(e))}`;
    }
  }
  const bond1 = await bondOf();
  // the silent members are the attack's premise (honest auditors offline), and silence forfeits by rule: not counted
  // as honest parties slashed by the attack
  const counted = { ...s, honest: s.honest.filter((a) => !silentOnes.has(a.address)) };
  const row = await measure(
    w,
    counted,
    before,
    "18 tie exhaustion",
    `each round S1 Valid, one honest member silent (forfeits by rule, left out of honest slashed), the others the truth: ${outcomes.join(", ")}; ${end}; S1 forfeited ${tokens(bond0 - bond1)}`,
    DECLARED,
  );
  if (outcomes.includes("NoDecision") && bond1 >= bond0) throw new AttackSucceeded(`18: ${outcomes.filter((o) => o === "NoDecision").length} ties, none judged: S1 kept its bond (${end})`);
  return row;
}

/**
 * Tie exhaustion against an honest provider: a griefer (challenger sybilA and auditor S1) disputes a valid step of an
 * honest job, the bot's 3 rounds, each with S1 on the panel voting Fault and one honest member silent (offline): 1-1.
 * A tie is appealed (a larger panel, the tied round's members excluded where the pool allows), never a NoDecision
 * while rounds are left, so no re-open is spent and the job cannot be run out of them: the honest provider must end
 * Finalized, paid in full with its lock whole (slashed 0), and the griefer lose its bonds and S1's forfeits.
 */
export async function tieExhaustionHonest(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "sybilA", "H1", "H2", "H3", "H4", "H5", "S1"], auditors: ["H1", "H2", "H3", "H4", "H5", "S1"], bond: parseEther("200") });
  const s = sides(w, [w.a.sybilA, w.a.S1], undefined, [w.a.provider]);
  const { before, jobId, trace } = await startJob(w, s, undefined);
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  const pub = w.a.buyer.c.public;
  const deadline0 = (await getJob(pub, { jobMarket: w.d.jobMarket, jobId })).deadline;
  const silentOnes = new Set<Address>();
  const outcomes: string[] = [];
  for (let round = 0; round < BOT_CHALLENGE_ROUNDS; ++round) {
    const { id, panel } = await challengeUntilS1Drawn(w, jobId, 1, w.a.sybilA);
    const silent = panel.find((m) => m !== w.a.S1.address)!;
    silentOnes.add(silent);
    const r = await playPanel(w, id, (m) => (m === w.a.S1.address ? "Fault" : m === silent ? "silent" : "honest"));
    outcomes.push(`${r.outcome} in ${r.rounds} rounds`);
  }
  let job = await getJob(pub, { jobMarket: w.d.jobMarket, jobId });
  if (job.deadline !== deadline0) throw new AttackSucceeded(`18b: the griefer's ties re-opened the window (${job.deadline} != ${deadline0}, re-opens spent)`);
  await w.warpTo(BigInt(job.deadline) + 1n);
  const credit0 = await pub.readContract({ address: w.d.jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [w.a.provider.address, w.d.token] });
  await finalize(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
  const credit1 = await pub.readContract({ address: w.d.jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [w.a.provider.address, w.d.token] });
  job = await getJob(pub, { jobMarket: w.d.jobMarket, jobId });
  if (job.status !== "Finalized" || credit1 - credit0 !== job.payment) throw new AttackSucceeded(`18b: the honest provider was not paid (job ${job.status}, paid ${tokens(credit1 - credit0)} of ${tokens(job.payment)})`);
  const counted = { ...s, honest: s.honest.filter((a) => !silentOnes.has(a.address)) };
  return measure(
    w,
    counted,
    before,
    "18b tie exhaustion against an honest provider",
    `griefer's disputes of valid step 1, each S1 Fault and one honest member silent (forfeits by rule, left out of honest slashed): ${outcomes.join(", ")}; no re-open spent; job ${job.status}, honest provider paid ${tokens(credit1 - credit0)}, lock released whole`,
    DECLARED,
  );
}

/**
 * Exhausted rounds: the provider's own auditors S1..S3 are the whole bonded pool (every honest auditor gone) and stay
 * silent on every panel of the honest challenger's disputes of its faulty step, so each dispute ends NoDecision (no
 * vote to count). The challenger challenges again after each, as its bot does (3 rounds); before, the window then ran
 * out and the cheater finalized and was paid. The rule: a job whose disputes exhaust their re-opens is never paid by
 * default: it ends Unresolved (escrow back to the buyer, lock released, no pay, no slash), and finalize is refused.
 */
export async function exhaustedRounds(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "honestChallenger", "S1", "S2", "S3"], auditors: ["S1", "S2", "S3"], bond: parseEther("200") });
  const s = sides(w, [w.a.provider, w.a.S1, w.a.S2, w.a.S3], w.a.honestChallenger);
  const { before, jobId, trace } = await startJob(w, s, 2);
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  const pub = w.a.buyer.c.public;
  const outcomes: string[] = [];
  for (let round = 0; round < BOT_CHALLENGE_ROUNDS; ++round) {
    const id = await challengeStep(w, w.a.honestChallenger, jobId, 2);
    const r = await playPanel(w, id, () => "silent");
    outcomes.push(r.outcome);
  }
  const job = await getJob(pub, { jobMarket: w.d.jobMarket, jobId });
  if (job.status !== "Unresolved") throw new AttackSucceeded(`after ${outcomes.join(", ")} the job is ${job.status}, not Unresolved`);
  await w.warpTo(BigInt(job.deadline) + 1n);
  const e = await refused("finalize of the Unresolved job", finalize(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId }), "JobMarketWrongStatus");
  const row = await measure(
    w,
    s,
    before,
    "18c exhausted rounds",
    `the provider's S1..S3 (the whole pool) silent on every panel: ${outcomes.join(", ")} (the challenger's 3 rounds); job ${job.status}: escrow back to the buyer, lock released, no pay; finalize refused ${e}`,
    DECLARED,
  );
  return row;
}

/**
 * Silent captured panels against an honest provider: a griefer (challenger sybilA, auditors S1..S3) disputes a valid
 * step of an honest job, the bot's 3 rounds; the script re-plays each challenge a block later until the draw seats only
 * the griefer's auditors (a captured first panel: 1 in 10 with 3 of 5), which stay silent in every round. Before, a
 * silent first round ended NoDecision and spent one of the job's re-opens: three captures ended the honest job
 * Unresolved (no pay) for 3 forfeits each. The rule: a silent round is appealed like a tie, so the honest members of
 * the larger round 2 decide (PanelValid): no re-open is spent, the honest provider must end Finalized and paid in full,
 * and the griefer lose its bonds and its silent members' forfeits.
 */
export async function silentCapturedPanels(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "sybilA", "H1", "H2", "S1", "S2", "S3"], auditors: ["H1", "H2", "S1", "S2", "S3"], bond: parseEther("1000") });
  const s = sides(w, [w.a.sybilA, w.a.S1, w.a.S2, w.a.S3], undefined, [w.a.provider]);
  const { before, jobId, trace } = await startJob(w, s, undefined);
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  const pub = w.a.buyer.c.public;
  const game = w.d.disputeGame;
  const griefers = new Set<Address>([w.a.S1.address, w.a.S2.address, w.a.S3.address]);
  const deadline0 = (await getJob(pub, { jobMarket: w.d.jobMarket, jobId })).deadline;
  const outcomes: string[] = [];
  let draws = 0;
  for (let round = 0; round < BOT_CHALLENGE_ROUNDS; ++round) {
    let id = 0n;
    for (let tries = 1; ; ++tries) {
      const snap = await w.conn.networkHelpers.takeSnapshot();
      id = await challengeStep(w, w.a.sybilA, jobId, 1);
      const d0 = await getDispute(pub, { disputeGame: game, disputeId: id });
      await w.mine(Number(d0.seedBlock - (await pub.getBlockNumber())) + 1);
      await drawPanel(w.a.H1.c, { disputeGame: game, disputeId: id });
      const panel = (await getDispute(pub, { disputeGame: game, disputeId: id })).panel.map((x) => getAddress(x));
      ++draws;
      if (panel.every((m) => griefers.has(m))) break;
      if (tries >= 80) throw new Error(`no captured panel in ${tries} draws`);
      await snap.restore();
      await w.mine(1);
    }
    const r = await playPanel(w, id, (m) => (griefers.has(m) ? "silent" : "honest"));
    outcomes.push(`${r.outcome} in ${r.rounds} rounds`);
  }
  let job = await getJob(pub, { jobMarket: w.d.jobMarket, jobId });
  if (job.status === "Unresolved") throw new AttackSucceeded(`18d: three silent captured panels ended the honest job Unresolved (${outcomes.join(", ")})`);
  if (job.deadline !== deadline0) throw new AttackSucceeded(`18d: the silent panels re-opened the window (${job.deadline} != ${deadline0}, re-opens spent)`);
  await w.warpTo(BigInt(job.deadline) + 1n);
  const credit0 = await pub.readContract({ address: w.d.jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [w.a.provider.address, w.d.token] });
  await finalize(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
  const credit1 = await pub.readContract({ address: w.d.jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [w.a.provider.address, w.d.token] });
  job = await getJob(pub, { jobMarket: w.d.jobMarket, jobId });
  if (job.status !== "Finalized" || credit1 - credit0 !== job.payment) throw new AttackSucceeded(`18d: the honest provider was not paid (job ${job.status}, paid ${tokens(credit1 - credit0)} of ${tokens(job.payment)})`);
  return measure(
    w,
    s,
    before,
    "18d silent captured panels",
    `griefer's disputes of valid step 1, each first panel all S1..S3 (${draws} draws for 3 captures), silent in every round: ${outcomes.join(", ")}; no re-open spent; job ${job.status}, honest provider paid ${tokens(credit1 - credit0)}, lock released whole`,
    DECLARED,
  );
}

/**
 * A forfeited voter keeps voting: the provider's sybil auditor S1 sits on the panels of two honest disputes of its
 * faulty segment (steps 2 and 3; the script re-plays each challenge until the draw holds S1). In the first S1 votes
 * Valid, loses every round and forfeits. Then it votes Valid in the second, still open. The rule: a forfeited auditor
 * with less than one forfeit of bond left (nothing at stake) is out of every open panel, so its later vote is refused or
 * not counted; one that still holds a full forfeit keeps its vote, which must then lose and cost it another forfeit.
 */
export async function forfeitedVoter(): Promise<Row> {
  const { w, s, before, jobId } = await s1World();
  const pub = w.a.buyer.c.public;
  const game = w.d.disputeGame;
  const S1 = w.a.S1;
  const bondOf = async () => (await getAuditor(pub, { auditorRegistry: w.d.auditorRegistry, auditor: S1.address })).bond;
  const one = await challengeUntilS1Drawn(w, jobId, 2);
  const two = await challengeUntilS1Drawn(w, jobId, 3);
  const bond0 = await bondOf();
  const first = await playPanel(w, one.id, (m) => (m === S1.address ? "Valid" : "honest"));
  const bond1 = await bondOf();
  if (bond1 >= bond0) throw new Error(`S1 was not forfeited in dispute ${one.id} (${first.outcome})`);
  let stillAtStake = false;
  const d = await getDispute(pub, { disputeGame: game, disputeId: two.id });
  let how: string;
  if (!d.panel.map((x) => getAddress(x)).includes(S1.address)) how = `S1 no longer on dispute ${two.id}'s panel`;
  else {
    const seg = await segmentOf(w, jobId, 3);
    const byAddress = new Map(Object.values(w.a).map((x) => [x.address, x] as const));
    const ballots = d.panel.map((x) => {
      const m = byAddress.get(getAddress(x))!;
      const vote: PanelVote = m.address === S1.address ? "Valid" : declaredVerdict(jobId, seg.commit.stateHashes, seg.firstStep, 3, seg.prevEnd);
      return { m, vote, salt: newSalt() };
    });
    let refusedAs = "";
    for (const b of ballots) {
      const p = commitVote(b.m.c, { disputeGame: game, disputeId: two.id, commitment: voteCommitment(b.vote, b.salt, b.m.address) });
      if (b.m.address !== S1.address) await p;
      else refusedAs = await p.then(() => "", (e: unknown) => refused("the forfeited member's commit", Promise.reject(e)));
    }
    for (const b of ballots) {
      if (b.m.address === S1.address && refusedAs) continue;
      const p = revealVote(b.m.c, { disputeGame: game, disputeId: two.id, vote: VOTE_VALUE[b.vote], salt: b.salt });
      if (b.m.address !== S1.address) await p;
      else refusedAs = await p.then(() => "", (e: unknown) => refused("the forfeited member's reveal", Promise.reject(e)));
    }
    const tally = await getDispute(pub, { disputeGame: game, disputeId: two.id });
    // S1 still holding a full panelForfeit of bond has something at stake: its vote counts by the rule
    // (docs/disputes.md "Forfeited members"), and the row instead requires that the vote loses and costs it another forfeit
    stillAtStake = bond1 >= (await getDisputeParams(pub, { disputeGame: game })).panelForfeit;
    if (!refusedAs && tally.validVotes > 0 && !stillAtStake) {
      throw new AttackSucceeded(`S1, forfeited ${tokens(bond0 - bond1)} in dispute ${one.id}, voted Valid in its other open panel (dispute ${two.id}) and the vote counted (${tally.validVotes} Valid, ${tally.faultVotes} Fault)`);
    }
    how = refusedAs ? `S1's vote in dispute ${two.id} refused ${refusedAs}` : stillAtStake ? `S1 kept ${tokens(bond1)} >= one forfeit at stake, so its vote counted` : `S1's vote in dispute ${two.id} not counted`;
  }
  const second = await playPanel(w, two.id, (m) => (m === S1.address ? "Valid" : "honest"));
  if (stillAtStake) {
    const bond2 = await bondOf();
    if (second.outcome !== "PanelFault" || bond2 >= bond1) {
      throw new AttackSucceeded(`S1's counted Valid vote in dispute ${two.id} (with a forfeit still at stake) ended ${second.outcome} and cost it ${tokens(bond1 - bond2)}`);
    }
    how += `, lost (${second.outcome}) and forfeited another ${tokens(bond1 - bond2)}`;
  }
  const row = await measure(w, s, before, "25 forfeited voter", `S1 on both panels; dispute ${one.id}: ${first.outcome}, S1 forfeited ${tokens(bond0 - bond1)}; ${how}; dispute ${two.id}: ${second.outcome}`, DECLARED);
  return atLeastNonChallenger(row);
}

// ---------------------------------------------------------------- 5, 6, 11: liveness

export async function unboundedFreeze(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "sybilA", "sybilB"] });
  const s = sides(w, [w.a.provider, w.a.sybilA, w.a.sybilB]);
  const { before, jobId, trace } = await startJob(w, s, undefined);
  await commit(w, jobId, trace, 0); // segment 1 never comes
  const deadline = (await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId })).deadline;
  const a = await prepareChallenge(w, w.a.sybilA, jobId, 1);
  const b = await prepareChallenge(w, w.a.sybilB, jobId, 2);
  await w.nextBlockAt(deadline);
  const first = await a.send(); // mined at the deadline: the last second the job can be frozen
  await w.warpTo(deadline + 1n);
  const e1 = await refused("a second sybil dispute past the deadline", b.send(), "JobMarketSegmentDeadlinePassed");
  await refused("reportTimeout while the sybil dispute is open", reportTimeout(w.a.buyer.c, { jobMarket: w.d.jobMarket, jobId }), "JobMarketFrozen");
  await refused("a late segment", commit(w, jobId, trace, 1), "JobMarketSegmentLate");
  const { outcome } = await playPanel(w, first, honestPanel);
  await reportTimeout(w.a.buyer.c, { jobMarket: w.d.jobMarket, jobId });
  const timedOutAt = await w.now();
  await refused("the provider takes the job back", acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId }), "JobMarketWrongStatus");
  const until = (await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId })).deadline;
  await w.warpTo(until + 1n);
  await reopenJob(w.a.buyer.c, { jobMarket: w.d.jobMarket, jobId });
  const reopenedAt = await w.now();
  await cancelJob(w.a.buyer.c, { jobMarket: w.d.jobMarket, jobId });
  const Dsec = BigInt(w.params.commitWindowSeconds + w.params.revealWindowSeconds);
  const W = BigInt(GAME_POLICY.challengeWindow);
  const bound = Dsec + 3n * (W + Dsec);
  if (reopenedAt - deadline > bound) throw new AttackSucceeded(`job re-opened ${reopenedAt - deadline} s after its deadline, past the bound ${bound} s`);
  return measure(
    w,
    s,
    before,
    "5 unbounded freeze",
    `no freeze past the deadline (${e1}); sybil dispute ${outcome}, timeout at deadline+${timedOutAt - deadline} s, re-opened at deadline+${reopenedAt - deadline} s <= bound D+3(W+D) = ${bound} s, buyer cancelled`,
    DECLARED,
  );
}

export async function noDecisionAfterWindow(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "sybilA", "honestChallenger"] });
  const s = sides(w, [w.a.provider, w.a.sybilA], w.a.honestChallenger);
  const { before, jobId, trace } = await startJob(w, s, 6);
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  const windowEnd = (await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId })).deadline;
  const a = await prepareChallenge(w, w.a.sybilA, jobId, 1);
  await w.nextBlockAt(windowEnd);
  const id = await a.send(); // the last second of the window
  // nobody draws the panel (the auditors are offline): the seed's block hash expires and resolve finds no panel
  await w.mine(300);
  const d = await getDispute(w.a.buyer.c.public, { disputeGame: w.d.disputeGame, disputeId: id });
  await w.warpTo(d.revealDeadline + 1n);
  await resolveDispute(w.a.sybilA.c, { disputeGame: w.d.disputeGame, disputeId: id });
  const nd = await outcomeOf(w, id);
  const e = await refused("finalize after the NoDecision", finalize(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId }), "JobMarketChallengeWindowOpen");
  const reopened = (await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId })).deadline;
  // past the original window, the honest challenger disputes the faulty step in the re-opened one
  const honest = await challengeStep(w, w.a.honestChallenger, jobId, 6);
  const { outcome } = await playPanel(w, honest, honestPanel);
  const row = await measure(
    w,
    s,
    before,
    "6 NoDecision after the window",
    `sybil's last-second dispute ${nd} (panel unavailable) after the window; window re-opened to +${reopened - windowEnd} s, finalize refused ${e}; honest challenge of step 6: ${outcome}`,
    DECLARED,
  );
  return atLeastNonChallenger(row);
}

export async function abandonmentLaundering(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "honestChallenger"] });
  const s = sides(w, [w.a.provider], w.a.honestChallenger);
  const { before, jobId, trace } = await startJob(w, s, 2);
  await commit(w, jobId, trace, 0); // faulty segment 0, then the provider walks away
  const deadline = (await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId })).deadline;
  await w.warpTo(deadline + 1n);
  await reportTimeout(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId }); // its own timeout, the first second it can
  const j = await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId });
  if (j.status !== "TimedOut") throw new AttackSucceeded(`the timeout left the job ${j.status}, not TimedOut`);
  const e1 = await refused("re-accept the timed-out job", acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId }), "JobMarketWrongStatus");
  await refused("commit the next segment", commit(w, jobId, trace, 1), "JobMarketWrongStatus");
  await refused("re-open at once", reopenJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId }), "JobMarketChallengeWindowOpen");
  await w.increase(GAME_POLICY.challengeWindow / 2);
  const id = await challengeStep(w, w.a.honestChallenger, jobId, 2);
  const { outcome } = await playPanel(w, id, honestPanel);
  const row = await measure(
    w,
    s,
    before,
    "11 abandonment laundering",
    `own timeout at deadline+1 s: job TimedOut until +W, re-accept refused ${e1}; honest challenge of step 2 half a window later: ${outcome}`,
    DECLARED,
  );
  // the timeout slash (10%) went to the buyer, then the rest of the lock by shares
  return atLeastNonChallenger(row, (L * 9n) / 10n);
}

// ---------------------------------------------------------------- 7, 8, 9: attestation, admin, corpus

export async function selfAttestation(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "H1", "H2", "H3", "H4", "H5", "S1", "S2"] });
  const own = [w.a.S1, w.a.S2];
  const s = sides(w, [w.a.provider, ...own]);
  const before = await snapshot(w, everyone(s));
  // two refundable bonds under the provider's control, posted right before its request
  for (const x of own) await postBond(x.c, { auditorRegistry: w.d.auditorRegistry, amount: parseEther("20") });
  const evidenceHash = keccak256(toHex("provider evidence"));
  // every request burns the registry's fee (no free committee re-rolls from other addresses: docs/panels.md)
  const fee = await getRequestFee(w.a.provider.c.public, { providerRegistry: w.d.providerRegistry });
  await approveToken(w.a.provider.c, { token: w.d.token, spender: w.d.providerRegistry, amount: fee });
  const r = await requestAttestation(w.a.provider.c, { providerRegistry: w.d.providerRegistry, evidenceHash, sessionKey: w.a.provider.address });
  await w.mine(3);
  await drawAttestationCommittee(w.a.buyer.c, { providerRegistry: w.d.providerRegistry, requestId: r.requestId });
  const q = await getAttestationRequest(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, requestId: r.requestId });
  const committee = (q.committee ?? []).map((x) => getAddress(x));
  if (own.some((x) => committee.includes(x.address))) throw new AttackSucceeded("a bond posted after the activation window sits on the committee");
  const att = { provider: w.a.provider.address, requestId: r.requestId, tier: 1, band: 100, evidenceHash, expiresAt: (await w.now()) + 7n * 86_400n, issuedAt: await w.now() };
  const domain = providerRegistryDomain(BigInt(w.d.chainId), w.d.providerRegistry);
  const signatures = await Promise.all(own.map(async (x) => ({ signer: x.address, signature: await signAttestationVerified(x.c.account as LocalAccount, domain, att) })));
  const e1 = await refused("record tier 1 on the sybils' signatures", recordAttestation(w.a.provider.c, { providerRegistry: w.d.providerRegistry, attestation: att, signatures }), "ProviderRegistryNotCommitteeMember");
  // a job that asks for tier 1 stays out of reach
  const { jobId } = await createJob(w.a.buyer.c, {
    jobMarket: w.d.jobMarket,
    manifestHash: keccak256(toHex("m")),
    manifestUri: "cid:x",
    token: w.d.token,
    payment: parseEther("1"),
    policy: GAME_POLICY,
    terms: { minTier: 1, dataShareBps: 0, corpora: [] },
  });
  const e2 = await refused("accept a minTier-1 job", acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId }), "JobMarketTierTooLow");
  await cancelJob(w.a.buyer.c, { jobMarket: w.d.jobMarket, jobId });
  const names = committee.map((x) => Object.values(w.a).find((y) => y.address === x)?.name ?? x).join(", ");
  return measure(w, s, before, "7 self-attestation", `impossible: ${e1} (committee [${names}] drawn from the snapshot at the request; the request burned its fee); acceptJob(minTier 1) refused ${e2}`, NO_TRACE);
}

export async function adminDrain(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider"] });
  // the provider is honest here: the deployer is the thief
  const s: Sides = { side: [w.a.deployer], honest: [w.a.buyer, w.a.provider, ...honestAuditors(w)] };
  const before = await snapshot(w, everyone(s));
  const jobId = await postGameJob(w);
  await acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId }); // locked stake, free stake, an escrow, bonds
  const me = w.a.deployer.address;
  const thief = w.a.deployer.c;
  const errors = new Set<string>();
  const tryAll = async (what: string, p: Promise<unknown>) => errors.add(await refused(what, p));
  // the ABIs declare grantRole/revokeRole pure (they always revert); the thief sends them anyway, as raw calls
  const roleCall = (address: typeof w.d.stakeVault, functionName: "grantRole" | "revokeRole", role: Hex, who: typeof me) =>
    sendContractTx(thief, { address, abi: ROLE_ABI, functionName, args: [role, who] });
  for (const role of [ROLE_IDS.market, ROLE_IDS.slasher, ROLE_IDS.defaultAdmin]) await tryAll(`grantRole on StakeVault`, roleCall(w.d.stakeVault, "grantRole", role, me));
  await tryAll("grantRole on AuditorRegistry", roleCall(w.d.auditorRegistry, "grantRole", ROLE_IDS.dispute, me));
  await tryAll("grantRole on JobMarket", roleCall(w.d.jobMarket, "grantRole", ROLE_IDS.dispute, me));
  await tryAll("revokeRole on StakeVault", roleCall(w.d.stakeVault, "revokeRole", ROLE_IDS.market, w.d.jobMarket));
  await tryAll("re-wire StakeVault", sendContractTx(thief, { address: w.d.stakeVault, abi: stakeVaultAbi, functionName: "wire", args: [me, me] }));
  await tryAll("re-wire JobMarket", sendContractTx(thief, { address: w.d.jobMarket, abi: jobMarketAbi, functionName: "wire", args: [me, me] }));
  await tryAll("lock free stake on a job that does not exist", sendContractTx(thief, { address: w.d.stakeVault, abi: stakeVaultAbi, functionName: "lock", args: [w.a.provider.address, 999n, parseEther("50")] }));
  await tryAll("slash the lock to itself", sendContractTx(thief, { address: w.d.stakeVault, abi: stakeVaultAbi, functionName: "slash", args: [w.a.provider.address, jobId, L, [me], [L]] }));
  await tryAll("forfeit an auditor's bond to itself", sendContractTx(thief, { address: w.d.auditorRegistry, abi: auditorRegistryAbi, functionName: "forfeit", args: [w.a.H1.address, parseEther("20"), me] }));
  await tryAll("settle the job as a fault", sendContractTx(thief, { address: w.d.jobMarket, abi: jobMarketAbi, functionName: "settleProviderFault", args: [jobId] }));
  // the honest provider delivers and is paid; the buyer got what it paid for
  const trace = declaredTrace(jobId, STEPS);
  await commit(w, jobId, trace, 0);
  await commit(w, jobId, trace, 1);
  await w.increase(GAME_POLICY.challengeWindow + 1);
  await finalize(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
  return measure(w, s, before, "8 admin drain", `impossible: ${[...errors].join(" / ")} (no admin, wiring ended); the honest job then finalized`, DECLARED);
}

/** grantRole/revokeRole as plain nonpayable calls (the generated ABIs mark them pure: they always revert). */
const ROLE_ABI = [
  { type: "function", name: "grantRole", stateMutability: "nonpayable", inputs: [{ name: "role", type: "bytes32" }, { name: "account", type: "address" }], outputs: [] },
  { type: "function", name: "revokeRole", stateMutability: "nonpayable", inputs: [{ name: "role", type: "bytes32" }, { name: "account", type: "address" }], outputs: [] },
] as const;

export async function corpusSquatting(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "squatter", "contributor"], auditors: [] });
  const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));
  const manifest = parseManifest(tiny);
  const corpus = manifest.corpora[0]!;
  const payout = getAddress(corpus.payoutAddress);
  const s: Sides = { side: [w.a.squatter], honest: [w.a.buyer, w.a.provider, w.a.contributor], honestAddresses: [payout] };
  const before = await snapshot(w, everyone(s));
  // the squatter registers the corpus's digest first, paying itself
  const squat = await registerCorpus(w.a.squatter.c, { dataRegistry: w.d.dataRegistry, contentDigest: contentDigestOf(corpus.contentId), contentCid: corpus.contentId, licence: corpus.licence, payout: w.a.squatter.address, termsHash: keccak256(toHex("mine")) });
  const [reg] = await registerManifestCorpora(w.a.contributor.c, w.d.dataRegistry, manifest);
  const e1 = await refused("move the real registration's payout to the squatter", sendContractTx(w.a.squatter.c, { address: w.d.dataRegistry, abi: dataRegistryAbi, functionName: "setPayout", args: [reg!.corpusId, w.a.squatter.address] }), "DataRegistryNotPayout");
  // the buyer attaches the registration listed under the payout its manifest names (dataTermsFor)
  const t = await dataTermsFor(w.a.buyer.c.public, w.d, manifest, { mode: "require" });
  if (!t.attached) throw new Error(t.reason);
  const attached = t.terms.corpora.map((c) => c.corpusId);
  if (attached.includes(squat.corpusId)) throw new AttackSucceeded(`the buyer attached the squatter's corpus ${squat.corpusId}`);
  const { policy, payment } = await jobPolicyFor(manifest, { payment: parseEther("1"), dataShareBps: t.terms.dataShareBps, overrides: { challengeWindow: 600, requiredStake: parseEther("10") } });
  const { jobId } = await createJob(w.a.buyer.c, { jobMarket: w.d.jobMarket, manifestHash: keccak256(toHex("tiny")), manifestUri: "cid:x", token: w.d.token, payment, policy, terms: t.terms });
  w.jobs.push(jobId);
  await acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
  const trace = declaredTrace(jobId, policy.segments * policy.stepsPerSegment);
  for (let seg = 0; seg < policy.segments; seg++) await commit(w, jobId, trace, seg, policy.stepsPerSegment);
  await w.increase(policy.challengeWindow + 1);
  await finalize(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
  const row = await measure(w, s, before, "9 corpus squatting", "", DECLARED);
  const share = (await snapshot(w, [payout])).get(payout)!.total - before.get(payout)!.total;
  row.outcome = `impossible: the squatter's corpus ${squat.corpusId} is listed under its own payout only; the buyer attached corpus ${attached.join(", ")} (manifest payout), setPayout by the squatter refused ${e1}; the payout got ${tokens(share)}, the squatter 0`;
  return row;
}
