/**
 * What JobMarket credited to data contributors at finalize (DataShareCredited events): per job and corpus, the payout
 * address and the amount, with block and transaction. Filter by payout (a contributor's own credits), job or corpus.
 *
 * @example
 *   const credits = await getDataShareCredits(clients.public, { jobMarket, payout: me, fromBlock: BigInt(d.startBlock) });
 */
import type { Address, Chain, Hex, PublicClient, Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { withRetry } from "./retry.ts";

export type GetDataShareCreditsParameters = { jobMarket: Address; payout?: Address; jobId?: bigint; corpusId?: bigint; fromBlock: bigint; toBlock?: bigint };

export type DataShareCredit = { jobId: bigint; corpusId: bigint; payout: Address; amount: bigint; blockNumber: bigint; transactionHash: Hex };

export type GetDataShareCreditsReturnType = DataShareCredit[];

export async function getDataShareCredits(client: PublicClient<Transport, Chain>, p: GetDataShareCreditsParameters): Promise<GetDataShareCreditsReturnType> {
  const logs = await withRetry(
    () =>
      client.getContractEvents({
        address: p.jobMarket,
        abi: jobMarketAbi,
        eventName: "DataShareCredited",
        args: { ...(p.jobId === undefined ? {} : { jobId: p.jobId }), ...(p.corpusId === undefined ? {} : { corpusId: p.corpusId }), ...(p.payout === undefined ? {} : { payout: p.payout }) },
        fromBlock: p.fromBlock,
        toBlock: p.toBlock ?? "latest",
        strict: true,
      }),
    { what: "DataShareCredited logs" },
  );
  return logs.map((l) => ({ jobId: l.args.jobId, corpusId: l.args.corpusId, payout: l.args.payout, amount: l.args.amount, blockNumber: l.blockNumber, transactionHash: l.transactionHash }));
}
