/**
 * The PoUW receipts anchored for a job (JobMarket's ReceiptRecorded events), in block order: which auditor
 * audited which segment, against which trace root, with which checks and verdict.
 *
 * @example
 *   const receipts = await getJobReceipts(clients.public, { jobMarket, jobId: 1n, fromBlock: 0n });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { withRetry } from "./retry.ts";

export type GetJobReceiptsParameters = { jobMarket: Address; jobId: bigint; fromBlock: bigint; toBlock?: bigint };

export type JobReceipt = {
  jobId: bigint;
  segment: number;
  auditor: Address;
  /** EIP-712 digest of the receipt. */
  digest: Hex;
  traceRoot: Hex;
  /** Bit set of the checks run (receipts/). */
  checks: number;
  sampledSteps: number;
  verdict: number;
  blockNumber: bigint;
  transactionHash: Hex;
};

export type GetJobReceiptsReturnType = JobReceipt[];

export async function getJobReceipts(client: PublicClient<Transport, Chain>, p: GetJobReceiptsParameters): Promise<GetJobReceiptsReturnType> {
  const logs = await withRetry(
    () =>
      client.getContractEvents({
        address: p.jobMarket,
        abi: jobMarketAbi,
        eventName: "ReceiptRecorded",
        args: { jobId: p.jobId },
        fromBlock: p.fromBlock,
        toBlock: p.toBlock ?? "latest",
        strict: true,
      }),
    { what: "ReceiptRecorded logs" },
  );
  return logs.map((l) => ({
    jobId: l.args.jobId,
    segment: Number(l.args.segment),
    auditor: l.args.auditor,
    digest: l.args.digest,
    traceRoot: l.args.traceRoot,
    checks: l.args.checks,
    sampledSteps: l.args.sampledSteps,
    verdict: l.args.verdict,
    blockNumber: l.blockNumber,
    transactionHash: l.transactionHash,
  }));
}
