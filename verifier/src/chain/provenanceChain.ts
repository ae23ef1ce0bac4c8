/**
 * The viem implementation of the provenance verifier's ProvenanceChain (provenance/chain.ts): JobMarket's job record,
 * segment commitments and terms, JobRecords' receipts, the provenance anchor (`provenanceOf`, default JobRecords) and DataRegistry
 * (`corpusIdsOf`, `corpusOf`; default the one JobMarket.registries() names).
 *
 * @example
 *   const report = await verifyProvenance({ recordBytes, weightsBytes, chain: viemProvenanceChain(client, { jobMarket, jobRecords }) });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { contentDigestOf, type ProvenanceChain } from "../provenance/chain.ts";
import { getCorpus, getCorpusIds } from "./getCorpusRegistration.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { jobRecordsAbi } from "./abi/JobRecords.ts";
import { getJob } from "./getJob.ts";
import { getReceiptOf } from "./getReceiptOf.ts";
import { getRegistries } from "./getRegistries.ts";
import { withRetry } from "./retry.ts";

export type ViemProvenanceChainOptions = {
  jobMarket: Address;
  /** JobRecords: the receipts (receiptOf) and, by default, the provenance anchor. */
  jobRecords: Address;
  /** Contract holding anchorProvenance/provenanceOf (default: jobRecords). */
  provenanceAnchor?: Address;
  /** DataRegistry (default: the one JobMarket.registries() names, if any). */
  dataRegistry?: Address;
};

const ZERO32 = /^0x0{64}$/;

export function viemProvenanceChain(client: PublicClient<Transport, Chain>, o: ViemProvenanceChainOptions): ProvenanceChain {
  const anchor = o.provenanceAnchor ?? o.jobRecords;
  let registry: Promise<Address | undefined> | undefined;
  const dataRegistry = (): Promise<Address | undefined> => {
    registry ??= o.dataRegistry
      ? Promise.resolve(o.dataRegistry)
      : getRegistries(client, { jobMarket: o.jobMarket })
          .then((r) => r.data)
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
      const [recordHash, weightsCidHash, anchoredAt] = await withRetry(() => client.readContract({ address: anchor, abi: jobRecordsAbi, functionName: "provenanceOf", args: [jobId] }), { what: "provenanceOf" });
      if (ZERO32.test(recordHash)) return undefined;
      return { recordHash, weightsCidHash, anchoredAt };
    },
    async receipt(jobId, segment, auditor) {
      const digest = await getReceiptOf(client, { jobRecords: o.jobRecords, jobId, segment, auditor });
      return ZERO32.test(digest) ? undefined : digest;
    },
    async jobCorpora(jobId) {
      try {
        // retried first: only a call that fails for good (no termsOf on an older deployment) means "no terms"
        const [, , corpora] = await withRetry(() => client.readContract({ address: o.jobMarket, abi: jobMarketAbi, functionName: "termsOf", args: [jobId] }), { what: "termsOf" });
        return corpora.map((c) => ({ corpusId: c.corpusId, tokens: c.tokens, weightE6: c.weightE6, weighted: c.weighted }));
      } catch {
        return null;
      }
    },
    async corpus(contentId, payout, prefer = []) {
      const reg = await dataRegistry();
      if (!reg) return null;
      const ids = await getCorpusIds(client, { dataRegistry: reg, contentDigest: contentDigestOf(contentId), payout });
      if (ids.length === 0) return undefined;
      const id = ids.find((i) => prefer.includes(i)) ?? ids[0]!;
      const c = await getCorpus(client, { dataRegistry: reg, corpusId: id });
      return { corpusId: id, contentCid: c.contentCid, licence: c.licence, retired: c.retired, payout: c.payout };
    },
  };
}
