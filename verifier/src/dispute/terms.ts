/**
 * Circuit terms bound to the manifest (docs/zk.md "Terms bound to the manifest"). A circuit-class job is created with
 *
 *   manifestHash = keccak256(abi.encode(CIRCUIT_MANIFEST_TYPEHASH, manifestBody, uint256 lr, bytes32 batchRoot))
 *
 * where manifestBody is the keccak256 of the manifest document (for an engine manifest its usual manifest hash), and
 * DisputeGame.setCircuitTerms accepts only the (lr, batchRoot) that hash commits to (DisputeGameTermsNotInManifest).
 * So the terms are fixed by the manifest hash at createJob, before any provider accepts or any auditor audits.
 *
 * What the chain cannot check is that the declared batch root is the one the document's data order gives: a colluding
 * buyer can declare terms for one order and describe another. `checkCircuitTerms` is the challenger's check, run
 * before any bond is posted: the terms the challenger derives from the document (its own BatchTree of the batches,
 * toFixed(lr)) must be the ones the job's manifest hash and the registered terms carry, else CircuitTermsMismatchError
 * and no challenge (a proof against the registered terms would win it).
 *
 * @example
 *   const manifestHash = circuitManifestHash(bodyHash, { lr, batchRoot: tree.root }); // createJob with this
 *   await setCircuitTerms(buyer, { disputeGame, jobId, lr, batchRoot: tree.root, manifestBody: bodyHash });
 *   await checkCircuitTerms(auditor.public, { disputeGame, jobMarket, jobId, manifestBody: bodyHash, expected }); // before challenging
 */
import { encodeAbiParameters, keccak256, toHex, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { getCircuitTerms, type CircuitTerms } from "../chain/getCircuitTerms.ts";
import { getJob } from "../chain/getJob.ts";
import { DisputeError } from "./errors.ts";

export type { CircuitTerms };

/** DisputeGame.CIRCUIT_MANIFEST_TYPEHASH. */
export const CIRCUIT_MANIFEST_TYPEHASH: Hex = keccak256(toHex("PoUWCircuitManifest(bytes32 manifestBody,uint256 lr,bytes32 batchRoot)"));

/** The manifest hash a circuit-class job is created with (DisputeGame.circuitManifestHash). */
export function circuitManifestHash(manifestBody: Hex, terms: CircuitTerms): Hex {
  return keccak256(
    encodeAbiParameters([{ type: "bytes32" }, { type: "bytes32" }, { type: "uint256" }, { type: "bytes32" }], [CIRCUIT_MANIFEST_TYPEHASH, manifestBody, terms.lr, terms.batchRoot]),
  );
}

/**
 * The job's manifest or registered circuit terms are not the ones its manifest document gives: a challenge would be
 * judged against other terms than the audit. Do not challenge; the job's manifest is inconsistent.
 */
export class CircuitTermsMismatchError extends DisputeError {
  override name = "CircuitTermsMismatchError";
  override readonly code: string = "CIRCUIT_TERMS_MISMATCH";
}

export type CheckCircuitTermsParameters = {
  disputeGame: Address;
  jobMarket: Address;
  jobId: bigint;
  /** keccak256 of the manifest document the challenger audited against. */
  manifestBody: Hex;
  /** The terms the challenger derived from that document: toFixed(lr) and the root of its own BatchTree. */
  expected: CircuitTerms;
};

/** registered: false when the job is not (yet) circuit class: its disputes go to the panel, no proof can settle them. */
export type CheckCircuitTermsReturnType = { registered: boolean; terms: CircuitTerms };

/** Checks, before a challenge, that the job's on-chain terms are the ones its manifest gives (file header). */
export async function checkCircuitTerms(client: PublicClient<Transport, Chain>, p: CheckCircuitTermsParameters): Promise<CheckCircuitTermsReturnType> {
  const [job, registered] = await Promise.all([getJob(client, { jobMarket: p.jobMarket, jobId: p.jobId }), getCircuitTerms(client, { disputeGame: p.disputeGame, jobId: p.jobId })]);
  const declared = circuitManifestHash(p.manifestBody, p.expected);
  if (job.manifestHash !== declared) {
    throw new CircuitTermsMismatchError(`job ${p.jobId}'s manifest hash does not commit to the terms its document gives (lr ${p.expected.lr}, batch root ${p.expected.batchRoot})`, {
      details: `on chain ${job.manifestHash}, expected circuitManifestHash(${p.manifestBody}, ...) = ${declared}: another document, or terms for another data order`,
    });
  }
  if (registered && (registered.lr !== p.expected.lr || registered.batchRoot !== p.expected.batchRoot)) {
    // Unreachable against a DisputeGame that binds the terms (setCircuitTerms checks the manifest hash); kept for a
    // deployment that does not.
    throw new CircuitTermsMismatchError(`job ${p.jobId} registered terms (lr ${registered.lr}, batch root ${registered.batchRoot}) that are not its manifest's`);
  }
  return { registered: registered !== null, terms: registered ?? p.expected };
}
