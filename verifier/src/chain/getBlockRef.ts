/**
 * A block's number, hash, parent hash and timestamp: the head (no blockNumber) or the canonical block at a height,
 * undefined when the chain has no block there (a reorg shortened it). What the challenger bot's indexer compares its
 * recorded hashes against.
 *
 * @example
 *   const head = await getBlockRef(clients.public);
 *   const b = await getBlockRef(clients.public, { blockNumber: cursor });
 *   if (b?.hash !== recorded) ... // the block the bot processed is no longer canonical
 */
import { BlockNotFoundError, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import { withRetry } from "./retry.ts";

export type BlockRef = { number: bigint; hash: Hex; parentHash: Hex; timestamp: bigint };

export type GetBlockRefParameters = { blockNumber?: bigint };

export async function getBlockRef(client: PublicClient<Transport, Chain>, p: { blockNumber: bigint }): Promise<BlockRef | undefined>;
export async function getBlockRef(client: PublicClient<Transport, Chain>, p?: Record<string, never>): Promise<BlockRef>;
export async function getBlockRef(client: PublicClient<Transport, Chain>, p: GetBlockRefParameters = {}): Promise<BlockRef | undefined> {
  const { blockNumber } = p;
  // a missing block is an answer (undefined), not an RPC failure to retry
  const read = () =>
    blockNumber === undefined
      ? client.getBlock({ blockTag: "latest" })
      : client.getBlock({ blockNumber }).catch((err: unknown) => {
          if (err instanceof BlockNotFoundError) return undefined;
          throw err;
        });
  const b = await withRetry(read, { what: "getBlock" });
  return b && { number: b.number, hash: b.hash, parentHash: b.parentHash, timestamp: b.timestamp };
}
