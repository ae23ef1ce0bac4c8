/**
 * The TCP multiaddrs the IPFS node listens on and dials, checked as text: the config (config/index.ts) validates
 * `--ipfs-peer` and `--ipfs-listen` with it before any IPFS code loads. Re-exported by store/ipfs.ts.
 */
import { InputError } from "../errors/index.ts";

/** A multiaddr given to the IPFS node is malformed, not TCP, or (for a peer) has no /p2p/<peer id>. */
export class InvalidMultiaddrError extends InputError {
  override name = "InvalidMultiaddrError";
  override readonly code: string = "INVALID_MULTIADDR";
}

/** Parses a TCP multiaddr (/ip4|ip6|dns4|dns6/<host>/tcp/<port>[/p2p/<id>]); `peer` requires the /p2p/ part. */
export function checkMultiaddr(addr: string, o: { peer: boolean }): string {
  const m = /^\/(ip4|ip6|dns4|dns6|dns)\/([^/]+)\/tcp\/([0-9]{1,5})(\/p2p\/([1-9A-HJ-NP-Za-km-z]{32,128}))?$/.exec(addr);
  if (!m || Number(m[3]) > 65535) throw new InvalidMultiaddrError(`not a TCP multiaddr: ${JSON.stringify(addr)} (e.g. /ip4/127.0.0.1/tcp/4001${o.peer ? "/p2p/12D3KooW..." : ""})`);
  if (o.peer && m[5] === undefined) throw new InvalidMultiaddrError(`a peer multiaddr must end in /p2p/<peer id>: ${JSON.stringify(addr)}`);
  if (!o.peer && m[5] !== undefined) throw new InvalidMultiaddrError(`a listen multiaddr has no /p2p/ part: ${JSON.stringify(addr)}`);
  return addr;
}
