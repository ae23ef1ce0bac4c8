/**
 * A generate job's output as a dataset that travels: every sample drawn, the `pouw-generated-1` file (datasetOf) and
 * its CID, and the chain of sample hashes the job's last leaf binds. `pouw generate --out` and `pouw provider run` of a
 * generate job both call generatedDataset, so the CID the provider publishes is the one the offline command prints
 * (and the one `npm run test:crossarch` compares between x86-64 and arm64).
 *
 * @example
 *   const d = generatedDataset(await generateJob(manifest, weights, { jobId, examplesPerSegment }));
 *   await store.put(d.bytes); // d.cid
 */
import type { Hex } from "viem";
import { cidOf } from "../store/index.ts";
import { datasetOf, sampleResult, type GenerateJob } from "./generate.ts";
import { statesOf } from "./state.ts";

export type GeneratedDataset = { readonly samples: Uint8Array[]; readonly bytes: Uint8Array; readonly cid: string; readonly chain: Hex };

/** Every sample of `job` (prompt order), its dataset file, CID and the item chain h(N) binds. */
export function generatedDataset(job: GenerateJob): GeneratedDataset {
  const samples = Array.from({ length: job.manifest.prompts.examples }, (_, j) => job.sample(j));
  return datasetFromSamples(job, samples);
}

/** The dataset of samples already drawn (`samples[j]` is sample j). */
export function datasetFromSamples(job: Pick<GenerateJob, "manifest">, samples: Uint8Array[]): GeneratedDataset {
  const bytes = datasetOf(job.manifest, samples);
  const states = statesOf(samples.map(sampleResult));
  return { samples, bytes, cid: cidOf(bytes), chain: states[states.length - 1]!.chain };
}
