/**
 * Gas of every dispute path on a fresh in-process network, and the proving side of the ZK path.
 * Prints a table and writes bench/results/dispute.json.
 *
 * Run: npm run bench:dispute   (hardhat run bench/dispute.ts)
 *
 * Paths: commitChallenge (the salted commitment, an earlier block), challenge (bond + freeze), concede (slash by policy shares), drawPanel, commitVote, revealVote, resolve with
 * a Fault majority (slash + one minority forfeit split to two), with a Valid majority, with no reveals (round 1 appealed;
 * the last of three silent rounds ends NoDecision and burns every seat's forfeit), prove (Groth16 verification + settlement, whole tx), claim. Constraint count and the median proving time
 * of the proving benchmark come from bench/results/zk.json (npm run bench:zk); the single proof made here is timed too.
 * Gas is the receipt's gasUsed (21,000 intrinsic gas and calldata included).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { network } from "hardhat";
import { keccak256, maxUint256, parseEther, toHex, type Hex } from "viem";
import {
  acceptJob,
  approveToken,
  commitSegment,
  concede,
  createJob,
  DEFAULT_ACTIVATION_DELAY_SECONDS,
  DEFAULT_DISPUTE_PARAMS,
  deployDisputeGame,
  deployMarket,
  minAuditorExitDelaySeconds,
  devAccount,
  drawPanel,
  getDispute,
  mintTestToken,
  postBond,
  providerClients,
  resolveDispute,
  revealVote,
  commitVote,
  setCircuitTerms,
  stakeDeposit,
  claimDisputeCredit,
  type ChainClients,
  type DisputeParams,
  type JobPolicy,
} from "../verifier/src/chain/index.ts";
import { BatchTree, circuitManifestHash, circuitStateHash, circuitTrace, defendDispute, openChallenge, voteCommitment } from "../verifier/src/dispute/index.ts";
import { SegmentTree } from "../verifier/src/trace/index.ts";
import { releaseProver, toFixed, type Matrix } from "../verifier/src/zk/index.ts";

const K = 4;
const CID = "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m";
const PARAMS: DisputeParams = {
  // the deployment defaults, with hour-long voting windows and a smaller forfeit
  ...DEFAULT_DISPUTE_PARAMS,
  commitWindowSeconds: 3600,
  revealWindowSeconds: 3600,
  panelForfeit: parseEther("2"),
};
const policy: JobPolicy = { segments: 1, stepsPerSegment: K, requiredStake: parseEther("10"), segmentTimeout: 3600, challengeWindow: 86_400, challengerBps: 5000, buyerBps: 3000, burnBps: 2000, timeoutSlashBps: 1000 };

const conn = await network.create();
const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
const [admin, buyer, provider, challenger] = [mk(0), mk(1), mk(2), mk(3)];
const auditors = [4, 5, 6, 7, 8].map(mk);
const market = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("10"), exitDelaySeconds: minAuditorExitDelaySeconds(PARAMS) });
const deployed = await deployDisputeGame(admin, { deployment: market, params: PARAMS });
const d = { ...market, disputeGame: deployed.disputeGame };
for (const c of [buyer, provider, challenger, ...auditors]) {
  await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("10000") });
  for (const spender of [d.jobMarket, d.stakeVault, d.auditorRegistry, d.disputeGame]) await approveToken(c, { token: d.token, spender, amount: maxUint256 });
}
await stakeDeposit(provider, { stakeVault: d.stakeVault, amount: parseEther("1000") });
for (const a of auditors) await postBond(a, { auditorRegistry: d.auditorRegistry, amount: parseEther("20") });
// the bonds count for panel snapshots (taken at each challenge) once the activation delay has passed
await conn.networkHelpers.time.increase(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));

const gas: Record<string, number> = {};
const record = (key: string, g: bigint) => {
  gas[key] = Number(g);
};

/** A job whose one segment commits `hashes` (h(0)..h(K)); optional circuit terms. */
const BODY = keccak256(toHex("bench"));
async function job(hashesOf: (jobId: bigint) => Promise<Hex[]>, terms?: { lr: bigint; batchRoot: Hex }): Promise<{ jobId: bigint; tree: SegmentTree }> {
  // a circuit-class job's manifest hash commits to its terms (dispute/terms.ts)
  const manifestHash = terms ? circuitManifestHash(BODY, terms) : BODY;
  const { jobId } = await createJob(buyer, { jobMarket: d.jobMarket, manifestHash, manifestUri: `cid:${CID}`, token: d.token, payment: parseEther("1"), policy });
  if (terms) record("DisputeGame.setCircuitTerms", (await setCircuitTerms(buyer, { disputeGame: d.disputeGame, jobId, ...terms, manifestBody: BODY })).gasUsed);
  await acceptJob(provider, { jobMarket: d.jobMarket, jobId });
  const tree = new SegmentTree(0, await hashesOf(jobId));
  await commitSegment(provider, { jobMarket: d.jobMarket, jobId, segment: 0, stateHashes: tree.stateHashes, lossE6: 0n, checkpointCid: CID });
  return { jobId, tree };
}
const madeUp = async (jobId: bigint) => Array.from({ length: K + 1 }, (_, t) => keccak256(toHex(`h-${jobId}-${t}`)));

async function challenge(jobId: bigint, tree: SegmentTree, step: number, key?: string, terms?: { lr: bigint; batchRoot: Hex }): Promise<bigint> {
  const r = await openChallenge(challenger, {
    disputeGame: d.disputeGame,
    token: d.token,
    jobId,
    ...(terms ? { circuit: { jobMarket: d.jobMarket, manifestBody: BODY, expected: terms } } : {}),
    endStateHash: tree.endStateHash,
    audit: { segment: 0, traceRoot: tree.root, step, prevStateHash: tree.stateHashes[step - 1]!, prevProof: tree.proof(step - 1), stateHash: tree.stateHashes[step]!, proof: tree.proof(step) },
  });
  if (key) {
    record("DisputeGame.commitChallenge", r.commitGasUsed);
    record(key, r.gasUsed);
  }
  return r.disputeId;
}

/** Draws the panel, then the members vote `votes` (undefined: silent); returns the panel clients. */
async function panelVotes(disputeId: bigint, votes: ("Valid" | "Fault" | undefined)[], measure: boolean): Promise<void> {
  await conn.networkHelpers.mine(PARAMS.seedDelayBlocks + 1);
  const drawn = await drawPanel(challenger, { disputeGame: d.disputeGame, disputeId });
  if (measure) record("DisputeGame.drawPanel (k=3 of 5)", drawn.gasUsed);
  const dispute = await getDispute(challenger.public, { disputeGame: d.disputeGame, disputeId });
  const members = dispute.panel.map((addr) => auditors.find((a) => a.account.address === addr)!) as ChainClients[];
  const salt = (i: number) => keccak256(toHex(`salt-${disputeId}-${i}`));
  for (const [i, m] of members.entries()) {
    const v = votes[i];
    if (!v) continue;
    const r = await commitVote(m, { disputeGame: d.disputeGame, disputeId, commitment: voteCommitment(v, salt(i), m.account.address) });
    if (measure && i === 0) record("DisputeGame.commitVote", r.gasUsed);
  }
  if (votes.some((v) => !v)) await conn.networkHelpers.time.increase(PARAMS.commitWindowSeconds + 1);
  for (const [i, m] of members.entries()) {
    const v = votes[i];
    if (!v) continue;
    const r = await revealVote(m, { disputeGame: d.disputeGame, disputeId, vote: v === "Valid" ? 1 : 2, salt: salt(i) });
    if (measure && i === 0) record("DisputeGame.revealVote", r.gasUsed);
  }
  if (votes.some((v) => !v)) await conn.networkHelpers.time.increase(PARAMS.revealWindowSeconds + 1);
}

// concede
{
  const { jobId, tree } = await job(madeUp);
  const id = await challenge(jobId, tree, 2, "DisputeGame.challenge");
  record("DisputeGame.concede (slash + refund)", (await concede(provider, { disputeGame: d.disputeGame, disputeId: id })).gasUsed);
}
// panel: Fault majority with one Valid minority
{
  const { jobId, tree } = await job(madeUp);
  const id = await challenge(jobId, tree, 2);
  await panelVotes(id, ["Fault", "Fault", "Valid"], true);
  record("DisputeGame.resolve PanelFault (2-1: slash + 1 forfeit split)", (await resolveDispute(challenger, { disputeGame: d.disputeGame, disputeId: id })).gasUsed);
}
// panel: Valid majority, unanimous
{
  const { jobId, tree } = await job(madeUp);
  const id = await challenge(jobId, tree, 2);
  await panelVotes(id, ["Valid", "Valid", "Valid"], false);
  record("DisputeGame.resolve PanelValid (3-0)", (await resolveDispute(challenger, { disputeGame: d.disputeGame, disputeId: id })).gasUsed);
}
// panel: nobody reveals
{
  const { jobId, tree } = await job(madeUp);
  const id = await challenge(jobId, tree, 2);
  await panelVotes(id, [undefined, undefined, undefined], false);
  // a drawn round with no counted vote is appealed like a tie while rounds are left: round 1's resolve opens round 2
  record("DisputeGame.resolve silent round 1 (appealed)", (await resolveDispute(challenger, { disputeGame: d.disputeGame, disputeId: id })).gasUsed);
  // rounds 2 and 3 (5 seats each: the pool of 5 cannot seat 7) silent too; the last resolve draws round 3's panel, ends
  // NoDecision and burns every silent seat's forfeit (3 + 5 + 5)
  for (let round = 2; round <= 3; round++) {
    await conn.networkHelpers.mine(PARAMS.seedDelayBlocks + 1);
    if (round === 2) await drawPanel(challenger, { disputeGame: d.disputeGame, disputeId: id });
    await conn.networkHelpers.time.increase(PARAMS.commitWindowSeconds + PARAMS.revealWindowSeconds + 1);
    const r = await resolveDispute(challenger, { disputeGame: d.disputeGame, disputeId: id });
    if (round === 3) record("DisputeGame.resolve NoDecision (3 silent rounds: draw + 13 forfeits burned)", r.gasUsed);
  }
  const last = await getDispute(challenger.public, { disputeGame: d.disputeGame, disputeId: id });
  if (last.outcome !== "NoDecision" || last.round !== 3) throw new Error(`silent rounds ended ${last.outcome} in round ${last.round}, expected NoDecision in round 3`);
}
// ZK path
const lr = toFixed(0.05);
let seed = 7;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return BigInt(Math.floor((seed / 2 ** 31) * 2 ** 16) - 2 ** 15);
};
const matrix = (r: number, c: number): Matrix => Array.from({ length: r }, () => Array.from({ length: c }, rand));
const w0 = matrix(8, 4);
const batches = Array.from({ length: K }, () => ({ x: matrix(8, 8), y: matrix(8, 4) }));
const batchTree = await BatchTree.of(batches);
const honest = await circuitTrace(0n, w0, lr, batches);
let provingMs = 0;
{
  const { jobId, tree } = await job((jobId) => Promise.all(honest.weights.map((w, t) => circuitStateHash(jobId, t, w))), { lr, batchRoot: batchTree.root });
  const id = await challenge(jobId, tree, 2, undefined, { lr, batchRoot: batchTree.root });
  const r = await defendDispute(provider, { disputeGame: d.disputeGame, disputeId: id, circuit: { input: { w: honest.weights[1]!, ...batches[1]!, lr }, batchProof: batchTree.proof(2) } });
  if (r.action !== "proved") throw new Error(`expected a proof, got ${r.action}`);
  record("DisputeGame.prove (Groth16 verify + settle)", r.gasUsed);
  provingMs = Math.round(r.provingMs);
}
record("DisputeGame.claim", (await claimDisputeCredit(provider, { disputeGame: d.disputeGame })).gasUsed);
await releaseProver();

// Every path starts with the challenger's commitChallenge (commit-reveal against mempool copying) and challenge.
const open = gas["DisputeGame.commitChallenge"]! + gas["DisputeGame.challenge"]!;
const panelTotal =
  open + gas["DisputeGame.drawPanel (k=3 of 5)"]! + 3 * gas["DisputeGame.commitVote"]! + 3 * gas["DisputeGame.revealVote"]! + gas["DisputeGame.resolve PanelFault (2-1: slash + 1 forfeit split)"]!;
gas["path.panel total (commit + challenge + draw + 3 commits + 3 reveals + resolve)"] = panelTotal;
gas["path.concede total (commit + challenge + concede)"] = open + gas["DisputeGame.concede (slash + refund)"]!;
gas["path.zk total (commit + challenge + prove)"] = open + gas["DisputeGame.prove (Groth16 verify + settle)"]!;

const zk = JSON.parse(readFileSync(new URL("./results/zk.json", import.meta.url), "utf8")) as { constraints: number; proving: { medianMs: number }; verifyGas: { receiptGasUsed: number } };
const result = {
  gas,
  zk: {
    constraints: zk.constraints,
    provingMedianMs: zk.proving.medianMs,
    provingMsThisRun: provingMs,
    verifierAloneGas: zk.verifyGas.receiptGasUsed,
    source: "bench/results/zk.json (npm run bench:zk) for constraints and median proving time",
  },
  params: { ...PARAMS, minChallengerBond: PARAMS.minChallengerBond.toString(), panelForfeit: PARAMS.panelForfeit.toString(), panelFee: PARAMS.panelFee.toString() },
  date: new Date().toISOString(),
};
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
writeFileSync(new URL("./results/dispute.json", import.meta.url), `${JSON.stringify(result, null, 2)}\n`);

const rows = Object.entries(gas).map(([k, v]) => [k, v.toLocaleString("en-US")]);
rows.push(["zk: constraints", zk.constraints.toLocaleString("en-US")], ["zk: proving median (bench:zk), ms", String(zk.proving.medianMs)], ["zk: proving this run, ms", String(provingMs)]);
const w = Math.max(...rows.map((r) => r[0]!.length));
process.stdout.write(`${"what".padEnd(w)}  value\n${"-".repeat(w)}  ---------\n${rows.map(([k, v]) => `${k!.padEnd(w)}  ${v}`).join("\n")}\n\nwrote bench/results/dispute.json\n`);
