/**
 * Discovery from the chain: PeerDirectory announcements through the chain actions (announcePeers, getAnnouncedPeers)
 * on the in-process network, and PeerDiscovery's rules for what it dials (store/ipfs-peers.ts). The real dial over
 * libp2p is exercised end to end in test/e2e/ipfs.test.ts (no --ipfs-peer there).
 */
import { expect } from "chai";
import { network } from "hardhat";
import { parseEther, zeroAddress } from "viem";
import { announcePeers, ContractRevertError, deployMarket, devAccount, getAnnouncedPeers, providerClients, type ChainClients } from "../../verifier/src/chain/index.ts";
import { Deployment } from "../../verifier/src/chain/deployment.ts";
import { PeerDiscovery, usableAnnounced } from "../../verifier/src/store/ipfs-peers.ts";
import { IpfsDialError, type IpfsNode } from "../../verifier/src/store/ipfs.ts";

const ID_A = "12D3KooWAXrLZ1s6ZnMdGXaFqN8ggBqtjBNeqwCpC1Bfyg7wrRz5";
const ID_B = "12D3KooWKZ6Yq1RTuo6M5JcX8pG2qZ5oQ5w6YH2dKn9tn7r3Cnm8";
const addr = (port: number, id = ID_A) => `/ip4/127.0.0.1/tcp/${port}/p2p/${id}`;

async function expectRevert(p: Promise<unknown>, errorName: string): Promise<ContractRevertError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(ContractRevertError);
    expect((err as ContractRevertError).errorName).to.equal(errorName);
    return err as ContractRevertError;
  }
  expect.fail(`expected ${errorName}`);
}

describe("chain: PeerDirectory announcements", () => {
  let a: ChainClients, b: ChainClients;
  let d: Awaited<ReturnType<typeof deployMarket>>;
  const read = (account: `0x${string}`) => getAnnouncedPeers(a.public, { peerDirectory: d.peerDirectory!, account, fromBlock: BigInt(d.startBlock) });

  before(async () => {
    const conn = await network.create();
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 50 });
    [a, b] = [mk(0), mk(1)];
    d = await deployMarket(a, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n, registries: false });
  });

  it("deployMarket deploys it and names it in the deployment; an older deployment file without it stays valid", () => {
    expect(d.peerDirectory).to.match(/^0x[0-9a-fA-F]{40}$/);
    const { gasUsed: _g, peerDirectory: _p, ...older } = d;
    expect(Deployment.safeParse(older).success).to.equal(true);
  });

  it("a reader gets the account's latest announcement, never another account's", async () => {
    expect(await read(a.account.address)).to.equal(undefined);
    await announcePeers(a, { peerDirectory: d.peerDirectory!, multiaddrs: [addr(4001)] });
    await announcePeers(b, { peerDirectory: d.peerDirectory!, multiaddrs: [addr(6666, ID_B)] }); // another account's announcement
    await announcePeers(a, { peerDirectory: d.peerDirectory!, multiaddrs: [addr(4002), addr(4003)] });
    expect((await read(a.account.address))!.multiaddrs).to.deep.equal([addr(4002), addr(4003)]);
    expect((await read(b.account.address))!.multiaddrs).to.deep.equal([addr(6666, ID_B)]);
    await announcePeers(a, { peerDirectory: d.peerDirectory!, multiaddrs: [] }); // withdraws
    expect((await read(a.account.address))!.multiaddrs).to.deep.equal([]);
  });

  it("refuses more than 8 addresses and an empty or overlong one, by name", async () => {
    const e = await expectRevert(announcePeers(a, { peerDirectory: d.peerDirectory!, multiaddrs: Array.from({ length: 9 }, (_, i) => addr(5000 + i)) }), "PeerDirectoryTooManyAddrs");
    expect(e.args).to.deep.equal([9n, 8n]);
    await expectRevert(announcePeers(a, { peerDirectory: d.peerDirectory!, multiaddrs: [addr(1), ""] }), "PeerDirectoryBadAddrLength");
    await expectRevert(announcePeers(a, { peerDirectory: d.peerDirectory!, multiaddrs: ["x".repeat(257)] }), "PeerDirectoryBadAddrLength");
  });
});

/** A node that records dials (what PeerDiscovery is given; the real libp2p dial is in the e2e test). */
function recordingNode(reachable: (addr: string) => boolean) {
  const dialled: string[] = [];
  const connected = new Set<string>();
  const node = {
    connectedPeers: () => [...connected],
    connect: async (ma: string) => {
      dialled.push(ma);
      if (!reachable(ma)) throw new IpfsDialError(ma, `cannot connect to IPFS peer ${ma}`);
      connected.add(ma.slice(ma.lastIndexOf("/p2p/") + 5));
    },
  };
  return { node: node as unknown as IpfsNode, dialled };
}

describe("store/ipfs-peers: PeerDiscovery", () => {
  const ACCOUNT = "0x00000000000000000000000000000000000000a1";

  it("dials only well-formed /p2p/ TCP multiaddrs, at most 8, de-duplicated (garbage announced by an account is skipped)", () => {
    const many = Array.from({ length: 12 }, (_, i) => addr(7000 + i));
    expect(usableAnnounced(["/ip4/127.0.0.1/tcp/1", "/dns4/evil/udp/1/quic", "not an address", addr(1), addr(1), ...many])).to.deep.equal([addr(1), ...many.slice(0, 7)]);
  });

  it("reads an account's announcement once per re-read period, skips the zero address and survives an unreachable node", async () => {
    let reads = 0;
    let now = 0;
    const announced = [addr(1, ID_A), addr(2, ID_B)];
    const { node, dialled } = recordingNode((ma) => ma.includes(ID_A));
    const peers = new PeerDiscovery(node, async () => (reads++, { multiaddrs: announced }), { rereadMs: 1000, now: () => now });
    expect(await peers.dial([ACCOUNT, zeroAddress, null, ACCOUNT.toUpperCase().replace("0X", "0x")])).to.deep.equal([addr(1, ID_A)]);
    expect(reads).to.equal(1);
    expect(dialled).to.deep.equal([addr(1, ID_A), addr(2, ID_B)]);
    // already connected to A: not dialled again; B is retried; the announcement is not re-read within the period
    await peers.dial([ACCOUNT]);
    expect(reads).to.equal(1);
    expect(dialled).to.deep.equal([addr(1, ID_A), addr(2, ID_B), addr(2, ID_B)]);
    now = 1000;
    await peers.dial([ACCOUNT]);
    expect(reads).to.equal(2);
  });

  it("dials nothing for an account that never announced", async () => {
    const { node, dialled } = recordingNode(() => true);
    expect(await new PeerDiscovery(node, async () => undefined).dial([ACCOUNT])).to.deep.equal([]);
    expect(dialled).to.deep.equal([]);
  });
});
