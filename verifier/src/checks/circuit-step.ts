/**
 * The circuit model class as the dispute code sees it (dispute/circuit.ts): what a ZK step proof and the job's circuit
 * terms are built from, taken from the run's model (Model.circuit) so that dispute/ reaches the engine only through
 * checks/. A run of an engine model has no circuit step (undefined).
 */
import type { Run } from "../ml/run.ts";
import type { TileBatch } from "../ml/models/linear-tile.ts";

export type { Run, TileBatch };

export type CircuitStep = {
  /** The learning rate in the circuit's fixed point (the manifest's lr x 2^16). */
  readonly lr: bigint;
  /** Steps of the job: batches 1..steps exist. */
  readonly steps: number;
  /** Step t's batch in the circuit's fixed point, salted by the job as the engine's batch of step t. */
  batch(t: number): TileBatch;
};

/** The circuit step of `run`'s model, or undefined when the model is no circuit class. */
export function circuitStepOf(run: Run): CircuitStep | undefined {
  const circuit = run.model.circuit;
  if (!circuit) return undefined;
  return { lr: circuit.lr, steps: run.manifest.training.steps, batch: (t) => run.tileBatch(t) };
}
