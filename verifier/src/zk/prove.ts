/**
 * Proving and verifying one step of the circuit model class with snarkjs Groth16 and the committed
 * artifacts. Public signals, in the circuit's order: [commitW, commitWNext, commitBatch, lr].
 */
import { access } from "node:fs/promises";
import * as snarkjs from "snarkjs";
import type { CircuitInput, Groth16Proof, VerificationKey } from "snarkjs";
import { logger } from "../log/index.ts";
import { DEFAULT_ARTIFACTS, loadVerificationKey, type StepArtifacts } from "./artifacts.ts";
import { commitBatch, commitWeights } from "./commit.ts";
import { ProofGenerationError, TileShapeError, ZkArtifactError } from "./errors.ts";
import { checkMatrix, checkStepInput, toField } from "./fixed.ts";
import { STEP_PARAMS, type Matrix, type StepInput } from "./params.ts";
import { referenceStep } from "./step.ts";

const log = logger("zk");

/** Arguments of `Groth16Verifier.verifyProof(uint[2] pA, uint[2][2] pB, uint[2] pC, uint[4] pubSignals)` for viem. */
export type VerifierArgs = readonly [
  readonly [bigint, bigint],
  readonly [readonly [bigint, bigint], readonly [bigint, bigint]],
  readonly [bigint, bigint],
  readonly [bigint, bigint, bigint, bigint],
];

/** What a step proof claims, as field elements. */
export type StepClaim = {
  commitW: bigint;
  commitWNext: bigint;
  commitBatch: bigint;
  lr: bigint;
};

export type ProveStepReturnType = {
  proof: Groth16Proof;
  /** Decimal strings, [commitW, commitWNext, commitBatch, lr]. */
  publicSignals: string[];
  /** The exact viem args for the on-chain verifier. */
  calldata: VerifierArgs;
  /** W' computed by the reference step (the state the proof commits to). */
  wNext: bigint[][];
  claim: StepClaim;
};

/** The witness input of circuits/step.circom (signed values encoded as field elements). */
export function witnessInput(input: StepInput, wNext: Matrix): CircuitInput {
  checkStepInput(input);
  checkMatrix(wNext, STEP_PARAMS.inputs, STEP_PARAMS.outputs, "W'");
  const enc = (m: Matrix): string[][] => m.map((row) => row.map(toField));
  return { lr: input.lr.toString(), w: enc(input.w), x: enc(input.x), y: enc(input.y), wNext: enc(wNext) };
}

/** The public signals a valid proof of `claim` carries, in circuit order. */
export function stepPublicSignals(claim: StepClaim): string[] {
  return [claim.commitW, claim.commitWNext, claim.commitBatch, claim.lr].map((v) => v.toString());
}

/** The claim carried by a proof's public signals. */
export function claimOf(publicSignals: readonly string[]): StepClaim {
  if (publicSignals.length !== 4) throw new TileShapeError(`a step proof has 4 public signals, got ${publicSignals.length}`);
  const [commitW, commitWNext, commitBatch, lr] = publicSignals.map((s) => BigInt(s)) as [bigint, bigint, bigint, bigint];
  return { commitW, commitWNext, commitBatch, lr };
}

/**
 * Turns a snarkjs proof into the verifier's viem args via snarkjs's own Solidity calldata export
 * (which orders each G2 coordinate pair as the precompile expects).
 */
export async function toVerifierArgs(proof: Groth16Proof, publicSignals: readonly string[]): Promise<VerifierArgs> {
  const text = await snarkjs.groth16.exportSolidityCallData(proof, publicSignals);
  const [a, b, c, inputs] = JSON.parse(`[${text}]`) as [string[], string[][], string[], string[]];
  const big = (s: string | undefined): bigint => BigInt(s as string);
  if (inputs.length !== 4) throw new TileShapeError(`expected 4 public signals, got ${inputs.length}`);
  return [
    [big(a[0]), big(a[1])],
    [
      [big(b[0]?.[0]), big(b[0]?.[1])],
      [big(b[1]?.[0]), big(b[1]?.[1])],
    ],
    [big(c[0]), big(c[1])],
    [big(inputs[0]), big(inputs[1]), big(inputs[2]), big(inputs[3])],
  ];
}

async function ensureReadable(path: string, what: string): Promise<void> {
  try {
    await access(path);
  } catch (err) {
    throw new ZkArtifactError(`${what} not found at ${path}`, { details: "run `npm run zk:setup`", cause: err });
  }
}

/**
 * Runs the reference step and proves it. Throws TileShapeError / FixedPointRangeError for inputs outside
 * the model class (before any proving work), ZkArtifactError for missing artifacts.
 *
 * @example
 *   const { calldata, claim } = await proveStep({ w, x, y, lr: toFixed(0.05) });
 *   await verifier.read.verifyProof(calldata); // true
 */
export async function proveStep(input: StepInput, artifacts: StepArtifacts = DEFAULT_ARTIFACTS): Promise<ProveStepReturnType> {
  const wNext = referenceStep(input);
  await ensureReadable(artifacts.wasm, "circuit wasm");
  await ensureReadable(artifacts.zkey, "proving key");
  const started = performance.now();
  let result: { proof: Groth16Proof; publicSignals: string[] };
  try {
    result = await snarkjs.groth16.fullProve(witnessInput(input, wNext), artifacts.wasm, artifacts.zkey);
  } catch (err) {
    log.error({ err }, "step proof failed");
    throw new ProofGenerationError("proving the step failed", { details: String(err), cause: err });
  }
  const claim = claimOf(result.publicSignals);
  const [commitW, commitWNext, commitB] = await Promise.all([
    commitWeights(input.w),
    commitWeights(wNext),
    commitBatch(input.x, input.y),
  ]);
  // IMPORTANT: the circuit and the TypeScript commitments must agree, or on-chain state checks would fail.
  if (claim.commitW !== commitW || claim.commitWNext !== commitWNext || claim.commitBatch !== commitB || claim.lr !== input.lr) {
    throw new ProofGenerationError("the circuit's public signals differ from the TypeScript reference", {
      details: `circuit ${result.publicSignals.join(",")}; reference ${[commitW, commitWNext, commitB, input.lr].join(",")}`,
    });
  }
  log.debug({ ms: Math.round(performance.now() - started) }, "step proved");
  return { ...result, calldata: await toVerifierArgs(result.proof, result.publicSignals), wNext, claim };
}

/**
 * Verifies a step proof off chain with the committed verification key. False for an invalid proof or
 * public signals that do not match it.
 */
export async function verifyStep(
  proof: Groth16Proof,
  publicSignals: readonly string[],
  vkey?: VerificationKey,
): Promise<boolean> {
  const vk = vkey ?? (await loadVerificationKey());
  return snarkjs.groth16.verify(vk, publicSignals, proof);
}

/**
 * Stops snarkjs's proving worker threads so that the process can exit. Call once when done proving
 * (tests, CLI); the next proof starts them again.
 */
export async function releaseProver(): Promise<void> {
  const curve = await snarkjs.curves.getCurveFromName("bn128");
  await curve.terminate();
}
