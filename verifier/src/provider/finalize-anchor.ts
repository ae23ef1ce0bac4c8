/**
 * After the challenge window: finalize the provider's job (anyone may; the provider does it here), then,
 * as the job's final provider (the only party JobMarket lets anchor), build the provenance record with
 * the provenance module, write it next to the final weights in the provider's job directory, publish
 * both to the content store (the record's CID on the board, market/provenance-board.ts) and anchor
 * `anchorProvenance(jobId, recordHash, weightsCid)`. The record's receipts are the AuditReceipts anchored on chain for
 * the job (ReceiptRecorded) up to the block that finalized it, each with its signature read from the recordReceipt
 * calldata and recovered to the auditor JobMarket named; one that does not recover is left out with a warning.
 * Idempotent: a rerun rebuilds the same record (receipts recorded after finalize never enter it) and skips the anchor
 * when the chain already holds its hash.
 *
 * @example
 *   const r = await finalizeAndAnchor({ clients, deployment, store, board, stateDir }, jobId);
 *   // r.provenance: { weightsPath, recordPath, recordHash, recordCid, weightsCid, alreadyAnchored }
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { getAddress, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import {
  ContractRevertError,
  finalize,
  getJob,
  getJobCreated,
  getJobFinalized,
  getReceiptsRecorded,
  getSegmentCommits,
  txRef,
  type JobStatusName,
  type SegmentCommit,
  type TxRef,
} from "../chain/index.ts";
import { jobMarketDomain, recoverAuditReceiptSigner } from "../receipts/index.ts";
import { logger } from "../log/index.ts";
import { rebuildFinalWeights } from "../market/final-weights.ts";
import { fetchManifest } from "../market/manifest-store.ts";
import { publishProvenance } from "../market/provenance-board.ts";
import { createRun, deploymentSalt } from "../ml/index.ts";
import {
  anchorProvenance,
  buildProvenanceRecord,
  canonicalRecordBytes,
  ProvenanceBuildError,
  viemProvenanceChain,
  weightsStateHash,
  writeProvenance,
  type SignedReceipt,
} from "../provenance/index.ts";
import type { KindRecordOutcome } from "../kinds/record.ts";
import { endRecordPath, providerJobDir, type ProviderContext } from "./records.ts";

const log = logger("provider");

/** File name of the final weights next to the record. */
export const FINAL_WEIGHTS_FILE = "final.safetensors";

export type FinalizeAndAnchorOptions = {
  /** Auditors' signed receipts to include in the record (default: the ones anchored on chain, anchoredReceipts). */
  receipts?: readonly SignedReceipt[];
};

export type AnchoredProvenance = {
  weightsPath: string;
  recordPath: string;
  recordHash: Hex;
  recordCid: string;
  weightsCid: string;
  alreadyAnchored: boolean;
  /** Receipts in the record, and the distinct segments they cover. */
  receipts: number;
  auditedSegments: number;
};

export type FinalizeAndAnchorResult = {
  jobId: bigint;
  status: JobStatusName;
  /** Whether this call sent finalize. */
  finalized: boolean;
  gasUsed: bigint;
  /** The transactions this call sent (finalize, anchorProvenance). */
  txs: TxRef[];
  /** Set when the job is Finalized and this account is its final provider. */
  provenance?: AnchoredProvenance;
  /** Why nothing was anchored (not finalizable, or another provider's job) or, for a kind job, recorded. */
  skipped?: string;
  /** An evaluate or generate job: its result recorded on KindRecords (kinds/record.ts) instead of a provenance record. */
  kindResult?: KindRecordOutcome;
};

/** The last SegmentCommitted event of each segment (a re-commit after a reopen replaces the earlier one). */
function latestCommits(commits: readonly SegmentCommit[]): SegmentCommit[] {
  const bySegment = new Map<number, SegmentCommit>();
  for (const c of commits) bySegment.set(c.segment, c);
  return [...bySegment.values()].sort((a, b) => a.segment - b.segment);
}

/**
 * The receipts anchored for a job up to block `toBlock`, as the record takes them: each with the signature from its
 * recordReceipt calldata, recovered to the auditor the event names, and naming the committed trace root of its segment.
 * The rest are returned in `dropped` with the reason (the caller logs them).
 */
export async function anchoredReceipts(
  client: PublicClient<Transport, Chain>,
  p: { chainId: number; jobRecords: Address; jobId: bigint; fromBlock: bigint; toBlock?: bigint; commits: readonly SegmentCommit[] },
): Promise<{ receipts: SignedReceipt[]; dropped: { segment: number; auditor: Address; reason: string }[] }> {
  const recorded = await getReceiptsRecorded(client, { jobRecords: p.jobRecords, jobId: p.jobId, fromBlock: p.fromBlock, ...(p.toBlock === undefined ? {} : { toBlock: p.toBlock }), signatures: true });
  const domain = jobMarketDomain(BigInt(p.chainId), p.jobRecords);
  const receipts: SignedReceipt[] = [];
  const dropped: { segment: number; auditor: Address; reason: string }[] = [];
  for (const r of recorded) {
    const drop = (reason: string) => dropped.push({ segment: r.segment, auditor: r.auditor, reason });
    const commit = p.commits.find((c) => c.segment === r.segment);
    if (!commit || commit.traceRoot.toLowerCase() !== r.traceRoot.toLowerCase()) {
      drop(`names trace root ${r.traceRoot}, not the committed one`);
      continue;
    }
    if (r.signature === undefined) {
      drop(`no recordReceipt calldata in tx ${r.transactionHash} to read the signature from`);
      continue;
    }
    const receipt = { jobId: r.jobId, segment: r.segment, traceRoot: r.traceRoot, checks: r.checks, sampledSteps: r.sampledSteps, verdict: r.verdict };
    let signer: Address;
    try {
      signer = await recoverAuditReceiptSigner(domain, receipt, r.signature);
    } catch (err) {
      drop(`signature does not recover: ${(err as Error).message}`);
      continue;
    }
    if (signer !== r.auditor) {
      drop(`signature recovers to ${signer}, not ${r.auditor}`);
      continue;
    }
    receipts.push({ ...receipt, auditor: r.auditor, signature: r.signature });
  }
  return { receipts, dropped };
}

export async function finalizeAndAnchor(ctx: ProviderContext, jobId: bigint, options: FinalizeAndAnchorOptions = {}): Promise<FinalizeAndAnchorResult> {
  const { clients, deployment: d } = ctx;
  const jobMarket = d.jobMarket;
  const jobRecords = d.jobRecords;
  let job = await getJob(clients.public, { jobMarket, jobId });
  let gasUsed = 0n;
  let finalized = false;
  const txs: TxRef[] = [];
  if (job.status === "Committed") {
    try {
      const f = await finalize(clients, { jobMarket, jobId });
      gasUsed += f.gasUsed;
      txs.push(txRef("finalize", f));
      finalized = true;
    } catch (err) {
      // someone else finalized it between the read and the send
      if (!(err instanceof ContractRevertError && err.errorName === "JobMarketWrongStatus")) throw err;
    }
    job = await getJob(clients.public, { jobMarket, jobId });
  }
  const result: FinalizeAndAnchorResult = { jobId, status: job.status, finalized, gasUsed, txs };
  if (job.status !== "Finalized") return { ...result, skipped: `${job.status}, not finalizable` };
  const me = getAddress(clients.account.address);
  if (job.provider !== me) return { ...result, skipped: `final provider is ${job.provider}, not ${me}: only it anchors provenance` };

  const fromBlock = BigInt(d.startBlock);
  const created = await getJobCreated(clients.public, { jobMarket, jobId, fromBlock });
  // an evaluate or generate job has no provenance record: its result goes on KindRecords (a generate job's with the
  // dataset CID its provider published), so nobody has to record it by hand
  const { fetchKindManifest } = await import("../kinds/market.ts");
  if (await fetchKindManifest(ctx.store, created.manifestUri, job.manifestHash)) {
    const { providerDatasetCid, recordKindJobResult } = await import("../kinds/record.ts");
    const kindResult = await recordKindJobResult(ctx, jobId, {
      resultCid: async ({ km, chain, examplesPerSegment }) => (km.kind === "generate" ? providerDatasetCid(ctx, km, { jobId, examplesPerSegment, chain }) : undefined),
    });
    if (kindResult.tx) txs.push(kindResult.tx);
    return { ...result, txs, kindResult, ...(kindResult.skipped ? { skipped: `${kindResult.kind ?? "kind"} job: ${kindResult.skipped}` } : {}) };
  }
  const manifest = await fetchManifest(ctx.store, created.manifestUri, job.manifestHash, {
    circuitHash: async (m) => (await import("../market/circuit-job.ts")).circuitJobCheck(clients.public, d, jobId)(m),
  });
  // NOTE: no provenance record for circuit-class jobs yet (their h(t) is the circuit's Poseidon commitment of W,
  // which provenance/weights.ts does not compute): the job is finalized and paid, nothing is anchored
  if (manifest.model.arch === "linear-tile") return { ...result, skipped: "linear-tile (circuit-class) jobs have no provenance record yet (docs/zk.md): finalized, nothing anchored" };
  const commits = latestCommits(await getSegmentCommits(clients.public, { jobMarket, jobId, fromBlock }));
  const S = job.policy.segments;
  const last = commits.find((c) => c.segment === S - 1);
  if (!last) throw new ProvenanceBuildError(`job ${jobId} is Finalized but segment ${S - 1}'s commit event was not found`);

  // The final weights: the end checkpoint this provider stored for the last segment, else rebuilt from chain.
  let weightsBytes: Uint8Array | undefined;
  try {
    const cid = (await readFile(endRecordPath(ctx, jobId, S - 1), "utf8")).trim();
    const bytes = await ctx.store.get(cid);
    if (weightsStateHash(manifest, jobId, bytes, manifest.training.steps) === last.endStateHash) weightsBytes = bytes;
    else log.warn({ jobId: jobId.toString() }, "stored end checkpoint is not the committed final state; rebuilding");
  } catch (err) {
    log.info({ err, jobId: jobId.toString() }, "no stored end checkpoint for the last segment; rebuilding the final weights");
  }
  weightsBytes ??= await rebuildFinalWeights(await createRun(manifest, { jobId, salt: deploymentSalt(d, jobId), store: ctx.store }), ctx.store, commits);

  let receipts = options.receipts;
  if (receipts === undefined) {
    // INVARIANT: the same receipts on every rerun: only those recorded up to the finalize block
    const fin = await getJobFinalized(clients.public, { jobMarket, jobId, fromBlock });
    if (!fin) throw new ProvenanceBuildError(`job ${jobId} is Finalized but its JobFinalized event was not found`);
    const a = await anchoredReceipts(clients.public, { chainId: d.chainId, jobRecords, jobId, fromBlock, toBlock: fin.blockNumber, commits });
    for (const x of a.dropped) log.warn({ jobId: jobId.toString(), segment: x.segment, auditor: x.auditor, reason: x.reason }, "anchored receipt left out of the provenance record");
    receipts = a.receipts;
  }
  const record = buildProvenanceRecord({ chainId: d.chainId, jobMarket, jobRecords, jobId, manifest, manifestUri: created.manifestUri, segments: commits, receipts, weightsBytes });
  const dir = providerJobDir(ctx, jobId);
  const written = await writeProvenance(dir, record);
  const weightsPath = join(dir, FINAL_WEIGHTS_FILE);
  await writeFile(weightsPath, weightsBytes);
  const weightsCid = await ctx.store.put(weightsBytes);
  const recordCid = await publishProvenance(ctx.board, jobMarket, jobId, canonicalRecordBytes(record));

  const anchored = await viemProvenanceChain(clients.public, { jobMarket, jobRecords }).provenance(jobId);
  if (anchored && anchored.recordHash !== written.recordHash) {
    throw new ProvenanceBuildError(`job ${jobId}: the chain already anchors record ${anchored.recordHash}, not this record ${written.recordHash} (anchors are write-once)`);
  }
  if (!anchored) {
    const a = await anchorProvenance(clients, { anchor: jobRecords, jobId, recordHash: written.recordHash, weightsCid: record.weights.cid });
    gasUsed += a.gasUsed;
    txs.push(txRef("anchorProvenance", a));
  }
  log.info({ jobId: jobId.toString(), recordHash: written.recordHash, weightsCid }, anchored ? "provenance already anchored" : "provenance anchored");
  return { ...result, gasUsed, provenance: {
      weightsPath,
      recordPath: written.path,
      recordHash: written.recordHash,
      recordCid,
      weightsCid,
      alreadyAnchored: anchored !== undefined,
      receipts: record.receipts.length,
      auditedSegments: new Set(record.receipts.map((r) => r.segment)).size,
    },
  };
}
