/**
 * The latest PeersAnnounced of an account on the PeerDirectory: the multiaddrs its content node was last announced
 * at, or undefined when it never announced. An empty list means the account withdrew its node.
 *
 * IMPORTANT: nothing here is trusted beyond "this account sent it": the reader still checks each address's shape and
 * /p2p/ peer id (store/ipfs.ts checkMultiaddr; noise authenticates the peer) and every byte by its CID.
 *
 * @example
 *   const a = await getAnnouncedPeers(clients.public, { peerDirectory: d.peerDirectory!, account: job.provider, fromBlock: BigInt(d.startBlock) });
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { peerDirectoryAbi } from "./abi/PeerDirectory.ts";
import { withRetry } from "./retry.ts";

export type GetAnnouncedPeersParameters = { peerDirectory: Address; account: Address; fromBlock: bigint };

export type GetAnnouncedPeersReturnType = { multiaddrs: readonly string[]; blockNumber: bigint } | undefined;

export async function getAnnouncedPeers(client: PublicClient<Transport, Chain>, p: GetAnnouncedPeersParameters): Promise<GetAnnouncedPeersReturnType> {
  const logs = await withRetry(
    () => client.getContractEvents({ address: p.peerDirectory, abi: peerDirectoryAbi, eventName: "PeersAnnounced", args: { account: p.account }, fromBlock: p.fromBlock, toBlock: "latest", strict: true }),
    { what: "PeersAnnounced logs" },
  );
  const last = logs.at(-1);
  return last ? { multiaddrs: last.args.multiaddrs, blockNumber: last.blockNumber } : undefined;
}
