/**
 * The circuit terms of a linear-tile job as the buyer, the provider and every auditor derive them from the manifest
 * document and the job's salt (dispute/circuit.ts circuitTermsOfRun), and the checks each side runs with them:
 *
 *   buyer     postJob({ circuit: circuitPostOption(d, manifest) }): the job is created with
 *             circuitManifestHash(manifestHash, terms of the predicted job id), then setCircuitTerms registers them;
 *   provider  fetchManifest({ circuitHash: circuitJobCheck(...) }) before it accepts or trains: a job whose manifest
 *             hash or registered terms are not its document's is refused (CircuitTermsMismatchError);
 *   auditor   the same check before the bot audits, and checkCircuitTerms again before each challenge.
 *
 * Loads the engine (createRun: the corpus), so not for the dApp.
 */
import type { Chain, Hex, PublicClient, Transport } from "viem";
import type { CircuitTerms } from "../chain/getCircuitTerms.ts";
import type { Deployment } from "../chain/deployment.ts";
import { getJob } from "../chain/getJob.ts";
import { circuitTermsOfRun } from "../dispute/circuit.ts";
import { checkCircuitTerms, circuitManifestHash, CircuitTermsMismatchError } from "../dispute/terms.ts";
import { InputError } from "../errors/index.ts";
import { manifestHash, type Manifest } from "../ml/manifest.ts";
import { createRun } from "../ml/run.ts";
import { deploymentSalt } from "../ml/salt.ts";

/** The circuit terms of job `jobId` of a linear-tile manifest on deployment `d` (lr in fixed point, batch root). */
export async function circuitTermsFor(manifest: Manifest, d: Pick<Deployment, "chainId" | "jobMarket">, jobId: bigint): Promise<CircuitTerms> {
  const run = await createRun(manifest, { jobId, salt: deploymentSalt(d, jobId) });
  return (await circuitTermsOfRun(run)).terms;
}

/** postJob's `circuit` option for a linear-tile manifest; InputError when the deployment has no DisputeGame. */
export function circuitPostOption(d: Deployment, manifest: Manifest): { disputeGame: Hex; termsFor(jobId: bigint): Promise<CircuitTerms> } {
  if (!d.disputeGame) throw new InputError("a linear-tile (circuit-class) job needs a deployment with a DisputeGame (its terms are registered there)");
  return { disputeGame: d.disputeGame, termsFor: (jobId) => circuitTermsFor(manifest, d, jobId) };
}

/**
 * fetchManifest's `circuitHash` for job `jobId`: derives the terms from the document, checks them against the job's
 * on-chain manifest hash and registered terms (checkCircuitTerms; CircuitTermsMismatchError names both) and returns the
 * hash. `requireRegistered`: also refuse a job whose terms were never registered (a provider accepting it could not
 * prove any step).
 */
export function circuitJobCheck(client: PublicClient<Transport, Chain>, d: Deployment, jobId: bigint, o: { requireRegistered?: boolean } = {}): (m: Manifest) => Promise<Hex> {
  return async (m) => {
    const expected = await circuitTermsFor(m, d, jobId);
    const body = manifestHash(m);
    if (!d.disputeGame) {
      const job = await getJob(client, { jobMarket: d.jobMarket, jobId });
      const declared = circuitManifestHash(body, expected);
      if (job.manifestHash !== declared) throw new CircuitTermsMismatchError(`job ${jobId}'s manifest hash does not commit to the terms its document gives (lr ${expected.lr}, batch root ${expected.batchRoot})`);
      return declared;
    }
    const r = await checkCircuitTerms(client, { disputeGame: d.disputeGame, jobMarket: d.jobMarket, jobId, manifestBody: body, expected });
    if (o.requireRegistered && !r.registered) {
      throw new CircuitTermsMismatchError(`job ${jobId} is linear-tile but its buyer has not registered the circuit terms (DisputeGame.setCircuitTerms): no step of it could be proven`);
    }
    return circuitManifestHash(body, expected);
  };
}
