/**
 * The trace of the circuit model class (docs/zk.md, docs/disputes.md): the state of a linear tile is W alone, and
 *   h(t) = stateHash(jobId, t, weightsHash = bytes32(Commit(W_t)), optimizerHash = 0)
 * so that DisputeGame.prove can check a proof's commitW / commitWNext against the disputed leaves. The batch of
 * step t is bound by the job's batch root: an OpenZeppelin Merkle tree over leaf(t) = keccak256(abi.encodePacked(
 * uint64 t, bytes32 Commit(X_t || Y_t))) for t = 1..N in order (the same leaf function as the trace, Trace.leaf).
 */
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { zeroHash, type Hex } from "viem";
import { stateHash, traceLeaf, type Bytes32 } from "../trace/index.ts";
import { commitBatch, commitmentToBytes32, commitWeights, referenceStep, type Matrix, type StepInput } from "../zk/index.ts";
import { circuitStepOf, type Run } from "../checks/circuit-step.ts";
import { DisputeInputError } from "./errors.ts";
import { circuitManifestHash, type CircuitTerms } from "./terms.ts";

/** h(t) of a circuit-class state W_t. */
export async function circuitStateHash(jobId: bigint, t: number, w: Matrix): Promise<Bytes32> {
  return stateHash(jobId, t, commitmentToBytes32(await commitWeights(w)), zeroHash);
}

/** The batch tree of a circuit-class job: `batches[i]` is the batch of step i+1. */
export class BatchTree {
  readonly commitments: readonly bigint[];
  private readonly tree: SimpleMerkleTree;
  private constructor(commitments: readonly bigint[]) {
    this.commitments = commitments;
    this.tree = SimpleMerkleTree.of(commitments.map((c, i) => traceLeaf(i + 1, commitmentToBytes32(c))), { sortLeaves: false });
  }

  static async of(batches: readonly { x: Matrix; y: Matrix }[]): Promise<BatchTree> {
    if (batches.length === 0) throw new DisputeInputError("a circuit-class job needs at least one batch");
    return new BatchTree(await Promise.all(batches.map((b) => commitBatch(b.x, b.y))));
  }

  get root(): Hex {
    return this.tree.root as Hex;
  }

  /** Merkle proof of step t's batch commitment (1 <= t <= N). */
  proof(t: number): Hex[] {
    if (!Number.isInteger(t) || t < 1 || t > this.commitments.length) throw new DisputeInputError(`step ${t} has no batch (steps 1..${this.commitments.length})`);
    return this.tree.getProof(t - 1) as Hex[];
  }
}

/** Runs a circuit-class training: W_0 and the batches give W_1..W_N and h(0)..h(N) (the provider's honest trace). */
export async function circuitTrace(jobId: bigint, w0: Matrix, lr: bigint, batches: readonly { x: Matrix; y: Matrix }[]): Promise<{ weights: Matrix[]; stateHashes: Bytes32[] }> {
  const weights: Matrix[] = [w0];
  for (const b of batches) {
    const input: StepInput = { w: weights[weights.length - 1]!, x: b.x, y: b.y, lr };
    weights.push(referenceStep(input));
  }
  const stateHashes = await Promise.all(weights.map((w, t) => circuitStateHash(jobId, t, w)));
  return { weights, stateHashes };
}

/**
 * The circuit terms of a linear-tile job, from its manifest and salt alone: lr = the manifest's lr in fixed point (the
 * model's), batchRoot = the BatchTree of the engine's batches of steps 1..N (checks/circuit-step.ts, salted by the job). What
 * the buyer commits in the job's manifest hash and what every auditor re-derives before a challenge (checkCircuitTerms).
 */
export async function circuitTermsOfRun(run: Run): Promise<{ terms: CircuitTerms; tree: BatchTree }> {
  const circuit = circuitStepOf(run);
  if (!circuit) throw new DisputeInputError(`circuit terms exist for linear-tile jobs only, not ${run.model.arch}`);
  // the terms are a function of the manifest (its hash pins the corpus, seed and steps) and the job's salt (the data
  // order): one Poseidon batch tree per (manifest, salt) per process, shared by the provider, the bots and every panel
  // member a process runs
  const key = `${run.manifestHash}:${run.salt}`;
  let terms = termsByRun.get(key);
  if (!terms) {
    terms = (async () => {
      const batches = Array.from({ length: circuit.steps }, (_, i) => circuit.batch(i + 1));
      const tree = await BatchTree.of(batches);
      return { terms: { lr: circuit.lr, batchRoot: tree.root }, tree };
    })();
    if (termsByRun.size >= 16) termsByRun.delete(termsByRun.keys().next().value!);
    termsByRun.set(key, terms);
    terms.catch(() => termsByRun.delete(key));
  }
  return terms;
}

const termsByRun = new Map<string, Promise<{ terms: CircuitTerms; tree: BatchTree }>>();

/**
 * The manifest hash a job of this run is created with: manifestHash(manifest) for an engine model, and for linear-tile
 * circuitManifestHash(manifestHash(manifest), its circuit terms) (dispute/terms.ts), so the terms are fixed at createJob.
 */
export async function jobManifestHashOf(run: Run): Promise<Hex> {
  if (!circuitStepOf(run)) return run.manifestHash;
  return circuitManifestHash(run.manifestHash, (await circuitTermsOfRun(run)).terms);
}
