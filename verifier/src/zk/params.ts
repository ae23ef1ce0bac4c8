/**
 * Parameters of the circuit-provable model class (circuits/step.circom, `LinearStep(8, 4, 8, 3, 16, 32)`).
 * Changing any of these means a new circuit, a new setup and a new verifier: keep them in step with the
 * `component main` line of the circuit.
 */
export const STEP_PARAMS = {
  /** Inputs per example (rows of W). */
  inputs: 8,
  /** Outputs per example (columns of W). */
  outputs: 4,
  /** Examples per batch (B); a power of two so that dividing by B is part of the single final shift. */
  batch: 8,
  log2Batch: 3,
  /** Fixed point: value = integer / 2^fracBits. */
  fracBits: 16,
  /** Every W, X, Y, W' entry is a signed integer in [-2^(valueBits-1), 2^(valueBits-1)); lr in [0, 2^valueBits). */
  valueBits: 32,
} as const;

/** Total right shift of lr·Xᵀ(X·W - Y·2^FRAC): 3·FRAC (scales of lr, X and E) + log2(B). */
export const UPDATE_SHIFT = BigInt(3 * STEP_PARAMS.fracBits + STEP_PARAMS.log2Batch);

export const VALUE_MIN = -(1n << BigInt(STEP_PARAMS.valueBits - 1));
export const VALUE_MAX = (1n << BigInt(STEP_PARAMS.valueBits - 1)) - 1n;
export const LR_MAX = (1n << BigInt(STEP_PARAMS.valueBits)) - 1n;

/** Values packed into one field element for hashing: floor(253 / valueBits). */
export const PACK = Math.floor(253 / STEP_PARAMS.valueBits);

/** The BN254 scalar field order (the circuit's field). */
export const FIELD_ORDER = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/** A matrix of fixed-point integers, row-major: `m[row][col]`. */
export type Matrix = readonly (readonly bigint[])[];

/** One step's inputs: weights W (inputs x outputs), batch X (batch x inputs) and Y (batch x outputs), lr. */
export type StepInput = {
  w: Matrix;
  x: Matrix;
  y: Matrix;
  /** Learning rate in fixed point (lr · 2^fracBits), non-negative. */
  lr: bigint;
};
