/**
 * Defending a dispute as the provider. For a circuit-class job the provider proves the disputed step with Groth16
 * (zk/proveStep on its own W_{s-1} and batch s) and DisputeGame settles for it at once; for any other job it waits
 * for the panel (doing nothing is the defence: the panel recomputes from the provider's committed data).
 *
 * @example
 *   await defendDispute(clients, { disputeGame, disputeId, circuit: { input: { w, x, y, lr }, batchProof } });
 */
import { zeroHash, type Address, type Hex } from "viem";
import type { ChainClients } from "../chain/clients.ts";
import { getDispute } from "../chain/getDispute.ts";
import { proveDisputedStep } from "../chain/proveDisputedStep.ts";
import { getCircuitTerms } from "../chain/getCircuitTerms.ts";
import { logger } from "../log/index.ts";
import { stateHash } from "../trace/index.ts";
import { commitmentToBytes32, commitWeights, proveStep, referenceStep, type StepInput } from "../zk/index.ts";
import { DisputeError } from "./errors.ts";

const log = logger("dispute.defend");

/** The provider's committed leaves are not a correct step from the given state: there is nothing to prove (the panel decides). */
export class StepNotProvableError extends DisputeError {
  override name = "StepNotProvableError";
  override readonly code: string = "STEP_NOT_PROVABLE";
}

export type DefendDisputeParameters = {
  disputeGame: Address;
  disputeId: bigint;
  /** For a circuit-class job: the step's input (W_{s-1}, batch s, lr) and the batch's Merkle proof (BatchTree.proof). */
  circuit?: { input: StepInput; batchProof: readonly Hex[] };
};

export type DefendDisputeReturnType =
  | { action: "proved"; hash: Hex; gasUsed: bigint; provingMs: number }
  | { action: "panel" | "resolved" };

export async function defendDispute(clients: ChainClients, p: DefendDisputeParameters): Promise<DefendDisputeReturnType> {
  const d = await getDispute(clients.public, { disputeGame: p.disputeGame, disputeId: p.disputeId });
  if (d.phase === "resolved") return { action: "resolved" };
  if (!p.circuit) return { action: "panel" };
  const terms = await getCircuitTerms(clients.public, { disputeGame: p.disputeGame, jobId: d.jobId });
  if (!terms) return { action: "panel" };
  if (terms.lr !== p.circuit.input.lr) throw new DisputeError(`job ${d.jobId} fixes lr ${terms.lr}, the step input has ${p.circuit.input.lr}`);
  // A proof of the provider's own W_{s-1} settles only if it reproduces the disputed leaves; otherwise the provider
  // committed something else and has nothing to prove. Checked before any proving work.
  const step = BigInt(d.step);
  const [commitW, commitWNext] = await Promise.all([commitWeights(p.circuit.input.w), commitWeights(referenceStep(p.circuit.input))]);
  if (stateHash(d.jobId, step - 1n, commitmentToBytes32(commitW), zeroHash) !== d.hPrev) {
    throw new StepNotProvableError(`dispute ${p.disputeId}: Commit(W) of the given input does not reproduce h(${step - 1n})`);
  }
  if (stateHash(d.jobId, step, commitmentToBytes32(commitWNext), zeroHash) !== d.hStep) {
    throw new StepNotProvableError(`dispute ${p.disputeId}: the correct step does not give the committed h(${step}): the provider is at fault`);
  }
  const started = performance.now();
  const proved = await proveStep(p.circuit.input);
  const provingMs = performance.now() - started;
  const r = await proveDisputedStep(clients, { disputeGame: p.disputeGame, disputeId: p.disputeId, proof: proved.calldata, batchProof: p.circuit.batchProof });
  log.info({ disputeId: p.disputeId, provingMs: Math.round(provingMs), gasUsed: r.gasUsed.toString() }, "step proved on chain");
  return { action: "proved", hash: r.hash, gasUsed: r.gasUsed, provingMs };
}
