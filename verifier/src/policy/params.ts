/**
 * Validation of economic parameters. Every policy function checks its inputs here first, so that no
 * formula ever returns NaN or Infinity: a negative cost, a probability outside [0, 1], a zero where
 * the formula divides, or a non-finite number is a PolicyParamError naming the parameter.
 */
import { InputError, PouwError } from "../errors/index.ts";

/** A policy parameter is out of its domain. The short message names the parameter and the value. */
export class PolicyParamError extends InputError {
  override name = "PolicyParamError";
  override readonly code: string = "POLICY_PARAM_ERROR";
}

/** The detection matrix file is missing, not JSON, or does not match its schema. */
export class DetectionMatrixError extends InputError {
  override name = "DetectionMatrixError";
  override readonly code: string = "DETECTION_MATRIX_ERROR";
}

/** No contract in the search space deters every measured cheat (for example a cheat no check detects). */
export class NoDeterringContractError extends PouwError {
  override name = "NoDeterringContractError";
  override readonly code: string = "NO_DETERRING_CONTRACT";
}

/** The exact LP (HiGHS) and the closed form disagree, or the solver did not report an optimum. */
export class PolicySolverError extends PouwError {
  override name = "PolicySolverError";
  override readonly code: string = "POLICY_SOLVER_ERROR";
}

function show(v: unknown): string {
  return typeof v === "number" ? String(v) : JSON.stringify(v);
}

/** A finite number (any sign). */
export function finite(name: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new PolicyParamError(`${name} must be a finite number, got ${show(v)}`);
  }
  return v;
}

/** A finite number >= 0 (costs, gains, stakes, harms). */
export function nonNegative(name: string, v: unknown): number {
  const x = finite(name, v);
  if (x < 0) throw new PolicyParamError(`${name} must be >= 0, got ${x}`);
  return x;
}

/** A finite number > 0 (a quantity the formula divides by). */
export function positive(name: string, v: unknown): number {
  const x = finite(name, v);
  if (x <= 0) throw new PolicyParamError(`${name} must be > 0 (the formula divides by it), got ${x}`);
  return x;
}

/** A probability in [0, 1]. */
export function probability(name: string, v: unknown): number {
  const x = finite(name, v);
  if (x < 0 || x > 1) throw new PolicyParamError(`${name} must be a probability in [0, 1], got ${x}`);
  return x;
}

/** A probability in (0, 1] (the formula divides by it). */
export function positiveProbability(name: string, v: unknown): number {
  const x = probability(name, v);
  if (x === 0) throw new PolicyParamError(`${name} must be in (0, 1] (the formula divides by it), got 0`);
  return x;
}

/** A probability in [0, 1) (the formula divides by 1 - it). */
export function probabilityBelowOne(name: string, v: unknown): number {
  const x = probability(name, v);
  if (x === 1) throw new PolicyParamError(`${name} must be in [0, 1) (the formula divides by 1 - ${name}), got 1`);
  return x;
}

/** An integer >= min. */
export function integerAtLeast(name: string, v: unknown, min: number): number {
  const x = finite(name, v);
  if (!Number.isInteger(x) || x < min) throw new PolicyParamError(`${name} must be an integer >= ${min}, got ${x}`);
  return x;
}

/**
 * Guards a computed output: the formulas are total on their validated domains, so a non-finite
 * result means an overflow of float64 (inputs near 1e308). Reported, never returned.
 */
export function finiteResult(name: string, v: number): number {
  if (!Number.isFinite(v)) throw new PolicyParamError(`${name} overflows float64 for these inputs (got ${v}); use smaller units`);
  return v;
}
