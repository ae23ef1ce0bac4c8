/**
 * Announce where the caller's content node can be dialled: `PeerDirectory.announce(multiaddrs)` (docs/content.md,
 * discovery). The announcer is the sending account; an empty list withdraws its node.
 *
 * @example
 *   await announcePeers(clients, { peerDirectory: d.peerDirectory!, multiaddrs: node.multiaddrs() });
 */
import type { Address } from "viem";
import { peerDirectoryAbi } from "./abi/PeerDirectory.ts";
import type { CallParameters, ContractCall } from "./call.ts";
import type { ChainClients } from "./clients.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type AnnouncePeersParameters = SendOptions & { peerDirectory: Address; multiaddrs: readonly string[] };

/** The call `announcePeers` sends, as data (`encodeCall` gives its `{ to, data }` for a sender that records it before signing). */
export function announcePeersCall(p: CallParameters<AnnouncePeersParameters>): ContractCall<typeof peerDirectoryAbi, "announce"> {
  return { address: p.peerDirectory, abi: peerDirectoryAbi, functionName: "announce", args: [p.multiaddrs] };
}

export async function announcePeers(clients: ChainClients, p: AnnouncePeersParameters): Promise<SendResult> {
  return sendContractTx(clients, announcePeersCall(p), p);
}
