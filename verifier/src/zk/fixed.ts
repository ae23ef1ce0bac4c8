/**
 * Fixed-point encoding of the circuit model class: a real r is the integer round(r · 2^fracBits), a
 * signed integer v enters the circuit as the field element v mod p (negative v as p + v).
 * Pure functions; every check throws a typed error naming the offending entry.
 */
import { FIELD_ORDER, LR_MAX, STEP_PARAMS, VALUE_MAX, VALUE_MIN, type Matrix, type StepInput } from "./params.ts";
import { FixedPointRangeError, TileShapeError } from "./errors.ts";

const SCALE = 2 ** STEP_PARAMS.fracBits;

/** round(r · 2^fracBits), ties away from zero (Math.round would tie toward +inf), range checked. */
export function toFixed(real: number, what = "value"): bigint {
  if (!Number.isFinite(real)) throw new FixedPointRangeError(`${what} is not a finite number: ${real}`);
  const scaled = real * SCALE;
  const v = BigInt(Math.sign(scaled) * Math.round(Math.abs(scaled)));
  checkSigned(v, what);
  return v;
}

/** The real number a fixed-point integer stands for. */
export function fromFixed(v: bigint): number {
  return Number(v) / SCALE;
}

/** Throws FixedPointRangeError unless VALUE_MIN <= v <= VALUE_MAX. */
export function checkSigned(v: bigint, what: string): void {
  if (typeof v !== "bigint") throw new TileShapeError(`${what} must be a bigint, got ${typeof v}`);
  if (v < VALUE_MIN || v > VALUE_MAX) {
    throw new FixedPointRangeError(`${what} = ${v} is outside the ${STEP_PARAMS.valueBits}-bit signed range`, {
      details: `allowed: ${VALUE_MIN} .. ${VALUE_MAX} (fixed point with ${STEP_PARAMS.fracBits} fraction bits)`,
    });
  }
}

/** Throws FixedPointRangeError unless 0 <= lr <= LR_MAX. */
export function checkLearningRate(lr: bigint): void {
  if (typeof lr !== "bigint") throw new TileShapeError(`lr must be a bigint, got ${typeof lr}`);
  if (lr < 0n || lr > LR_MAX) {
    throw new FixedPointRangeError(`lr = ${lr} is outside 0 .. ${LR_MAX}`, {
      details: `lr is fixed point with ${STEP_PARAMS.fracBits} fraction bits (1.0 = ${1n << BigInt(STEP_PARAMS.fracBits)})`,
    });
  }
}

/** Throws TileShapeError unless `m` is rows x cols of bigints, FixedPointRangeError unless every entry is in range. */
export function checkMatrix(m: Matrix, rows: number, cols: number, name: string): void {
  if (!Array.isArray(m) || m.length !== rows) {
    throw new TileShapeError(`${name} must have ${rows} rows, got ${Array.isArray(m) ? m.length : typeof m}`);
  }
  m.forEach((row, r) => {
    if (!Array.isArray(row) || row.length !== cols) {
      throw new TileShapeError(`${name}[${r}] must have ${cols} entries, got ${Array.isArray(row) ? row.length : typeof row}`);
    }
    row.forEach((v, c) => checkSigned(v, `${name}[${r}][${c}]`));
  });
}

/** Validates a whole step input against the model class (shapes and ranges). */
export function checkStepInput(input: StepInput): void {
  const { inputs, outputs, batch } = STEP_PARAMS;
  checkMatrix(input.w, inputs, outputs, "W");
  checkMatrix(input.x, batch, inputs, "X");
  checkMatrix(input.y, batch, outputs, "Y");
  checkLearningRate(input.lr);
}

/** v mod p as a decimal string: the witness encoding of a signed integer. */
export function toField(v: bigint): string {
  return (((v % FIELD_ORDER) + FIELD_ORDER) % FIELD_ORDER).toString();
}

/** Inverse of toField for values in the signed range: elements above p/2 are negative. */
export function fromField(f: bigint | string): bigint {
  const e = BigInt(f);
  if (e < 0n || e >= FIELD_ORDER) throw new FixedPointRangeError(`${e} is not a field element`);
  return e > FIELD_ORDER / 2n ? e - FIELD_ORDER : e;
}

/** Row-major flattening. */
export function flatten(m: Matrix): bigint[] {
  return m.flatMap((row) => [...row]);
}
