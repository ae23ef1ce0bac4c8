import { expect } from "chai";
import { network } from "hardhat";
import * as snarkjs from "snarkjs";
import { InputError } from "../../verifier/src/errors/index.ts";
import {
  DEFAULT_ARTIFACTS,
  FixedPointRangeError,
  VALUE_MAX,
  ZkArtifactError,
  claimOf,
  commitWeights,
  loadVerificationKey,
  proveStep,
  releaseProver,
  stepPublicSignals,
  stepVerifierAbi,
  toFixed,
  toVerifierArgs,
  verifyStep,
  witnessInput,
  type ProveStepReturnType,
  type VerifierArgs,
} from "../../verifier/src/zk/index.ts";
import { randomTile, setWitnessValue, witnessFile, withEntry } from "./helpers.ts";

const VERIFIER = "contracts/verifiers/StepVerifier.sol:Groth16Verifier";

function withSignal(args: VerifierArgs, index: number, value: bigint): VerifierArgs {
  const signals = [...args[3]] as [bigint, bigint, bigint, bigint];
  signals[index] = value;
  return [args[0], args[1], args[2], signals];
}

describe("zk: Groth16 step proofs, off chain and on the generated verifier", () => {
  const tile = randomTile(21, 65536, toFixed(0.05));
  let proved: ProveStepReturnType;
  let verifier: { read: { verifyProof(args: VerifierArgs): Promise<boolean> } };

  before(async () => {
    const { viem } = await network.create();
    const { address } = await viem.deployContract(VERIFIER);
    const client = await viem.getPublicClient();
    verifier = {
      read: {
        verifyProof: (args) => client.readContract({ address, abi: stepVerifierAbi, functionName: "verifyProof", args }),
      },
    };
    proved = await proveStep(tile);
  });

  after(async () => {
    await releaseProver();
  });

  it("the committed verification key is the one inside the committed proving key", async () => {
    const fromZkey = await snarkjs.zKey.exportVerificationKey(DEFAULT_ARTIFACTS.zkey);
    expect(JSON.parse(JSON.stringify(fromZkey))).to.deep.equal(await loadVerificationKey());
  });

  it("proves a step whose public signals are the reference commitments and lr", async () => {
    expect(proved.publicSignals).to.deep.equal(stepPublicSignals(proved.claim));
    expect(proved.claim.commitWNext).to.equal(await commitWeights(proved.wNext));
    expect(proved.claim.lr).to.equal(tile.lr);
    expect(proved.calldata[3]).to.deep.equal(proved.publicSignals.map(BigInt));
  });

  it("verifies off chain and on chain", async () => {
    expect(await verifyStep(proved.proof, proved.publicSignals)).to.equal(true);
    expect(await verifier.read.verifyProof(proved.calldata)).to.equal(true);
  });

  it("rejects every tampered public signal off chain and on chain", async () => {
    for (let k = 0; k < 4; k++) {
      const signals = [...proved.publicSignals];
      signals[k] = (BigInt(signals[k]!) + 1n).toString();
      expect(await verifyStep(proved.proof, signals), `signal ${k}`).to.equal(false);
      expect(await verifier.read.verifyProof(withSignal(proved.calldata, k, BigInt(signals[k]!))), `signal ${k}`).to.equal(false);
    }
  });

  it("rejects a proof for a wrong W' made from a tampered witness, off chain and on chain", async () => {
    // A cheating prover claims W' with one weight off by one unit: it puts that commitment into the
    // witness (public output 2) and runs the prover, which does not check constraints itself.
    const wrong = withEntry(proved.wNext, 3, 2, proved.wNext[3]![2]! + 1n);
    const forged = setWitnessValue(await witnessFile(witnessInput(tile, proved.wNext)), 2, await commitWeights(wrong));
    const { proof, publicSignals } = await snarkjs.groth16.prove(DEFAULT_ARTIFACTS.zkey, { type: "mem", data: forged });
    expect(claimOf(publicSignals).commitWNext).to.equal(await commitWeights(wrong));
    expect(await verifyStep(proof, publicSignals)).to.equal(false);
    expect(await verifier.read.verifyProof(await toVerifierArgs(proof, publicSignals))).to.equal(false);
  });

  it("rejects a valid proof presented for another pre-state", async () => {
    const other = randomTile(22, 65536, tile.lr);
    const otherSignals = stepPublicSignals({ ...proved.claim, commitW: await commitWeights(other.w) });
    expect(await verifyStep(proved.proof, otherSignals)).to.equal(false);
  });

  it("refuses out-of-range inputs before proving, with a typed error", async () => {
    const bad = { ...tile, x: withEntry(tile.x, 4, 4, VALUE_MAX + 1n) };
    const err = await proveStep(bad).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(FixedPointRangeError).and.instanceOf(InputError);
  });

  it("reports missing artifacts with a typed error", async () => {
    const err = await proveStep(tile, { ...DEFAULT_ARTIFACTS, zkey: "/nonexistent/step.zkey" }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ZkArtifactError);
  });
});
