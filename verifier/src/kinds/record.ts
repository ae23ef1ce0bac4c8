/**
 * Recording a finalized inference job's result on KindRecords without a person: `pouw provider claim` records its own
 * finalized kind jobs (with a generate job's dataset CID, checked against the committed last leaf before it is named)
 * and the challenger bot records any finalized kind job it follows that is unrecorded (the score only, resultCid "").
 * KindRecords writes the score once; a result CID is a claim anyone may add once per job (hasResultCid), which readers
 * check against the recorded chain, so recording first never keeps the true CID off the record. Everything the call carries is read from the chain and the last segment's states file: the end
 * state is the preimage of the committed last leaf h(N), so a record is either the job's true aggregate or a revert.
 *
 * @example
 *   const plan = await planKindRecord(ctx, jobId, { resultCid: async ({ km, chain, examplesPerSegment }) => providerDatasetCid(ctx, km, { jobId, examplesPerSegment, chain }) });
 *   if (plan.call) await recordKindResult(ctx.clients, plan.call);
 */
import { getAddress, type Hex } from "viem";
import type { ChainClients } from "../chain/clients.ts";
import type { Deployment } from "../chain/deployment.ts";
import { ContractRevertError } from "../chain/errors.ts";
import { getJob, getJobCreated, getJobKind, getKindRecordsFloor, getKindResult, getSegmentCommits, hasKindResultCid, recordKindResult, txRef, type RecordKindResultParameters, type TxRef } from "../chain/index.ts";
import { readFile } from "node:fs/promises";
import { datasetCidPath } from "../provider/records.ts";
import { ContentNotFoundError, type ContentStore } from "../store/index.ts";
import { generatedDataset } from "./dataset.ts";
import { DatasetError, generateJob, verifyDataset } from "./generate.ts";
import type { KindManifest } from "./kind-manifest.ts";
import { endStateOf, KindJobError } from "./job.ts";
import { fetchKindManifest } from "./market.ts";
import { decodeSegmentStates, KIND_CODES, type InferenceKind } from "./state.ts";

export type KindRecordContext = { clients: ChainClients; deployment: Deployment; store: ContentStore };

/** The result CID the provider names (a generate job's dataset, providerDatasetCid), asked only when it is the sender. */
export type KindRecordOptions = { resultCid?: (p: { km: KindManifest; chain: Hex; examplesPerSegment: number }) => Promise<string | undefined> };

/** What recording a job's result would do: the call to send, or why nothing is sent (`kind` undefined: a training job). */
export type KindRecordPlan = { jobId: bigint; kind?: InferenceKind; call?: Omit<RecordKindResultParameters, "nonce" | "onSigned">; skipped?: string };

const KIND_OF_CODE: Record<number, InferenceKind> = { [KIND_CODES.evaluate]: "evaluate", [KIND_CODES.generate]: "generate" };

/**
 * The recordResult call for finalized job `jobId`, or why there is none: no KindRecords in the deployment, a training
 * job, not Finalized, already recorded (the score, and the CID this sender would name, if any), or a stake below
 * KindRecords' minStake (it would revert KindRecordsStakeTooLow). `resultCid` is asked only when the sender is the
 * job's provider (the one that published the dataset); otherwise the score is recorded with "".
 */
export async function planKindRecord(ctx: KindRecordContext, jobId: bigint, opts: KindRecordOptions = {}): Promise<KindRecordPlan> {
  const { clients, deployment: d } = ctx;
  const kindCode = await getJobKind(clients.public, { jobMarket: d.jobMarket, jobId });
  const kind = KIND_OF_CODE[kindCode];
  if (kind === undefined) return { jobId, skipped: "a training job: no KindRecords result" };
  const kindRecords = d.kindRecords;
  if (!kindRecords) return { jobId, kind, skipped: "the deployment names no KindRecords (kindRecords): nothing recorded" };
  const job = await getJob(clients.public, { jobMarket: d.jobMarket, jobId });
  if (job.status !== "Finalized") return { jobId, kind, skipped: `${job.status}, not Finalized: no result to record yet` };
  const me = getAddress(clients.account.address);
  const mine = job.provider === me;
  const names = mine && opts.resultCid !== undefined;
  const recorded = await getKindResult(clients.public, { kindRecords, jobId });
  if (recorded && !names) return { jobId, kind, skipped: "already recorded on KindRecords" };
  const { minStakeWei: minStake, leastLockBps } = await getKindRecordsFloor(clients.public, { kindRecords, jobMarket: d.jobMarket });
  // KindRecords' rule (KindRecordsStakeTooLow), said before sending: the least lock at the best tier's discount
  const leastLock = (job.policy.requiredStake * BigInt(leastLockBps) + 9_999n) / 10_000n;
  if (leastLock < minStake) return { jobId, kind, skipped: `its least lock ${leastLock} wei is below KindRecords' minStake ${minStake} wei: KindRecords records no result for it` };
  const fromBlock = BigInt(d.startBlock);
  const created = await getJobCreated(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock });
  const km = await fetchKindManifest(ctx.store, created.manifestUri, job.manifestHash);
  if (!km) return { jobId, kind, skipped: `its manifest at ${created.manifestUri} is not an evaluate or generate manifest: nothing recorded` };
  const last = job.policy.segments - 1;
  // the last SegmentCommitted of the last segment (a re-commit after a reopen replaces an earlier one)
  const commit = (await getSegmentCommits(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock })).filter((c) => c.segment === last).at(-1);
  if (!commit) return { jobId, kind, skipped: `Finalized but segment ${last}'s commit event was not found` };
  const sctx = { jobId, kind, modelCid: km.manifest.weightsCid };
  const states = decodeSegmentStates(sctx, await ctx.store.get(commit.checkpointCid, { maxBytes: 1 << 26 }));
  const end = endStateOf({ ctx: sctx }, states.at(-1)!);
  const resultCid = names ? ((await opts.resultCid!({ km, chain: end.chain, examplesPerSegment: job.policy.stepsPerSegment })) ?? "") : "";
  if (recorded && resultCid === "") return { jobId, kind, skipped: "already recorded on KindRecords" };
  if (await hasKindResultCid(clients.public, { kindRecords, jobId, resultCid })) return { jobId, kind, skipped: `already recorded on KindRecords${resultCid ? ` with result ${resultCid}` : ""}` };
  return { jobId, kind, call: { kindRecords, jobId, traceRoot: commit.traceRoot, end, modelCid: km.manifest.weightsCid, resultCid } };
}

export type KindRecordOutcome = { jobId: bigint; kind?: InferenceKind; tx?: TxRef; resultCid?: string; skipped?: string };

/**
 * Plans and sends the record (planKindRecord). A record another party made between the read and the send
 * (KindRecordsAlreadyRecorded) is reported as skipped, not thrown.
 */
export async function recordKindJobResult(ctx: KindRecordContext, jobId: bigint, opts: KindRecordOptions = {}): Promise<KindRecordOutcome> {
  const plan = await planKindRecord(ctx, jobId, opts);
  if (!plan.call) return { jobId, ...(plan.kind ? { kind: plan.kind } : {}), skipped: plan.skipped! };
  try {
    const r = await recordKindResult(ctx.clients, plan.call);
    return { jobId, kind: plan.kind!, tx: txRef("recordResult", r), resultCid: plan.call.resultCid };
  } catch (err) {
    if (err instanceof ContractRevertError && err.errorName === "KindRecordsAlreadyRecorded") return { jobId, kind: plan.kind!, skipped: "recorded by another party meanwhile" };
    throw err;
  }
}

/**
 * The CID of the dataset a provider published for its generate job: the one `provider run` wrote (datasetCidPath),
 * else rebuilt from the model (the same samples, so the same bytes and CID) and put in the store. Checked against the
 * samples chain `chain` the last leaf binds: a dataset that does not chain to it is never named.
 */
export async function providerDatasetCid(
  ctx: { store: ContentStore; stateDir: string; deployment: Deployment },
  km: KindManifest,
  p: { jobId: bigint; examplesPerSegment: number; chain: Hex },
): Promise<string> {
  if (km.kind !== "generate") throw new KindJobError(`job ${p.jobId} is an ${km.kind} job: it has no generated dataset`);
  let cid: string | undefined;
  try {
    cid = (await readFile(datasetCidPath(ctx, p.jobId), "utf8")).trim();
  } catch {
    cid = undefined; // not run here, or the state directory was lost: rebuilt below
  }
  if (cid) {
    try {
      verifyDataset(await ctx.store.get(cid), { chain: p.chain, modelCid: km.manifest.weightsCid });
      return cid;
    } catch (err) {
      if (!(err instanceof DatasetError || err instanceof ContentNotFoundError)) throw err; // rebuilt below
    }
  }
  const d = generatedDataset(await generateJob(km.manifest, await ctx.store.get(km.manifest.weightsCid), p));
  if (d.chain !== p.chain) throw new KindJobError(`job ${p.jobId}: the rebuilt dataset ${d.cid} chains to ${d.chain}, not the committed last leaf's ${p.chain}: not named on KindRecords`);
  return ctx.store.put(d.bytes);
}
