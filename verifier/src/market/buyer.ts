/**
 * Buyer operations the CLI and the demo share: post a job (publish the manifest, approve, createJob) and
 * fetch its result (final weights rebuilt from the last committed checkpoint and checked against the
 * chain, plus a provenance record).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Hex } from "viem";
import {
  approveToken,
  createJob,
  getJob,
  getJobCreated,
  getSegmentCommits,
  testTokenAbi,
  withRetry,
  type ChainClients,
  type Deployment,
  type JobPolicy,
} from "../chain/index.ts";
import { PouwError } from "../errors/index.ts";
import { createRun, type Manifest } from "../ml/index.ts";
import type { ContentStore } from "../store/index.ts";
import { traceRoot } from "../trace/index.ts";
import { fetchManifest, publishManifest } from "./manifest-store.ts";

export type PostJobResult = { jobId: bigint; manifestUri: string; manifestHash: Hex; gasUsed: bigint; txHash: Hex };

export async function postJob(clients: ChainClients, d: Deployment, store: ContentStore, manifest: Manifest, policy: JobPolicy, payment: bigint): Promise<PostJobResult> {
  const { uri, hash } = await publishManifest(store, manifest);
  let gasUsed = 0n;
  const allowance = await withRetry(() => clients.public.readContract({ address: d.token, abi: testTokenAbi, functionName: "allowance", args: [clients.account.address, d.jobMarket] }));
  if (allowance < payment) gasUsed += (await approveToken(clients, { token: d.token, spender: d.jobMarket, amount: payment })).gasUsed;
  const r = await createJob(clients, { jobMarket: d.jobMarket, manifestHash: hash, manifestUri: uri, token: d.token, payment, policy });
  return { jobId: r.jobId, manifestUri: uri, manifestHash: hash, gasUsed: gasUsed + r.gasUsed, txHash: r.hash };
}

export class FetchResultError extends PouwError {
  override name = "FetchResultError";
  override readonly code: string = "FETCH_RESULT";
}

export type FetchResult = { weightsPath: string; provenancePath: string; status: string };

/**
 * Rebuilds the final weights: loads the last segment's committed start checkpoint and re-runs its K
 * steps; the result must reproduce the committed root and end state hash, so the buyer gets exactly
 * the committed weights (and learns of a bad last segment).
 */
export async function fetchResult(clients: ChainClients, d: Deployment, store: ContentStore, jobId: bigint, outDir: string): Promise<FetchResult> {
  const job = await getJob(clients.public, { jobMarket: d.jobMarket, jobId });
  if (job.status === "None") throw new FetchResultError(`job ${jobId} does not exist`);
  const fromBlock = BigInt(d.startBlock);
  const created = await getJobCreated(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock });
  const commits = await getSegmentCommits(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock });
  const S = job.policy.segments;
  if (commits.length !== S) throw new FetchResultError(`job ${jobId} has ${commits.length} of ${S} segments committed (status ${job.status})`);
  const manifest = await fetchManifest(store, created.manifestUri, job.manifestHash);
  const run = await createRun(manifest, { jobId });
  const K = manifest.training.stepsPerSegment;
  const last = commits[S - 1]!;
  let state = run.loadCheckpoint(await store.get(last.checkpointCid), { step: (S - 1) * K });
  const hashes: Hex[] = [run.stateHashOf(state)];
  for (let t = (S - 1) * K + 1; t <= S * K; t++) {
    state = run.step(state, t).state;
    hashes.push(run.stateHashOf(state));
  }
  if (traceRoot((S - 1) * K, hashes) !== last.traceRoot || hashes[K] !== last.endStateHash) {
    throw new FetchResultError(`job ${jobId}: re-running the last segment from its checkpoint does not reproduce the committed trace (the provider's last segment is wrong)`);
  }
  await mkdir(outDir, { recursive: true });
  const weightsPath = join(outDir, "final.safetensors");
  await writeFile(weightsPath, run.checkpointBytes(state));
  const evaluation = run.evaluate(state);
  const provenance = {
    format: "pouw-provenance-1",
    chainId: d.chainId,
    jobMarket: d.jobMarket,
    jobId: jobId.toString(),
    status: job.status,
    buyer: job.buyer,
    provider: job.provider,
    manifestUri: created.manifestUri,
    manifestHash: job.manifestHash,
    corpora: manifest.corpora,
    payment: job.payment.toString(),
    finalStateHash: last.endStateHash,
    evaluation,
    segments: commits.map((c) => ({ segment: c.segment, traceRoot: c.traceRoot, endStateHash: c.endStateHash, lossE6: c.lossE6.toString(), checkpointCid: c.checkpointCid, tx: c.transactionHash, block: c.blockNumber.toString() })),
  };
  const provenancePath = join(outDir, "provenance.json");
  await writeFile(provenancePath, JSON.stringify(provenance, null, 2) + "\n");
  return { weightsPath, provenancePath, status: job.status };
}
