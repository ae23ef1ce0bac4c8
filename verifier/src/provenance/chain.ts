/**
 * What the provenance verifier reads from the chain, behind a small interface (ProvenanceChain). Its one
 * implementation over viem is chain/provenanceChain.ts (`viemProvenanceChain`): JobMarket (job record, segment
 * commitments), the provenance anchor (`provenanceOf(jobId)`) and, when deployed, DataRegistry (`corpusIdsOf`,
 * `corpusOf`).
 */
import { bytesToHex, type Address, type Hex } from "viem";
import { parseCid } from "../store/index.ts";

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
