/**
 * The ZK path on the in-process network: a job of the circuit model class (linear tile, docs/zk.md) registered with
 * its learning rate and batch root; a provider whose step is correct answers a challenge with a real Groth16 proof
 * (verifier/src/zk proveStep on the committed artifacts) and DisputeGame settles for it at once; a provider that
 * committed a wrong W' cannot: the honest proof does not match its leaves, and the same proof relabelled with
 * Commit(wrong W') is rejected by the on-chain verifier. The job's manifest hash commits to its terms
 * (circuitManifestHash): other terms are refused on chain (DisputeGameTermsNotInManifest), and a challenger whose audit
 * derived other terms than the manifest's is stopped before posting a bond (CircuitTermsMismatchError).
 */
import { expect } from "chai";
import { parseEther, keccak256, toHex, type Hex } from "viem";
import {
  acceptJob,
  commitSegment,
  createJob,
  getDispute,
  proveDisputedStep,
  setCircuitTerms,
} from "../../verifier/src/chain/index.ts";
import { SegmentTree } from "../../verifier/src/trace/index.ts";
import {
  BatchTree,
  checkCircuitTerms,
  circuitManifestHash,
  CircuitTermsMismatchError,
  circuitStateHash,
  circuitTrace,
  creditsOf,
  defendDispute,
  DisputeError,
  DisputeInputError,
  openChallenge,
} from "../../verifier/src/dispute/index.ts";
import { commitWeights, proveStep, releaseProver, toFixed, type Matrix, type VerifierArgs } from "../../verifier/src/zk/index.ts";
import { randomMatrix, randomTile, rng } from "../zk/helpers.ts";
import { disputeEnv, expectRevert, policy, type DisputeEnv } from "./helpers.ts";

const K = 4;
const LR = toFixed(0.05);
const CID = "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m";
/** keccak256 of the (stand-in) manifest document: the first word of the circuit manifest hash. */
const BODY = keccak256(toHex("linear-tile"));

describe("dispute: Groth16 path for the circuit model class", function () {
  let env: DisputeEnv;
  const w0 = randomTile(11, 1 << 15, LR).w;
  const next = rng(12);
  const batches = Array.from({ length: K }, () => ({ x: randomMatrix(next, 8, 8, 1 << 15), y: randomMatrix(next, 8, 4, 1 << 15) }));
  let batchTree: BatchTree;
  let honest: { weights: Matrix[] };

  /** A circuit-class job whose trace uses `weights` (W_0..W_K) for its leaves. */
  async function circuitJob(weightsOf: (jobId: bigint) => Promise<Matrix[]>): Promise<{ jobId: bigint; tree: SegmentTree }> {
    const manifestHash = circuitManifestHash(BODY, { lr: LR, batchRoot: batchTree.root });
    const { jobId } = await createJob(env.buyer, { jobMarket: env.d.jobMarket, manifestHash, manifestUri: `cid:${CID}`, token: env.d.token, payment: parseEther("1"), policy: policy(1, K) });
    await setCircuitTerms(env.buyer, { disputeGame: env.d.disputeGame, jobId, lr: LR, batchRoot: batchTree.root, manifestBody: BODY });
    await acceptJob(env.provider, { jobMarket: env.d.jobMarket, jobId });
    const weights = await weightsOf(jobId);
    const hashes = await Promise.all(weights.map((w, t) => circuitStateHash(jobId, t, w)));
    const tree = new SegmentTree(0, hashes);
    await commitSegment(env.provider, { jobMarket: env.d.jobMarket, jobId, segment: 0, stateHashes: tree.stateHashes, lossE6: 0n, checkpointCid: CID });
    return { jobId, tree };
  }

  async function challenge(jobId: bigint, tree: SegmentTree, step: number): Promise<bigint> {
    const proof = { segment: 0, traceRoot: tree.root, step, prevStateHash: tree.stateHashes[step - 1]!, prevProof: tree.proof(step - 1), stateHash: tree.stateHashes[step]!, proof: tree.proof(step) };
    const circuit = { jobMarket: env.d.jobMarket, manifestBody: BODY, expected: { lr: LR, batchRoot: batchTree.root } };
    const { disputeId } = await openChallenge(env.challenger, { disputeGame: env.d.disputeGame, token: env.d.token, jobId, audit: proof, endStateHash: tree.endStateHash, circuit });
    return disputeId;
  }

  before(async () => {
    env = await disputeEnv();
    batchTree = await BatchTree.of(batches);
    honest = await circuitTrace(0n, w0, LR, batches);
  });
  after(async () => {
    await releaseProver();
  });

  it("a provider proves a correct step and the dispute settles for it at once", async () => {
    const { jobId, tree } = await circuitJob(async () => honest.weights);
    const disputeId = await challenge(jobId, tree, 2);
    const before = await creditsOf(env.provider, { deployment: env.d });
    const challengerBefore = await creditsOf(env.challenger, { deployment: env.d });
    const r = await defendDispute(env.provider, { disputeGame: env.d.disputeGame, disputeId, circuit: { input: { w: honest.weights[1]!, ...batches[1]!, lr: LR }, batchProof: batchTree.proof(2) } });
    expect(r.action).to.equal("proved");
    const d = await getDispute(env.provider.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(d.outcome).to.equal("Proven");
    const after = await creditsOf(env.provider, { deployment: env.d });
    expect(after.disputeGame - before.disputeGame).to.equal(d.bond);
    // no panel voted: every fee (3 members * 0.05) goes back to the challenger, who still loses its bond
    expect(d.fees).to.equal(parseEther("0.15"));
    const challengerAfter = await creditsOf(env.challenger, { deployment: env.d });
    expect(challengerAfter.disputeGame - challengerBefore.disputeGame).to.equal(parseEther("0.15"));
  });

  it("a proof for a wrong W' is rejected", async () => {
    // The provider committed W_2 + 1 unit in one entry (and continued from it).
    const wrong = honest.weights[2]!.map((row, i) => row.map((v, j) => (i === 0 && j === 0 ? v + 1n : v)));
    const { jobId, tree } = await circuitJob(async () => [honest.weights[0]!, honest.weights[1]!, wrong, honest.weights[3]!, honest.weights[4]!]);
    const disputeId = await challenge(jobId, tree, 2);
    const input = { w: honest.weights[1]!, ...batches[1]!, lr: LR };
    // defendDispute refuses before sending: the correct step does not give the committed leaf
    try {
      await defendDispute(env.provider, { disputeGame: env.d.disputeGame, disputeId, circuit: { input, batchProof: batchTree.proof(2) } });
      expect.fail("expected DisputeError");
    } catch (err) {
      expect(err).to.be.instanceOf(DisputeError);
    }
    const { calldata } = await proveStep(input);
    // the honest proof, as is: its commitWNext does not reproduce the committed h(2)
    await expectRevert(proveDisputedStep(env.provider, { disputeGame: env.d.disputeGame, disputeId, proof: calldata, batchProof: batchTree.proof(2) }), "DisputeGameStateMismatch");
    // relabelled with Commit(wrong W'): the leaves match, the verifier rejects the proof
    const forged: VerifierArgs = [calldata[0], calldata[1], calldata[2], [calldata[3][0], await commitWeights(wrong), calldata[3][2], calldata[3][3]]];
    await expectRevert(proveDisputedStep(env.provider, { disputeGame: env.d.disputeGame, disputeId, proof: forged, batchProof: batchTree.proof(2) }), "DisputeGameInvalidProof");
    // and a proof with the wrong batch's commitment fails the batch binding
    await expectRevert(proveDisputedStep(env.provider, { disputeGame: env.d.disputeGame, disputeId, proof: forged, batchProof: batchTree.proof(3) }), "DisputeGameBadBatchProof");
    const d = await getDispute(env.provider.public, { disputeGame: env.d.disputeGame, disputeId });
    expect(d.status).to.equal("Open");
  });

  it("circuit terms are fixed before acceptance", async () => {
    const { jobId } = await circuitJob(async () => honest.weights);
    await expectRevert(setCircuitTerms(env.buyer, { disputeGame: env.d.disputeGame, jobId, lr: LR, batchRoot: batchTree.root as Hex, manifestBody: BODY }), "DisputeGameTermsLocked");
  });

  it("refuses terms that differ from the manifest's (another data order): DisputeGameTermsNotInManifest", async () => {
    const manifestHash = circuitManifestHash(BODY, { lr: LR, batchRoot: batchTree.root });
    const { jobId } = await createJob(env.buyer, { jobMarket: env.d.jobMarket, manifestHash, manifestUri: `cid:${CID}`, token: env.d.token, payment: parseEther("1"), policy: policy(1, K) });
    // the same batches in another order: another batch root
    const reordered = await BatchTree.of([batches[1]!, batches[0]!, batches[2]!, batches[3]!]);
    await expectRevert(setCircuitTerms(env.buyer, { disputeGame: env.d.disputeGame, jobId, lr: LR, batchRoot: reordered.root, manifestBody: BODY }), "DisputeGameTermsNotInManifest");
    await expectRevert(setCircuitTerms(env.buyer, { disputeGame: env.d.disputeGame, jobId, lr: LR + 1n, batchRoot: batchTree.root, manifestBody: BODY }), "DisputeGameTermsNotInManifest");
  });

  it("a challenger checks the terms against the manifest before posting a bond (CircuitTermsMismatchError)", async () => {
    // A colluding buyer declares terms for one data order (batchTree) in a manifest document whose data order is
    // another (the challenger's audit derives `reordered`): the chain accepts the declared terms, the challenger's
    // check does not, and no bond is posted.
    const { jobId, tree } = await circuitJob(async () => honest.weights);
    const reordered = await BatchTree.of([batches[1]!, batches[0]!, batches[2]!, batches[3]!]);
    const audit = { segment: 0, traceRoot: tree.root, step: 2, prevStateHash: tree.stateHashes[1]!, prevProof: tree.proof(1), stateHash: tree.stateHashes[2]!, proof: tree.proof(2) };
    const base = { disputeGame: env.d.disputeGame, token: env.d.token, jobId, audit, endStateHash: tree.endStateHash };
    const before = await env.challenger.public.getBlockNumber();
    for (const circuit of [
      { jobMarket: env.d.jobMarket, manifestBody: BODY, expected: { lr: LR, batchRoot: reordered.root } },
      { jobMarket: env.d.jobMarket, manifestBody: BODY, expected: { lr: LR + 1n, batchRoot: batchTree.root } },
      { jobMarket: env.d.jobMarket, manifestBody: keccak256(toHex("another document")), expected: { lr: LR, batchRoot: batchTree.root } },
    ]) {
      try {
        await openChallenge(env.challenger, { ...base, circuit });
        expect.fail("expected CircuitTermsMismatchError");
      } catch (err) {
        expect(err, String(err)).to.be.instanceOf(CircuitTermsMismatchError);
      }
    }
    // a circuit-class job is never challenged blind
    try {
      await openChallenge(env.challenger, base);
      expect.fail("expected DisputeInputError");
    } catch (err) {
      expect(err, String(err)).to.be.instanceOf(DisputeInputError);
    }
    expect(await env.challenger.public.getBlockNumber()).to.equal(before); // nothing was sent
    const ok = await checkCircuitTerms(env.challenger.public, { disputeGame: env.d.disputeGame, jobMarket: env.d.jobMarket, jobId, manifestBody: BODY, expected: { lr: LR, batchRoot: batchTree.root } });
    expect(ok).to.deep.equal({ registered: true, terms: { lr: LR, batchRoot: batchTree.root } });
  });
});
