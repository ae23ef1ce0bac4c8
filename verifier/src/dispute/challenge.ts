/**
 * Open a challenge from an audit result: the first bad step with the provider's own leaves and proofs (what
 * checks/recompute returns), posted with the deposit DisputeGame.requiredDeposit(jobId) (the bond plus the panel's fees;
 * approved here if needed).
 *
 * A job registered as circuit class (DisputeGame.circuitTerms set) is challenged only with `circuit`: the manifest
 * body and the terms the caller's audit derived from the manifest, checked by checkCircuitTerms before anything is
 * sent (CircuitTermsMismatchError), because a proof against the registered terms settles the dispute for the provider.
 *
 * @example
 *   const audit = await auditSegment(ctx, 1, { checks: ["recompute"] });
 *   const { disputeId } = await openChallenge(clients, { disputeGame, token, jobId, audit, endStateHash });
 */
import type { Address, Hex } from "viem";
import { getRequiredDeposit } from "../chain/getAuditorFunds.ts";
import { getTokenAllowance } from "../chain/getTokenBalance.ts";
import { approveToken } from "../chain/approveToken.ts";
import { challengeStep, type ChallengeStepReturnType } from "../chain/challengeStep.ts";
import { commitChallenge, newChallengeSalt } from "../chain/commitChallenge.ts";
import type { ChainClients } from "../chain/clients.ts";
import type { ChallengeProof } from "../checks/segment.ts";
import { logger } from "../log/index.ts";
import { getCircuitTerms } from "../chain/getCircuitTerms.ts";
import { DisputeInputError } from "./errors.ts";
import { checkCircuitTerms, type CheckCircuitTermsParameters } from "./terms.ts";

const log = logger("dispute.challenge");

export type OpenChallengeParameters = {
  disputeGame: Address;
  /** The bond token (DisputeGame.bondToken()). */
  token: Address;
  jobId: bigint;
  /** An audit result with a challenge proof (SegmentVerdict or CheckResult), or the proof itself. */
  audit: { readonly proof: ChallengeProof | null; readonly ok?: boolean } | ChallengeProof;
  /** The segment's committed end state hash (SegmentCommitted event; the last leaf of the segment). */
  endStateHash: Hex;
  /** For a circuit-class job: JobMarket, the manifest body and the terms the audit derived (checkCircuitTerms). */
  circuit?: Omit<CheckCircuitTermsParameters, "disputeGame" | "jobId">;
};

/** The challenge's receipt (gasUsed: the `challenge` transaction) and the gas of its `commitChallenge` beforehand. */
export type OpenChallengeReturnType = ChallengeStepReturnType & { commitGasUsed: bigint };

function proofOf(audit: OpenChallengeParameters["audit"]): ChallengeProof {
  if ("traceRoot" in audit) return audit;
  if (!audit.proof) throw new DisputeInputError(audit.ok ? "the audit passed: there is no bad step to challenge" : "the audit failed without a challengeable step (no leaf proofs)");
  return audit.proof;
}

export async function openChallenge(clients: ChainClients, p: OpenChallengeParameters): Promise<OpenChallengeReturnType> {
  const proof = proofOf(p.audit);
  // INVARIANT: no bond is posted on a circuit-class job before its terms are checked against the manifest.
  if (p.circuit) await checkCircuitTerms(clients.public, { ...p.circuit, disputeGame: p.disputeGame, jobId: p.jobId });
  else if (await getCircuitTerms(clients.public, { disputeGame: p.disputeGame, jobId: p.jobId })) {
    throw new DisputeInputError(`job ${p.jobId} is circuit class: pass circuit (its manifest body and the terms the audit derived) so that the terms are checked before the bond is posted`);
  }
  const deposit = await getRequiredDeposit(clients.public, { disputeGame: p.disputeGame, jobId: p.jobId });
  const allowance = await getTokenAllowance(clients.public, { token: p.token, owner: clients.account.address, spender: p.disputeGame });
  if (allowance < deposit) await approveToken(clients, { token: p.token, spender: p.disputeGame, amount: deposit });
  // Commit-reveal: the challenge goes in a later block than its commitment (sendContractTx waits for the receipt).
  const salt = newChallengeSalt();
  const committed = await commitChallenge(clients, { disputeGame: p.disputeGame, jobId: p.jobId, segment: proof.segment, step: proof.step, salt });
  const r = await challengeStep(clients, {
    disputeGame: p.disputeGame,
    jobId: p.jobId,
    segment: proof.segment,
    step: proof.step,
    traceRoot: proof.traceRoot,
    endStateHash: p.endStateHash,
    hPrev: proof.prevStateHash,
    proofPrev: proof.prevProof,
    hStep: proof.stateHash,
    proofStep: proof.proof,
    salt,
  });
  log.info({ jobId: p.jobId, step: proof.step, disputeId: r.disputeId, bond: r.bond.toString(), fees: r.fees.toString() }, "challenge opened");
  return { ...r, commitGasUsed: committed.gasUsed };
}
