/**
 * Inference jobs through the market commands: `pouw buyer create --manifest M` posts an evaluate or generate manifest
 * (createKindJob), `pouw provider run J` computes and commits a kind job (runKindJob). One example is one step
 * (docs/kinds.md): the policy's segments x stepsPerSegment is the manifest's example count.
 *
 * @example
 *   const km = kindManifestOf(JSON.parse(text));            // undefined: a training manifest
 *   if (km) await createKindJob(ctx, km, { payment, stake, mint: true });
 */
import canonicalizeModule from "canonicalize";
import type { Hex } from "viem";
import { commitSegment, createJob, getDisputeParams, txRef, type ChainClients, type Deployment, type JobPolicy, type JobStatusName, type TxRef } from "../chain/index.ts";
import { EVALUATE_KIND, evaluateManifestHash, parseEvaluateManifest, type EvaluateManifest } from "../evaluate/index.ts";
import { ensureTokenFunds } from "../market/funding.ts";
import type { KindQuote, KindRecordsFloor } from "../market/quote-kind.ts";
import { kindExamples, kindPolicy, type KindPolicyOptions } from "./policy.ts";
import { ManifestMismatchError, MANIFEST_URI_PREFIX } from "../market/manifest-store.ts";
import type { ContentStore } from "../store/index.ts";
import { evaluateJob } from "./evaluate.ts";
import { generatedDataset } from "./dataset.ts";
import { GENERATE_KIND, generateJob, generateManifestHash, parseGenerateManifest, sampleResult, type GenerateManifest } from "./generate.ts";
import { KindJobError, kindSegments, type ExampleJob, type KindSegment } from "./job.ts";
import { KIND_CODES, subjectOf, type InferenceKind } from "./state.ts";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

export { KIND_CHALLENGE_WINDOW_SECONDS, MAX_DEFAULT_EXAMPLES_PER_SEGMENT, kindExamples, kindPolicy, type KindPolicyOptions } from "./policy.ts";

export type { KindManifest } from "./kind-manifest.ts";
import type { KindManifest } from "./kind-manifest.ts";

/** The kind manifest `value` is, parsed (a ManifestError names the bad field), or undefined when its kind is not an inference kind. */
export function kindManifestOf(value: unknown): KindManifest | undefined {
  const kind = typeof value === "object" && value !== null ? (value as { kind?: unknown }).kind : undefined;
  if (kind === EVALUATE_KIND) return { kind: "evaluate", manifest: parseEvaluateManifest(value) };
  if (kind === GENERATE_KIND) return { kind: "generate", manifest: parseGenerateManifest(value) };
  return undefined;
}

export function kindManifestHash(km: KindManifest): Hex {
  return km.kind === "evaluate" ? evaluateManifestHash(km.manifest) : generateManifestHash(km.manifest);
}

/** The job of `km` with K examples a segment; `weights` must hash to its weightsCid. */
export function openKindJob(km: KindManifest, weights: Uint8Array, p: { jobId: bigint; examplesPerSegment: number }): Promise<ExampleJob & { kind: InferenceKind }> {
  return km.kind === "evaluate" ? evaluateJob(km.manifest, weights, p).then((j) => Object.assign(j, { kind: "evaluate" as const })) : generateJob(km.manifest, weights, p).then((j) => Object.assign(j, { kind: "generate" as const }));
}

export type KindMarketContext = { clients: ChainClients; deployment: Deployment; store: ContentStore };

export type CreateKindJobResult = { jobId: bigint; kind: InferenceKind; manifestUri: string; manifestHash: Hex; policy: JobPolicy; payment: bigint; txs: TxRef[]; /** The quote the stake came from (absent with an explicit stake). */ quote?: KindQuote };

/**
 * Posts a kind job: first its dry run (the weights resolve from the store, the harness opens over the corpus, example 1
 * computes; before any transaction, so a job nobody can run is never posted), then the funding, the manifest's
 * canonical JSON under `cid:` and createKindJob with manifestHash = the kind manifest's hash, its kind code and its
 * model's CID hash (fixed on chain: KindRecords records a result for that kind and model only).
 */
export async function createKindJob(ctx: KindMarketContext, km: KindManifest, opts: KindPolicyOptions & { mint?: boolean; subject: string }): Promise<CreateKindJobResult> {
  const game = ctx.deployment.disputeGame ? await getDisputeParams(ctx.clients.public, { disputeGame: ctx.deployment.disputeGame }) : undefined;
  const floor = await kindRecordsFloor(ctx);
  const { policy, payment, quote } = kindPolicy(km, { ...opts, ...(game ? { panel: { size: game.panelSize, feeWei: game.panelFee } } : {}), ...(floor ? { kindRecords: floor } : {}) });
  try {
    const job = await openKindJob(km, await ctx.store.get(km.manifest.weightsCid), { jobId: 0n, examplesPerSegment: policy.stepsPerSegment });
    await job.results(0, 1);
  } catch (err) {
    throw new KindJobError(`${opts.subject}: the ${km.kind} job cannot run (not posted, no transaction sent): ${(err as Error).message}`, { cause: err });
  }
  const txs = await ensureTokenFunds(ctx.clients, ctx.deployment, ctx.deployment.jobMarket, payment, { mint: opts.mint === true });
  const cid = await ctx.store.put(new TextEncoder().encode(canonicalize(km.manifest)!));
  const manifestUri = `${MANIFEST_URI_PREFIX}${cid}`;
  const manifestHash = kindManifestHash(km);
  const kind = { kind: KIND_CODES[km.kind], modelCidHash: subjectOf(km.manifest.weightsCid) };
  const r = await createJob(ctx.clients, { jobMarket: ctx.deployment.jobMarket, manifestHash, manifestUri, token: ctx.deployment.token, payment, policy, kind });
  txs.push(txRef("createJob", r));
  return { jobId: r.jobId, kind: km.kind, manifestUri, manifestHash, policy, payment, txs, ...(quote ? { quote } : {}) };
}

/** The deployed KindRecords' floor on a kind job's stake (its minStake, JobMarket's best-tier lock share), or undefined when the deployment names none. */
export async function kindRecordsFloor(ctx: Pick<KindMarketContext, "clients" | "deployment">): Promise<KindRecordsFloor | undefined> {
  const kindRecords = ctx.deployment.kindRecords;
  if (!kindRecords) return undefined;
  const { getKindRecordsFloor } = await import("../chain/index.ts");
  return getKindRecordsFloor(ctx.clients.public, { kindRecords, jobMarket: ctx.deployment.jobMarket });
}

/**
 * The kind manifest a job's `manifestUri` holds, checked against the job's manifestHash, or undefined when it is a
 * training manifest (the caller reads it as one).
 */
export async function fetchKindManifest(store: ContentStore, uri: string, expectedHash: Hex): Promise<KindManifest | undefined> {
  if (!uri.startsWith(MANIFEST_URI_PREFIX)) return undefined;
  // NOTE: a manifest no source serves throws (the caller's content error), never reads as "not a kind job"
  const bytes = await store.get(uri.slice(MANIFEST_URI_PREFIX.length));
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined; // the training reader reports what is wrong with it
  }
  const km = kindManifestOf(value);
  if (km === undefined) return undefined;
  const h = kindManifestHash(km);
  if (h !== expectedHash) throw new ManifestMismatchError(`${km.kind} manifest at ${uri} hashes to ${h}, but the job commits ${expectedHash}`);
  return km;
}

/**
 * What `pouw provider accept` checks of a kind job before it locks a stake: its manifest by the job's hash, that the
 * policy's steps are its examples, and the dry run of example 1. False when the job is a training job (not checked here).
 */
export async function checkKindJobBeforeAccept(ctx: KindMarketContext, jobId: bigint): Promise<boolean> {
  const { getJob, getJobCreated } = await import("../chain/index.ts");
  const job = await getJob(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket, jobId });
  const created = await getJobCreated(ctx.clients.public, { jobMarket: ctx.deployment.jobMarket, jobId, fromBlock: BigInt(ctx.deployment.startBlock) });
  const km = await fetchKindManifest(ctx.store, created.manifestUri, job.manifestHash);
  if (km === undefined) return false;
  const N = kindExamples(km);
  // INVARIANT: a kind job is accepted only if `provider run` will run it (runKindJob checks the same shape)
  if (job.policy.segments * job.policy.stepsPerSegment !== N) {
    throw new KindJobError(`job ${jobId}: its policy's ${job.policy.segments} x ${job.policy.stepsPerSegment} steps are not the ${km.kind} manifest's ${N} examples: not accepted (no stake locked)`);
  }
  try {
    const kj = await openKindJob(km, await ctx.store.get(km.manifest.weightsCid), { jobId, examplesPerSegment: job.policy.stepsPerSegment });
    await kj.results(0, 1);
  } catch (err) {
    throw new KindJobError(`job ${jobId}: the ${km.kind} job cannot run: ${(err as Error).message}: not accepted (no stake locked)`, { cause: err });
  }
  return true;
}

export type RunKindJobResult = {
  kind: InferenceKind;
  resumedFrom: number;
  committed: number[];
  txs: TxRef[];
  gasUsed: bigint;
  wallSeconds: number;
  /** A generate job's dataset (`pouw-generated-1`), published to the store: what KindRecords' resultCid names. */
  datasetCid?: string;
};

/**
 * The provider's run of an accepted kind job: every example's result from the pinned forward pass, the segments'
 * states files published and segments nextSegment.. committed in order (provider.ts's invariant: published first).
 * A restart recomputes the results (inference has no optimizer state to resume) and commits what is left.
 */
export async function runKindJob(ctx: KindMarketContext, km: KindManifest, job: { jobId: bigint; nextSegment: number; policy: JobPolicy; status: JobStatusName }): Promise<RunKindJobResult> {
  const started = performance.now();
  const N = kindExamples(km);
  if (job.policy.segments * job.policy.stepsPerSegment !== N) {
    throw new KindJobError(`job ${job.jobId}: its policy's ${job.policy.segments} x ${job.policy.stepsPerSegment} steps are not the ${km.kind} manifest's ${N} examples`);
  }
  const result: RunKindJobResult = { kind: km.kind, resumedFrom: job.nextSegment, committed: [], txs: [], gasUsed: 0n, wallSeconds: 0 };
  if (job.status === "Active") {
    const weights = await ctx.store.get(km.manifest.weightsCid);
    const p = { jobId: job.jobId, examplesPerSegment: job.policy.stepsPerSegment };
    let segments: KindSegment[];
    if (km.kind === "generate") {
      // the dataset holds the leaves' samples: published before any commit, so the CID reported is always servable
      const gj = await generateJob(km.manifest, weights, p);
      const d = generatedDataset(gj);
      result.datasetCid = await ctx.store.put(d.bytes);
      segments = kindSegments(gj, d.samples.map(sampleResult));
    } else {
      const kj = await openKindJob(km, weights, p);
      segments = kindSegments(kj, await kj.results(0, N));
    }
    for (const s of segments.slice(job.nextSegment)) {
      // INVARIANT: the states file is published before its commitment, so a committed segment is always servable
      const checkpointCid = await ctx.store.put(s.file);
      const r = await commitSegment(ctx.clients, { jobMarket: ctx.deployment.jobMarket, jobId: job.jobId, segment: s.index, stateHashes: [...s.stateHashes], lossE6: s.lossE6, checkpointCid });
      result.committed.push(s.index);
      result.txs.push(txRef(`commitSegment ${s.index}`, r));
      result.gasUsed += r.gasUsed;
    }
  }
  result.wallSeconds = (performance.now() - started) / 1000;
  return result;
}
