/**
 * What the provenance verifier reads from the chain, behind a small interface (ProvenanceChain) with
 * one implementation over viem: JobMarket (job record, segment commitments), the provenance anchor
 * (`provenanceOf(jobId)`) and, when deployed, DataRegistry (`corpusIdOf`, `corpusOf`).
 */
import { parseAbi, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { getJob, withRetry } from "../chain/index.ts";
import { jobMarketAbi } from "../chain/abi/JobMarket.ts";
import { parseCid } from "../store/index.ts";

/**
 * The anchor's interface (IJobMarket / IDataRegistry provenance functions): a record hash and the
 * weights CID per job, written once at or after finalize.
 */
export const provenanceAnchorAbi = parseAbi([
  "function anchorProvenance(uint256 jobId, bytes32 recordHash, string weightsCid)",
  "function provenanceOf(uint256 jobId) view returns (bytes32 recordHash, string weightsCid)",
]);

export const dataRegistryReadAbi = parseAbi([
  "struct Corpus { address owner; bool retired; uint64 registeredAt; address payout; bytes32 contentDigest; bytes32 termsHash; string licence; string contentCid; }",
  "function corpusIdOf(bytes32 contentDigest) view returns (uint64)",
  "function corpusOf(uint64 corpusId) view returns (Corpus)",
]);

export type ChainJob = { manifestHash: Hex; segments: number; status: string };
export type ChainCorpus = { corpusId: bigint; contentCid: string; licence: string; retired: boolean; payout: Address };

export interface ProvenanceChain {
  chainId(): Promise<number>;
  /** The job, or undefined when no such job exists. */
  job(jobId: bigint): Promise<ChainJob | undefined>;
  /** Whether (traceRoot, endStateHash) is what was committed for the segment. */
  verifySegment(jobId: bigint, segment: number, traceRoot: Hex, endStateHash: Hex): Promise<boolean>;
  /** The anchored record hash and weights CID, or undefined when nothing is anchored. */
  provenance(jobId: bigint): Promise<{ recordHash: Hex; weightsCid: string } | undefined>;
  /** The registered corpus with this content id; undefined when none is; null when no registry is known. */
  corpus(contentId: string): Promise<ChainCorpus | undefined | null>;
}

/** sha2-256 digest of a CIDv1 raw/sha2-256 content id: DataRegistry's `contentDigest`. */
export function contentDigestOf(contentId: string): Hex {
  const bytes = parseCid(contentId).multihash.digest;
  return `0x${Buffer.from(bytes).toString("hex")}` as Hex;
}

export type ViemProvenanceChainOptions = {
  jobMarket: Address;
  /** Contract holding anchorProvenance/provenanceOf (default: jobMarket). */
  provenanceAnchor?: Address;
  dataRegistry?: Address;
};

export function viemProvenanceChain(client: PublicClient<Transport, Chain>, o: ViemProvenanceChainOptions): ProvenanceChain {
  const anchor = o.provenanceAnchor ?? o.jobMarket;
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
      const [recordHash, weightsCid] = await withRetry(() => client.readContract({ address: anchor, abi: provenanceAnchorAbi, functionName: "provenanceOf", args: [jobId] }), {
        what: "provenanceOf",
      });
      if (/^0x0{64}$/.test(recordHash)) return undefined;
      return { recordHash, weightsCid };
    },
    async corpus(contentId) {
      if (!o.dataRegistry) return null;
      const registry = o.dataRegistry;
      const id = await withRetry(() => client.readContract({ address: registry, abi: dataRegistryReadAbi, functionName: "corpusIdOf", args: [contentDigestOf(contentId)] }), { what: "corpusIdOf" });
      if (id === 0n) return undefined;
      const c = await withRetry(() => client.readContract({ address: registry, abi: dataRegistryReadAbi, functionName: "corpusOf", args: [id] }), { what: "corpusOf" });
      return { corpusId: id, contentCid: c.contentCid, licence: c.licence, retired: c.retired, payout: c.payout };
    },
  };
}
