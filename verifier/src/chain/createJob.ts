/**
 * Create a job: escrows `payment` of `token` (needs an allowance to the JobMarket) and returns the new
 * job id from the JobCreated event. With `terms` it calls `createJobWithTerms` (minimum attestation tier,
 * data share over registered corpora, fixed at creation); with `kind` it calls `createKindJob` (an inference job's
 * kind code and keccak256 of its model CID, fixed at creation: KindRecords records results for them only); else
 * `createJob`.
 *
 * @example
 *   const { jobId } = await createJob(clients, { jobMarket, manifestHash, manifestUri: `cid:${cid}`, token, payment, policy });
 *   await createJob(clients, { ...p, terms: { minTier: 4, dataShareBps: 1_000, corpora: [{ corpusId: 1n, tokens: 10_000n }] } });
 */
import { parseEventLogs, type Address, type Hex } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { ChainClients } from "./clients.ts";
import { ChainError } from "./errors.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

/** IJobMarket.Policy, as the contract takes it. */
export type JobPolicy = {
  segments: number;
  stepsPerSegment: number;
  requiredStake: bigint;
  segmentTimeout: number;
  challengeWindow: number;
  challengerBps: number;
  buyerBps: number;
  burnBps: number;
  timeoutSlashBps: number;
};

/** IJobMarket.Terms: corpora in strictly ascending corpusId order, tokens > 0; dataShareBps > 0 only with corpora. */
export type JobTerms = {
  minTier: number;
  dataShareBps: number;
  corpora: { corpusId: bigint; tokens: bigint }[];
};

export type CreateJobParameters = SendOptions & {
  jobMarket: Address;
  manifestHash: Hex;
  manifestUri: string;
  token: Address;
  payment: bigint;
  policy: JobPolicy;
  /** Create with createJobWithTerms (needs JobMarket's registries when it lists corpora). */
  terms?: JobTerms;
  /** Create with createKindJob: kind 1 evaluate, 2 generate (kinds/state.ts KIND_CODES), modelCidHash = keccak256 of the model CID. Not with `terms`. */
  kind?: { kind: number; modelCidHash: Hex };
};

export type CreateJobReturnType = SendResult & { jobId: bigint };

export async function createJob(clients: ChainClients, p: CreateJobParameters): Promise<CreateJobReturnType> {
  if (p.terms && p.kind) throw new ChainError("createJob: an inference job (kind) takes no terms");
  const r = p.kind
    ? await sendContractTx(
        clients,
        { address: p.jobMarket, abi: jobMarketAbi, functionName: "createKindJob", args: [p.manifestHash, p.manifestUri, p.token, p.payment, p.policy, p.kind.kind, p.kind.modelCidHash] },
        p,
      )
    : p.terms
    ? await sendContractTx(
        clients,
        { address: p.jobMarket, abi: jobMarketAbi, functionName: "createJobWithTerms", args: [p.manifestHash, p.manifestUri, p.token, p.payment, p.policy, p.terms] },
        p,
      )
    : await sendContractTx(clients, { address: p.jobMarket, abi: jobMarketAbi, functionName: "createJob", args: [p.manifestHash, p.manifestUri, p.token, p.payment, p.policy] }, p);
  const [created] = parseEventLogs({ abi: jobMarketAbi, logs: r.receipt.logs, eventName: "JobCreated" });
  if (!created) throw new ChainError(`createJob ${r.hash}: no JobCreated event in the receipt`);
  return { ...r, jobId: created.args.jobId };
}
