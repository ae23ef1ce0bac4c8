/**
 * Discovery from the chain: a party announces where its IPFS node can be dialled on the PeerDirectory
 * (chain/announcePeers.ts), and a reader dials the announced node of the account it needs content from (a job's
 * provider for checkpoints, records and the board; its buyer for the manifest), given only the job id and the chain.
 *
 * Trust: the announcer is the sending account (msg.sender); each address is checked here (a TCP multiaddr ending in
 * /p2p/<peer id>, at most MAX_ANNOUNCED of them), the noise handshake proves the peer holds that id, and every byte
 * is checked against its CID. An account that announces someone else's node, or garbage, only costs its readers a
 * dial; the content still comes verified or not at all (IpfsFetchTimeoutError, retried later).
 *
 * @example
 *   const peers = new PeerDiscovery(node, (account) => getAnnouncedPeers(client, { peerDirectory, account, fromBlock }));
 *   await peers.dial([job.provider]);
 */
import type { Address } from "viem";
import { logger } from "../log/index.ts";
import { checkMultiaddr, IpfsDialError, type IpfsNode } from "./ipfs.ts";

const log = logger("ipfs");

/** The most addresses dialled per account (PeerDirectory.MAX_ADDRS). */
export const MAX_ANNOUNCED = 8;
/** An account's announcement is read again at most this often (a provider that restarts announces a new port). */
export const DEFAULT_REREAD_MS = 15_000;

export type ReadAnnouncement = (account: Address) => Promise<{ multiaddrs: readonly string[] } | undefined>;

/** The announced addresses worth dialling: well-formed peer multiaddrs only, de-duplicated, at most MAX_ANNOUNCED. */
export function usableAnnounced(multiaddrs: readonly string[]): string[] {
  const ok: string[] = [];
  for (const a of multiaddrs) {
    try {
      checkMultiaddr(a, { peer: true });
    } catch {
      log.warn({ addr: a.slice(0, 300) }, "announced address ignored: not a TCP multiaddr with /p2p/<peer id>");
      continue;
    }
    if (!ok.includes(a)) ok.push(a);
    if (ok.length === MAX_ANNOUNCED) break;
  }
  return ok;
}

/** Dials the announced nodes of accounts, reading each account's announcement at most every `rereadMs`. */
export class PeerDiscovery {
  readonly node: IpfsNode;
  private readonly _read: ReadAnnouncement;
  private readonly _rereadMs: number;
  private readonly _now: () => number;
  private readonly _seen = new Map<string, { at: number; addrs: string[] }>();

  constructor(node: IpfsNode, read: ReadAnnouncement, o: { rereadMs?: number; now?: () => number } = {}) {
    this.node = node;
    this._read = read;
    this._rereadMs = o.rereadMs ?? DEFAULT_REREAD_MS;
    this._now = o.now ?? Date.now;
  }

  /**
   * Connects to every announced node of `accounts` not connected yet; returns the addresses dialled successfully
   * or already connected. A node that cannot be dialled is logged, never thrown: the fetch that follows says
   * whether any peer served the content.
   */
  async dial(accounts: readonly (string | null | undefined)[]): Promise<string[]> {
    const connected: string[] = [];
    for (const account of new Set(accounts.filter((a): a is string => typeof a === "string" && /^0x[0-9a-fA-F]{40}$/.test(a) && !/^0x0{40}$/.test(a)).map((a) => a.toLowerCase() as Address))) {
      let seen = this._seen.get(account);
      if (!seen || this._now() - seen.at >= this._rereadMs) {
        const a = await this._read(account);
        seen = { at: this._now(), addrs: usableAnnounced(a?.multiaddrs ?? []) };
        this._seen.set(account, seen);
        if (seen.addrs.length === 0) log.warn({ account }, a ? "the account withdrew its IPFS node (empty announcement)" : "the account announced no IPFS node on the PeerDirectory");
      }
      const peers = new Set(this.node.connectedPeers());
      for (const addr of seen.addrs) {
        if (peers.has(addr.slice(addr.lastIndexOf("/p2p/") + 5))) {
          connected.push(addr);
          continue;
        }
        try {
          await this.node.connect(addr);
          connected.push(addr);
        } catch (err) {
          if (!(err instanceof IpfsDialError)) throw err;
          log.warn({ account, peer: addr, err: err.message }, "announced IPFS node not reachable");
        }
      }
    }
    return connected;
  }
}
