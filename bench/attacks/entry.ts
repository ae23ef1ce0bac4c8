/**
 * Attacks on how money and challenges enter the game, each an actor script over a fresh deployment
 * (bench/attacks/world.ts), in the style of game.ts: sniped challenge commitments, a lock shrunk below the panel's fees
 * by a timeout slash, a fee-on-transfer payment token and idle-tenure griefing with a zero timeout slash. A step the
 * rules must refuse is sent anyway and its revert is reported by name; if it goes through, AttackSucceeded is thrown.
 */
import { keccak256, parseEther, toHex } from "viem";
import {
  acceptJob,
  challengeCommitment,
  commitChallenge,
  createJob,
  disputeGameAbi,
  getDispute,
  getJob,
  newChallengeSalt,
  reportTimeout,
  sendContractTx,
  type JobPolicy,
} from "../../verifier/src/chain/index.ts";
import { AttackSucceeded, commit, declaredTrace, everyone, GAME_POLICY, measure, newWorld, playPanel, postGameJob, refused, segmentOf, snapshot, tokens, type Actor, type Row, type Sides, type World } from "./world.ts";
import { challengeStep as challengeStepTx } from "../../verifier/src/chain/index.ts";

const K = GAME_POLICY.stepsPerSegment;
const LAM = BigInt(GAME_POLICY.challengerBps);
const sides = (w: World, side: Actor[], challenger?: Actor): Sides => ({ side, challenger, honest: [w.a.buyer, w.a.H1, w.a.H2, w.a.H3, w.a.H4, w.a.H5] });

/** `who` commits to challenging `step` of `jobId` now (segment named in the clear); the challenge is sent later. */
async function committed(w: World, who: Actor, jobId: bigint, step: number) {
  const salt = newChallengeSalt();
  await commitChallenge(who.c, { disputeGame: w.d.disputeGame, jobId, segment: Math.floor((step - 1) / K), step, salt });
  return async () => {
    const s = await segmentOf(w, jobId, step);
    return (
      await challengeStepTx(who.c, {
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
      })
    ).disputeId;
  };
}

/**
 * Sniped commitments: a watcher (the provider's sybil) tries to hold commitments on a job before it exists and on a
 * segment before it is committed (both refused), keeps one older than the TTL (refused when used), then commits on the
 * faulty step after the honest auditor did and front-runs the honest challenge with it. The first valid challenge of
 * a step holds it (DisputeGame has no takeover by an earlier commitment), so the row shows what the watcher keeps.
 */
export async function snipedCommitment(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "sybilB", "honestChallenger"] });
  const s = sides(w, [w.a.provider, w.a.sybilB], w.a.honestChallenger);
  const before = await snapshot(w, everyone(s));
  const game = w.d.disputeGame;
  const future = 99n;
  const c0 = challengeCommitment(future, 2, w.a.sybilB.address, newChallengeSalt());
  const eJob = await refused("commit on a job that does not exist", sendContractTx(w.a.sybilB.c, { address: game, abi: disputeGameAbi, functionName: "commitChallenge", args: [future, 0n, c0] }), "DisputeGameUnknownJob");
  const jobId = await postGameJob(w);
  await acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
  const eSeg = await refused("commit on an uncommitted segment", commitChallenge(w.a.sybilB.c, { disputeGame: game, jobId, segment: 0, step: 2, salt: newChallengeSalt() }), "DisputeGameSegmentNotCommitted");
  const trace = declaredTrace(jobId, 2 * K, 2);
  await commit(w, jobId, trace, 0);
  // a commitment made right after the commit and held: it lapses after CHALLENGE_COMMITMENT_TTL_BLOCKS
  const stale = await committed(w, w.a.sybilB, jobId, 3);
  await w.mine(257);
  const eOld = await refused("a challenge from a commitment older than the TTL", stale(), "DisputeGameChallengeCommitmentExpired");
  await commit(w, jobId, trace, 1);
  const honest = await committed(w, w.a.honestChallenger, jobId, 2);
  const sniper = await committed(w, w.a.sybilB, jobId, 2); // a later block
  await w.mine(1);
  const id = await sniper(); // front-runs the honest challenge
  const eOpen = await refused("the honest challenge after the sniper's", honest(), "DisputeGameDisputeOpen");
  const { outcome } = await playPanel(w, id, () => "honest");
  return measure(w, s, before, "19 sniped commitment", `impossible: ${eJob} before the job exists, ${eSeg} before the segment, ${eOld} after 256 blocks; open: a later commitment that front-runs the honest challenge holds the step (${eOpen}) and takes the challenger share: ${outcome}`, "declared");
}

/**
 * Shrunken lock: the lock sits two wei above the panel floor (lam L = n f) and the timeout slash is 100%. The provider
 * commits a faulty segment and walks away; the timeout slash waits for the TimedOut window (reopenJob), so the whole lock
 * stays behind the timed-out cheat and the honest challenger is paid the panel's fees out of the fault's challenger share
 * and ends whole.
 */
export async function shrunkenLock(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider", "honestChallenger"] });
  const s = sides(w, [w.a.provider], w.a.honestChallenger);
  const fees = w.params.panelFee * BigInt(w.params.panelSize);
  const floor = (fees * 10_000n + LAM - 1n) / LAM;
  const policy: JobPolicy = { ...GAME_POLICY, requiredStake: floor + 4n, timeoutSlashBps: 10_000 };
  const before = await snapshot(w, everyone(s));
  const jobId = await postGameJob(w, policy);
  await acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
  const trace = declaredTrace(jobId, 2 * K, 2);
  await commit(w, jobId, trace, 0);
  const job = await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId });
  await w.warpTo(BigInt(job.deadline) + 1n);
  await reportTimeout(w.a.buyer.c, { jobMarket: w.d.jobMarket, jobId });
  const open = await committed(w, w.a.honestChallenger, jobId, 2);
  await w.mine(1);
  const id = await open();
  const { outcome } = await playPanel(w, id, () => "honest");
  return measure(w, s, before, "20 lock shrunk by a timeout slash", `lock ${tokens(floor + 4n)} (floor ${tokens(floor)}), timeout slash 100% deferred to reopenJob: the whole lock behind the timed-out cheat, which was challenged: ${outcome}, the reward paid the panel`, "declared");
}

/** A fee-on-transfer payment token: the escrow that arrives is short, so createJob refuses it (nothing is booked). */
export async function feeOnTransferToken(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider"], auditors: [] });
  const s = sides(w, [w.a.provider]);
  const before = await snapshot(w, everyone(s));
  const fee = await w.conn.viem.deployContract("FeeToken", [100n]);
  await fee.write.mint([w.a.buyer.address, parseEther("10")]);
  await fee.write.approve([w.d.jobMarket, parseEther("10")], { account: w.a.buyer.address });
  const err = await refused(
    "createJob paid in a 1% fee-on-transfer token",
    createJob(w.a.buyer.c, { jobMarket: w.d.jobMarket, manifestHash: keccak256(toHex("m")), manifestUri: "cid:x", token: fee.address, payment: parseEther("1"), policy: GAME_POLICY }),
    "JobMarketTransferShortfall",
  );
  return measure(w, s, before, "21 fee-on-transfer payment token", `impossible: ${err} (1 token sent, 0.99 arrived; stake, bonds and challenge deposits check the same delta)`, "-");
}

/**
 * Zero-slash accept griefing: a buyer's job with timeoutSlashBps 0 is refused; at the minimum (5%) the griefer accepts
 * the job and lets it idle out three times, paying the buyer 5% of its lock each time, and the third ends the job
 * Cancelled with the whole escrow back to the buyer.
 */
export async function zeroSlashGriefing(): Promise<Row> {
  const w = await newWorld({ funded: ["buyer", "provider"], auditors: [] });
  const s = sides(w, [w.a.provider]);
  const before = await snapshot(w, everyone(s));
  const err = await refused(
    "createJob with timeoutSlashBps 0",
    createJob(w.a.buyer.c, { jobMarket: w.d.jobMarket, manifestHash: keccak256(toHex("m")), manifestUri: "cid:x", token: w.d.token, payment: parseEther("1"), policy: { ...GAME_POLICY, timeoutSlashBps: 0 } }),
    "JobMarketTimeoutSlashTooLow",
  );
  const jobId = await postGameJob(w, { ...GAME_POLICY, timeoutSlashBps: 500 });
  let status = "";
  for (let round = 0; round < 3; ++round) {
    await acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
    const j = await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId });
    await w.warpTo(BigInt(j.deadline) + 1n);
    await reportTimeout(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
    status = (await getJob(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId })).status;
  }
  if (status !== "Cancelled") throw new AttackSucceeded(`the third idle timeout left the job ${status}`);
  return measure(w, s, before, "22 zero-slash accept griefing", `impossible: ${err}; at the 5% minimum three idle tenures cost the griefer 3 x 5% of its lock (to the buyer) and cancelled the job, escrow back to the buyer`, "-");
}
