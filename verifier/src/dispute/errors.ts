/**
 * Dispute errors. DisputeInputError: the caller's input is unusable (no proof in an audit result, a ballot file
 * that is not ours). BallotMissingError: a committed vote whose salt is lost cannot be revealed (the member will be
 * penalized as silent); it is its own class so that a bot can alert on it.
 */
import { InputError, PouwError } from "../errors/index.ts";

export class DisputeError extends PouwError {
  override name = "DisputeError";
  override readonly code: string = "DISPUTE";
}

export class DisputeInputError extends InputError {
  override name = "DisputeInputError";
  override readonly code: string = "DISPUTE_INPUT";
}

export class BallotMissingError extends DisputeError {
  override name = "BallotMissingError";
  override readonly code: string = "BALLOT_MISSING";
}
