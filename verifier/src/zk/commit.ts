/**
 * Commitments of the circuit model class (PackedCommit in circuits/step.circom): each signed value v is
 * offset to v + 2^(valueBits-1), PACK values are packed little-endian into one field element (first value
 * in the lowest bits) and the packed elements are hashed with circomlib's Poseidon of that width.
 * circomlibjs's Poseidon is the same permutation as the circuit's (circomlib tests them against each other).
 */
import { buildPoseidonOpt, type Poseidon } from "circomlibjs";
import { toHex, type Hex } from "viem";
import { PACK, STEP_PARAMS, type Matrix } from "./params.ts";
import { checkMatrix, checkSigned, flatten } from "./fixed.ts";
import { TileShapeError } from "./errors.ts";

let poseidon: Promise<Poseidon> | undefined;

/** circomlibjs Poseidon, built once (pure JavaScript field arithmetic, single thread). */
function getPoseidon(): Promise<Poseidon> {
  poseidon ??= buildPoseidonOpt();
  return poseidon;
}

/** The packed field elements that Commit hashes (pure; values must already be range checked). */
export function packValues(values: readonly bigint[]): bigint[] {
  const bits = BigInt(STEP_PARAMS.valueBits);
  const offset = 1n << (bits - 1n);
  const packed: bigint[] = [];
  for (let start = 0; start < values.length; start += PACK) {
    let acc = 0n;
    values.slice(start, start + PACK).forEach((v, k) => {
      acc += (v + offset) << (bits * BigInt(k));
    });
    packed.push(acc);
  }
  return packed;
}

/** Commit(values) as a field element. At most 16 packed elements (circomlib Poseidon's widest). */
export async function commitValues(values: readonly bigint[]): Promise<bigint> {
  return commitValuesWith(await getPoseidon(), values);
}

/**
 * A synchronous committer (the engine's state hash of the circuit model class is synchronous): Poseidon is built once
 * here, then `commit` is commitValues without the await.
 */
export async function loadCommitter(): Promise<{ commit(values: readonly bigint[]): bigint }> {
  const p = await getPoseidon();
  return { commit: (values) => commitValuesWith(p, values) };
}

function commitValuesWith(p: Poseidon, values: readonly bigint[]): bigint {
  values.forEach((v, k) => checkSigned(v, `value[${k}]`));
  const packed = packValues(values);
  if (packed.length < 1 || packed.length > 16) {
    throw new TileShapeError(`cannot commit ${values.length} values: ${packed.length} packed elements, Poseidon takes 1..16`);
  }
  return p.F.toObject(p(packed));
}

/** Commit(W), W row-major (inputs x outputs): the state commitment of this model class. */
export async function commitWeights(w: Matrix): Promise<bigint> {
  checkMatrix(w, STEP_PARAMS.inputs, STEP_PARAMS.outputs, "W");
  return commitValues(flatten(w));
}

/** Commit(X ‖ Y), X then Y, each row-major: the batch commitment. */
export async function commitBatch(x: Matrix, y: Matrix): Promise<bigint> {
  checkMatrix(x, STEP_PARAMS.batch, STEP_PARAMS.inputs, "X");
  checkMatrix(y, STEP_PARAMS.batch, STEP_PARAMS.outputs, "Y");
  return commitValues([...flatten(x), ...flatten(y)]);
}

/** A commitment as bytes32 (big-endian), the form a contract stores. */
export function commitmentToBytes32(c: bigint): Hex {
  return toHex(c, { size: 32 });
}
