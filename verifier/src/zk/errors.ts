import { InputError, PouwError } from "../errors/index.ts";

/** A matrix has the wrong shape or holds something other than bigint integers. */
export class TileShapeError extends InputError {
  override name = "TileShapeError";
  override readonly code: string = "ZK_TILE_SHAPE";
}

/**
 * A fixed-point value lies outside the range the circuit accepts: an input entry, the learning rate, or
 * an updated weight W' that the step would push out of range (the step then has no proof).
 */
export class FixedPointRangeError extends InputError {
  override name = "FixedPointRangeError";
  override readonly code: string = "ZK_RANGE";
}

/** The circuit artifacts (wasm, zkey, verification key) are missing or unreadable. */
export class ZkArtifactError extends PouwError {
  override name = "ZkArtifactError";
  override readonly code: string = "ZK_ARTIFACT";
}

/** Witness generation or proving failed for inputs that passed validation (a bug or a corrupt artifact). */
export class ProofGenerationError extends PouwError {
  override name = "ProofGenerationError";
  override readonly code: string = "ZK_PROVE_FAILED";
}
