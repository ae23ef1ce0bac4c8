/**
 * Which setup may settle a dispute with a proof (DisputeGame.proving, fixed at deployment; docs/zk.md). On a chain
 * other than the local dev chain (31337) a deployment that names no ceremony verifier cannot prove: an honest provider's
 * real Groth16 proof reverts with DisputeGameProvingDisabled and the dispute stays with the panel. On the dev chain the
 * committed development setup proves (test/dispute/zk.test.ts). The vkey hash the contract knows as the development
 * key is the hash of the committed circuits/keys/step.vkey.json, and the deploy path refuses that key as a ceremony's.
 */
import { expect } from "chai";
import { keccak256, parseEther, toHex, zeroAddress } from "viem";
import { acceptJob, commitSegment, createJob, DEV_VKEY_HASH, deployDisputeGame, getDispute, getProving, proveDisputedStep, setCircuitTerms, StepVerifierMismatchError } from "../../verifier/src/chain/index.ts";
import { disputeGameAbi } from "../../verifier/src/chain/abi/DisputeGame.ts";
import { groth16VerifierAbi, groth16VerifierBytecode } from "../../verifier/src/chain/abi/Groth16Verifier.ts";
import { deployContract } from "../../verifier/src/chain/deployContract.ts";
import { SegmentTree } from "../../verifier/src/trace/index.ts";
import { BatchTree, circuitManifestHash, circuitStateHash, circuitTrace, openChallenge } from "../../verifier/src/dispute/index.ts";
import { loadVerificationKey, proveStep, releaseProver, toFixed, verifierCodeHasVkey, vkeyHash } from "../../verifier/src/zk/index.ts";
import { randomMatrix, randomTile, rng } from "../zk/helpers.ts";
import { disputeEnv, expectRevert, PARAMS, policy } from "./helpers.ts";

const K = 4;
const LR = toFixed(0.05);
const CID = "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m";
const BODY = keccak256(toHex("linear-tile"));

describe("dispute: proving mode (development setup on the dev chain only)", function () {
  after(async () => {
    await releaseProver();
  });

  it("the development vkey hash is the committed key's, and the dev verifier's code holds that key", async () => {
    const vk = await loadVerificationKey();
    expect(vkeyHash(vk)).to.equal(DEV_VKEY_HASH);
    const env = await disputeEnv();
    expect(await env.admin.public.readContract({ address: env.d.disputeGame, abi: disputeGameAbi, functionName: "DEV_VKEY_HASH" })).to.equal(DEV_VKEY_HASH);
    expect(env.proving.mode).to.equal("Development");
    const code = (await env.admin.public.getCode({ address: env.proving.verifier }))!;
    expect(verifierCodeHasVkey(code, vk)).to.equal(true);
    // another key (one IC point changed) is not the one this code verifies
    const other = JSON.parse(JSON.stringify(vk));
    other.IC[1][0] = (BigInt(other.IC[1][0]) + 1n).toString();
    expect(verifierCodeHasVkey(code, other)).to.equal(false);
  });

  it("on a non-dev chain, a deployment without a ceremony verifier refuses a valid proof: DisputeGameProvingDisabled", async () => {
    const env = await disputeEnv({ chainId: 1 });
    expect(env.proving).to.deep.equal({ mode: "Disabled", verifier: zeroAddress, vkeyHash: `0x${"0".repeat(64)}` });
    expect(await getProving(env.admin.public, { disputeGame: env.d.disputeGame })).to.deep.equal(env.proving);
    // an honest circuit-class job, challenged at a later step, and the honest provider's real proof
    const w0 = randomTile(11, 1 << 15, LR).w;
    const next = rng(12);
    const batches = Array.from({ length: K }, () => ({ x: randomMatrix(next, 8, 8, 1 << 15), y: randomMatrix(next, 8, 4, 1 << 15) }));
    const batchTree = await BatchTree.of(batches);
    const terms = { lr: LR, batchRoot: batchTree.root };
    const { jobId } = await createJob(env.buyer, { jobMarket: env.d.jobMarket, manifestHash: circuitManifestHash(BODY, terms), manifestUri: `cid:${CID}`, token: env.d.token, payment: parseEther("1"), policy: policy(1, K) });
    await setCircuitTerms(env.buyer, { disputeGame: env.d.disputeGame, jobId, ...terms, manifestBody: BODY });
    await acceptJob(env.provider, { jobMarket: env.d.jobMarket, jobId });
    const honest = await circuitTrace(jobId, w0, LR, batches);
    const tree = new SegmentTree(0, await Promise.all(honest.weights.map((w, t) => circuitStateHash(jobId, t, w))));
    await commitSegment(env.provider, { jobMarket: env.d.jobMarket, jobId, segment: 0, stateHashes: tree.stateHashes, lossE6: 0n, checkpointCid: CID });
    const audit = { segment: 0, traceRoot: tree.root, step: 2, prevStateHash: tree.stateHashes[1]!, prevProof: tree.proof(1), stateHash: tree.stateHashes[2]!, proof: tree.proof(2) };
    const { disputeId } = await openChallenge(env.challenger, { disputeGame: env.d.disputeGame, token: env.d.token, jobId, audit, endStateHash: tree.endStateHash, circuit: { jobMarket: env.d.jobMarket, manifestBody: BODY, expected: terms } });
    const { calldata } = await proveStep({ w: honest.weights[1]!, ...batches[1]!, lr: LR });
    await expectRevert(proveDisputedStep(env.provider, { disputeGame: env.d.disputeGame, disputeId, proof: calldata, batchProof: batchTree.proof(2) }), "DisputeGameProvingDisabled");
    expect((await getDispute(env.provider.public, { disputeGame: env.d.disputeGame, disputeId })).status).to.equal("Open"); // the panel decides
    // the development verifier deployed there and named explicitly is refused off chain before DisputeGame is deployed
    const dev = await deployContract(env.admin, groth16VerifierAbi, groth16VerifierBytecode, []);
    const { disputeGame: _unused, ...market } = env.d;
    try {
      await deployDisputeGame(env.admin, { deployment: market, params: PARAMS, stepVerifier: { address: dev.address, vkey: await loadVerificationKey() } });
      expect.fail("expected StepVerifierMismatchError");
    } catch (err) {
      expect(err, String(err)).to.be.instanceOf(StepVerifierMismatchError);
    }
  });
});
