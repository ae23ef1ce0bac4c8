/**
 * What the provenance verifier reads from the chain, behind a small interface (ProvenanceChain) with
 * one implementation over viem: JobMarket (job record, segment commitments), the provenance anchor
 * (`provenanceOf(jobId)`) and, when deployed, DataRegistry (`corpusIdsOf`, `corpusOf`).
 */
import { bytesToHex, parseAbi, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { getJob, withRetry } from "../chain/index.ts";
import { jobMarketAbi } from "../chain/abi/JobMarket.ts";
import { parseCid } from "../store/index.ts";

/**
 * JobMarket's provenance, receipt and terms functions (IJobMarket), as human-readable fragments: the record
 * hash and keccak256 of the weights CID string per job, anchored once by the final provider after
 * finalize. NOTE: the same signatures as in the generated chain/abi/JobMarket.ts; kept here so the
 * verifier also reads a contract that is only known by this interface.
 */
export const provenanceAnchorAbi = parseAbi([
  "function anchorProvenance(uint256 jobId, bytes32 recordHash, string weightsCid)",
  "function provenanceOf(uint256 jobId) view returns (bytes32 recordHash, bytes32 weightsCidHash, uint64 anchoredAt)",
  "function receiptOf(uint256 jobId, uint256 segment, address auditor) view returns (bytes32)",
  "function registries() view returns (address auditors, address providers, address data)",
  "struct JobCorpus { uint64 corpusId; uint96 tokens; uint32 weightE6; bool weighted; }",
  "function termsOf(uint256 jobId) view returns (uint8 minTier, uint16 dataShareBps, JobCorpus[] corpora)",
]);

export const dataRegistryReadAbi = parseAbi([
  "struct Corpus { address registrant; bool retired; uint64 registeredAt; address payout; bytes32 contentDigest; bytes32 termsHash; string licence; string contentCid; }",
  "function corpusIdsOf(bytes32 contentDigest, address payout) view returns (uint64[])",
  "function corpusOf(uint64 corpusId) view returns (Corpus)",
]);

export type ChainJob = { manifestHash: Hex; segments: number; status: string };
export type ChainCorpus = { corpusId: bigint; contentCid: string; licence: string; retired: boolean; payout: Address };
export type ChainJobCorpus = { corpusId: bigint; tokens: bigint; weightE6: number; weighted: boolean };
export type ChainAnchor = { recordHash: Hex; weightsCidHash: Hex; anchoredAt: bigint };

export interface ProvenanceChain {
  chainId(): Promise<number>;
  /** The job, or undefined when no such job exists. */
  job(jobId: bigint): Promise<ChainJob | undefined>;
  /** Whether (traceRoot, endStateHash) is what was committed for the segment. */
  verifySegment(jobId: bigint, segment: number, traceRoot: Hex, endStateHash: Hex): Promise<boolean>;
  /** The anchored record hash and keccak256(weights CID), or undefined when nothing is anchored. */
  provenance(jobId: bigint): Promise<ChainAnchor | undefined>;
  /** Digest of the receipt `auditor` recorded for the segment; undefined when none was recorded. */
  receipt(jobId: bigint, segment: number, auditor: Address): Promise<Hex | undefined>;
  /** The corpora (registry ids, tokens, weights) the job's terms reference; null when the market has no terms. */
  jobCorpora(jobId: bigint): Promise<ChainJobCorpus[] | null>;
  /**
   * The registration of this content id listed under `payout` (IDataRegistry: registrations are claims, looked up
   * by the payout the record names): the one among `prefer` (the job's terms) if any, else the first listed;
   * undefined when none is; null when no registry is known.
   */
  corpus(contentId: string, payout: Address, prefer?: readonly bigint[]): Promise<ChainCorpus | undefined | null>;
}

/** sha2-256 digest of a CIDv1 raw/sha2-256 content id: DataRegistry's `contentDigest`. */
export function contentDigestOf(contentId: string): Hex {
  const bytes = parseCid(contentId).multihash.digest;
  // NOTE: bytesToHex, not Buffer: the dApp bundles this (market/data-terms.ts) and browsers have no Buffer
  return bytesToHex(bytes);
}

export type ViemProvenanceChainOptions = {
  jobMarket: Address;
  /** Contract holding anchorProvenance/provenanceOf (default: jobMarket). */
  provenanceAnchor?: Address;
  /** DataRegistry (default: the one JobMarket.registries() names, if any). */
  dataRegistry?: Address;
};

const ZERO32 = /^0x0{64}$/;

export function viemProvenanceChain(client: PublicClient<Transport, Chain>, o: ViemProvenanceChainOptions): ProvenanceChain {
  const anchor = o.provenanceAnchor ?? o.jobMarket;
  let registry: Promise<Address | undefined> | undefined;
  const dataRegistry = (): Promise<Address | undefined> => {
    registry ??= o.dataRegistry
      ? Promise.resolve(o.dataRegistry)
      : withRetry(() => client.readContract({ address: o.jobMarket, abi: provenanceAnchorAbi, functionName: "registries" }), { what: "registries" })
          .then(([, , data]) => (/^0x0{40}$/i.test(data) ? undefined : data))
          // NOTE: a JobMarket without registries() (older deployment) has no DataRegistry to check against.
          .catch(() => undefined);
    return registry;
  };
  return {
    chainId: () => withRetry(() => client.getChainId(), { what: "eth_chainId" }),
    async job(jobId) {
      const j = await getJob(client, { jobMarket: o.jobMarket, jobId });
      if (j.status === "None") return undefined;
      return { manifestHash: j.manifestHash, segments: j.policy.segments, status: j.status };
    },
    verifySegment: (jobId, segment, traceRoot, endStateHash) =>
      withRetry(() => client.readContract({ address: o.jobMarket, abi: jobMarketAbi, functionName: "verifySegment", args: [jobId, BigInt(segment), traceRoot, endStateHash] }), {
        what: "verifySegment",
      }),
    async provenance(jobId) {
      const [recordHash, weightsCidHash, anchoredAt] = await withRetry(() => client.readContract({ address: anchor, abi: provenanceAnchorAbi, functionName: "provenanceOf", args: [jobId] }), { what: "provenanceOf" });
      if (ZERO32.test(recordHash)) return undefined;
      return { recordHash, weightsCidHash, anchoredAt };
    },
    async receipt(jobId, segment, auditor) {
      const digest = await withRetry(() => client.readContract({ address: o.jobMarket, abi: provenanceAnchorAbi, functionName: "receiptOf", args: [jobId, BigInt(segment), auditor] }), { what: "receiptOf" });
      return ZERO32.test(digest) ? undefined : digest;
    },
    async jobCorpora(jobId) {
      try {
        // retried first: only a call that fails for good (no termsOf on an older deployment) means "no terms"
        const [, , corpora] = await withRetry(() => client.readContract({ address: o.jobMarket, abi: provenanceAnchorAbi, functionName: "termsOf", args: [jobId] }), { what: "termsOf" });
        return corpora.map((c) => ({ corpusId: c.corpusId, tokens: c.tokens, weightE6: c.weightE6, weighted: c.weighted }));
      } catch {
        return null;
      }
    },
    async corpus(contentId, payout, prefer = []) {
      const reg = await dataRegistry();
      if (!reg) return null;
      const ids = await withRetry(() => client.readContract({ address: reg, abi: dataRegistryReadAbi, functionName: "corpusIdsOf", args: [contentDigestOf(contentId), payout] }), { what: "corpusIdsOf" });
      if (ids.length === 0) return undefined;
      const id = ids.find((i) => prefer.includes(i)) ?? ids[0]!;
      const c = await withRetry(() => client.readContract({ address: reg, abi: dataRegistryReadAbi, functionName: "corpusOf", args: [id] }), { what: "corpusOf" });
      return { corpusId: id, contentCid: c.contentCid, licence: c.licence, retired: c.retired, payout: c.payout };
    },
  };
}
