/**
 * Attacks that need more addresses than the roster holds, each an actor script over a fresh deployment
 * (bench/attacks/world.ts), in the style of game.ts: mass disputes by an attacker holding a fraction of the bonded
 * auditor pool against an honest provider, and the dilution of an honest challenger's reward by the provider's own
 * disputes on every other step of its job. Extra auditors and challenger addresses are dev accounts past the roster
 * (world.ts extraActors).
 */
import { parseEther } from "viem";
import { acceptJob, concede, DEFAULT_ACTIVATION_DELAY_SECONDS, drawPanel, finalize, getDispute, getJob, postBond, type JobPolicy } from "../../verifier/src/chain/index.ts";
import {
  AttackSucceeded,
  challengeStep,
  commit,
  declaredTrace,
  everyone,
  extraActors,
  fund,
  GAME_POLICY,
  measure,
  newWorld,
  playPanel,
  postGameJob,
  snapshot,
  tokens,
  type Actor,
  type Row,
  type World,
} from "./world.ts";

const K = GAME_POLICY.stepsPerSegment;
/** One challenger address holds at most this many open disputes on a job (DisputeGame.MAX_OPEN_PER_CHALLENGER). */
const OPEN_PER_CHALLENGER = 4;
/** Dev-account indexes past the roster (world.ts ROSTER ends at 19). */
const EXTRA_AUDITORS_FROM = 20;
const EXTRA_CHALLENGERS_FROM = 40;

/** A job of `steps` declared steps (segments of K), posted by the buyer and accepted by the provider. */
function policyOf(steps: number): JobPolicy {
  if (steps % K !== 0) throw new Error(`steps ${steps} is not a multiple of K = ${K}`);
  return { ...GAME_POLICY, segments: steps / K };
}

/** The challenger addresses needed to hold `n` disputes on one job: sybilA, sybilB, then extra dev accounts. */
async function challengers(w: World, n: number): Promise<Actor[]> {
  const need = Math.ceil(n / OPEN_PER_CHALLENGER);
  const extra = need > 2 ? await extraActors(w, "C", need - 2, EXTRA_CHALLENGERS_FROM) : [];
  for (const x of extra) await fund(w, x);
  return [w.a.sybilA, w.a.sybilB, ...extra].slice(0, need);
}

/** Opens a dispute on `step` as `who` and draws its panel at once (the seed block is 2 blocks on). */
async function openAndDraw(w: World, who: Actor, jobId: bigint, step: number): Promise<bigint> {
  const id = await challengeStep(w, who, jobId, step);
  const d = await getDispute(w.a.buyer.c.public, { disputeGame: w.d.disputeGame, disputeId: id });
  await w.mine(Number(d.seedBlock - (await w.a.buyer.c.public.getBlockNumber())) + 1);
  // INVARIANT (of the script): every panel is drawn within blockhash range of its seed, so no dispute is reseeded
  await drawPanel(w.a.H1.c, { disputeGame: w.d.disputeGame, disputeId: id });
  return id;
}

const countBy = (xs: readonly string[]) => [...new Set(xs)].map((x) => `${x} ${xs.filter((y) => y === x).length}`).join(", ");

/**
 * Mass disputes against an honest provider: the attacker holds `a` of the `n` bonded auditors (S1.. beside honest H1..
 * and extra honest auditors, all bonded before the activation delay) and, from its own challenger addresses, disputes
 * every step of an honest job of `steps` steps. Every panel is drawn by the rules; the attacker's members vote Fault,
 * the honest members Valid (the truth), and every appeal is played to its last round. The honest provider must end
 * with its lock whole and its payment (the job finalizes after its window); the attacker loses its bonds and
 * forfeits.
 */
export async function massDisputes(attack: string, a: number, n: number, steps: number): Promise<Row> {
  const attackers = (["S1", "S2", "S3", "S4", "S5", "S6", "S7"] as const).slice(0, a);
  const honestRoster = (["H1", "H2", "H3", "H4", "H5"] as const).slice(0, Math.min(5, n - a));
  const w = await newWorld({ funded: ["buyer", "provider", "sybilA", "sybilB", ...honestRoster, ...attackers], auditors: [...honestRoster, ...attackers] });
  const extraHonest = n - a > 5 ? await extraActors(w, "A", n - a - 5, EXTRA_AUDITORS_FROM) : [];
  for (const x of extraHonest) {
    await fund(w, x);
    await postBond(x.c, { auditorRegistry: w.d.auditorRegistry, amount: parseEther("20") });
  }
  if (extraHonest.length) await w.increase(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));
  const cs = await challengers(w, steps);
  const attackerAuditors = attackers.map((x) => w.a[x]);
  const side = [...cs, ...attackerAuditors];
  const honest = [w.a.buyer, w.a.provider, ...honestRoster.map((x) => w.a[x]), ...extraHonest];
  const s = { side, honest };
  const before = await snapshot(w, everyone(s));
  const policy = policyOf(steps);
  const jobId = await postGameJob(w, policy);
  await acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
  const trace = declaredTrace(jobId, steps);
  for (let seg = 0; seg < policy.segments; ++seg) await commit(w, jobId, trace, seg);
  const ids: bigint[] = [];
  for (let step = 1; step <= steps; ++step) ids.push(await openAndDraw(w, cs[Math.floor((step - 1) / OPEN_PER_CHALLENGER)]!, jobId, step));
  const attackerSet = new Set(attackerAuditors.map((x) => x.address));
  const outcomes: string[] = [];
  let appealed = 0;
  for (const id of ids) {
    const r = await playPanel(w, id, (m) => (attackerSet.has(m) ? "Fault" : "honest"), w.a.H1, extraHonest);
    outcomes.push(r.outcome);
    if (r.rounds > 1) ++appealed;
  }
  // the honest provider delivers: after the (possibly re-opened) window it finalizes and is paid
  let job = await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId });
  if (job.status === "Committed") {
    await w.warpTo(BigInt(job.deadline) + 1n);
    await finalize(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
    job = await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId });
  }
  const row = await measure(
    w,
    s,
    before,
    attack,
    `${ids.length} disputes opened (every step, ${cs.length} challenger addresses), ${appealed} reached an appeal; outcomes: ${countBy(outcomes)}; ` +
      `attacker (${a} of ${n} auditors) lost its bonds and forfeits; honest provider's job ${job.status}`,
    "declared",
  );
  if (job.status !== "Finalized") throw new AttackSucceeded(`${attack}: the honest provider's job ended ${job.status} (outcomes ${countBy(outcomes)}), not Finalized`);
  return row;
}

/**
 * Reward dilution by the provider's own disputes: a cheating provider (fault at step 2 of a 32-step job) sees the
 * honest challenge of step 2 and fills every other step of the job with disputes from its own challenger addresses
 * (the job's MAX_OPEN_PER_JOB = 32 slots), concedes one of them at once (the job faults while all 32 are open), and
 * resolves the honest dispute as soon as its panel voted, before its own false disputes give their parts back. The
 * honest challenger must end at or above its costs: the panel's fees plus the expected loss of its bond to a wrong
 * panel, eps * B + n * f (docs/disputes.md: "it stays profitable iff ...").
 */
export async function rewardDilution(): Promise<Row> {
  const steps = 32;
  const w = await newWorld({ funded: ["buyer", "provider", "sybilA", "sybilB", "honestChallenger"] });
  const cs = await challengers(w, steps - 1);
  const s = { side: [w.a.provider, ...cs], challenger: w.a.honestChallenger, honest: [w.a.buyer, w.a.H1, w.a.H2, w.a.H3, w.a.H4, w.a.H5] };
  const before = await snapshot(w, everyone(s));
  const policy = policyOf(steps);
  const jobId = await postGameJob(w, policy);
  await acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
  const trace = declaredTrace(jobId, steps, 2);
  for (let seg = 0; seg < policy.segments; ++seg) await commit(w, jobId, trace, seg);
  const honest = await openAndDraw(w, w.a.honestChallenger, jobId, 2);
  const hd = await getDispute(w.a.buyer.c.public, { disputeGame: w.d.disputeGame, disputeId: honest });
  const sybil: bigint[] = [];
  const others = Array.from({ length: steps }, (_, i) => i + 1).filter((t) => t !== 2);
  for (const [i, step] of others.entries()) sybil.push(await openAndDraw(w, cs[Math.floor(i / OPEN_PER_CHALLENGER)]!, jobId, step));
  await concede(w.a.provider.c, { disputeGame: w.d.disputeGame, disputeId: sybil[0]! });
  const first = await playPanel(w, honest, () => "honest", w.a.provider);
  const outcomes: string[] = [];
  for (const id of sybil.slice(1)) outcomes.push((await playPanel(w, id, () => "honest")).outcome);
  const row = await measure(
    w,
    s,
    before,
    "3e reward dilution by the provider's own disputes",
    `the provider's ${sybil.length} disputes on every other step of a ${steps}-step job (one Conceded at once, the rest: ${countBy(outcomes)}); ` +
      `the honest dispute of step 2 ${first.outcome}, resolved by the provider before its false disputes gave their parts back`,
    "declared",
  );
  const eps = BigInt(w.params.panelErrorBps);
  const costs = (hd.bond * eps) / 10_000n + hd.fees;
  if (BigInt(row.honestChallengerNetWei) < costs) {
    throw new AttackSucceeded(`3e: the honest challenger netted ${tokens(BigInt(row.honestChallengerNetWei))} < its costs eps B + n f = ${tokens(costs)} (reward split with ${sybil.length} provider disputes)`);
  }
  row.outcome += `; honest challenger net ${tokens(BigInt(row.honestChallengerNetWei))} >= its costs eps B + n f = ${tokens(costs)}`;
  const need = (GAME_POLICY.requiredStake * BigInt(10_000 - GAME_POLICY.challengerBps)) / 10_000n;
  if (BigInt(row.cheaterLossWei) < need) throw new AttackSucceeded(`3e: the provider side lost ${tokens(BigInt(row.cheaterLossWei))} < (1 - lam) L = ${tokens(need)}`);
  return row;
}
