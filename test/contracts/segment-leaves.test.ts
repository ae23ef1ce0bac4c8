import { expect } from "chai";
import { encodeFunctionData, parseEther, parseEventLogs, type Hex } from "viem";
import { CommittedLeavesError, getCommittedLeaves, getMarketLogs, getSegmentCommits, jobMarketAbi, resolveCommittedLeaves, committedLogKey, type CommittedLeavesRef } from "../../verifier/src/chain/index.ts";
import { CHECKPOINT_CID, createConnection, MANIFEST_HASH, MANIFEST_URI, policy, segmentHashes } from "./fixture.ts";

// Where a commit's leaves live on chain: a top-level commit from a codeless account logs none (they are the
// transaction's input); any other commit (a wallet contract, a multicall) logs them in SegmentLeaves, right before its
// SegmentCommitted. Every reader gets them through chain/getCommittedLeaves, checked against the event's root.
const { viem, networkHelpers, publicClient, deploy } = await createConnection();
const { loadFixture } = networkHelpers;
const PAYMENT = parseEther("50");

async function withWallet() {
  const f = await deploy();
  const wallet = await viem.deployContract("CallForwarder", []);
  // the wallet is a provider: tokens, an approval and a deposit, all from its own address
  await f.token.write.mint([wallet.address, parseEther("1000")]);
  await wallet.write.forward([
    [f.token.address, f.vault.address],
    [
      encodeFunctionData({ abi: f.token.abi, functionName: "approve", args: [f.vault.address, parseEther("1000")] }),
      encodeFunctionData({ abi: f.vault.abi, functionName: "deposit", args: [parseEther("100")] }),
    ],
  ]);
  for (const jobId of [1n, 2n]) {
    await f.market.write.createJob([MANIFEST_HASH, MANIFEST_URI, f.token.address, PAYMENT, policy()], { account: f.buyer.account });
  }
  await f.market.write.acceptJob([1n], { account: f.provider.account });
  await wallet.write.forward([[f.market.address], [encodeFunctionData({ abi: jobMarketAbi, functionName: "acceptJob", args: [2n] })]]);
  return { ...f, wallet };
}

const commitData = (jobId: bigint, s: number, hashes: Hex[]) =>
  encodeFunctionData({ abi: jobMarketAbi, functionName: "commitSegment", args: [jobId, BigInt(s), hashes, 1_000n, CHECKPOINT_CID] });

async function logsOf(hash: Hex) {
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  return { receipt, events: parseEventLogs({ abi: jobMarketAbi, logs: receipt.logs, strict: true }) };
}

describe("SegmentCommitted leaves", () => {
  it("a top-level commit from an EOA logs no leaves; readers decode them from the transaction's input", async () => {
    const f = await loadFixture(withWallet);
    const { hashes, root, end } = segmentHashes(1n, 0);
    const { events } = await logsOf(await f.market.write.commitSegment([1n, 0n, hashes, 1_000n, CHECKPOINT_CID], { account: f.provider.account }));
    expect(events.map((e) => e.eventName)).to.deep.equal(["SegmentCommitted"]);
    const e = events[0]!;
    expect(e.args).to.deep.equal({ jobId: 1n, segment: 0n, traceRoot: root, endStateHash: end, lossE6: 1_000n, checkpointCid: CHECKPOINT_CID });
    const [c] = await getSegmentCommits(publicClient, { jobMarket: f.market.address, jobId: 1n, fromBlock: 0n });
    expect(c!.stateHashes).to.deep.equal(hashes);
  });

  it("a commit through a wallet contract logs SegmentLeaves right before SegmentCommitted; readers take the leaves from it", async () => {
    const f = await loadFixture(withWallet);
    const { hashes, root } = segmentHashes(2n, 0);
    const { events } = await logsOf(await f.wallet.write.forward([[f.market.address], [commitData(2n, 0, hashes)]]));
    expect(events.map((e) => e.eventName)).to.deep.equal(["SegmentLeaves", "SegmentCommitted"]);
    expect(events[0]!.args).to.deep.equal({ jobId: 2n, segment: 0n, stateHashes: hashes });
    const [c] = await getSegmentCommits(publicClient, { jobMarket: f.market.address, jobId: 2n, fromBlock: 0n });
    expect(c!.stateHashes).to.deep.equal(hashes);
    expect(c!.traceRoot).to.equal(root);
    // without its SegmentLeaves the input is the wallet's call, not a commitSegment: the reader refuses it by name
    const l = events[1]!;
    if (l.eventName !== "SegmentCommitted") throw new Error("unreachable");
    const tx = await publicClient.getTransaction({ hash: l.transactionHash });
    const ref: CommittedLeavesRef = { jobMarket: f.market.address, ...l.args, blockHash: l.blockHash, transactionIndex: tx.transactionIndex, transactionHash: l.transactionHash, logIndex: l.logIndex };
    let thrown: unknown;
    await getCommittedLeaves(publicClient, ref, []).catch((err: unknown) => (thrown = err));
    expect(thrown).to.be.instanceOf(CommittedLeavesError);
    expect((thrown as CommittedLeavesError).shortMessage).to.contain(f.wallet.address);
  });

  it("a multicall of two commits logs each one's leaves before its own SegmentCommitted; the indexer's batch read pairs them", async () => {
    const f = await loadFixture(withWallet);
    const s0 = segmentHashes(2n, 0);
    const s1 = segmentHashes(2n, 1);
    const { receipt } = await logsOf(await f.wallet.write.forward([[f.market.address, f.market.address], [commitData(2n, 0, s0.hashes), commitData(2n, 1, s1.hashes)]]));
    const logs = await getMarketLogs(publicClient, { jobMarket: f.market.address, fromBlock: receipt.blockNumber, toBlock: receipt.blockNumber });
    expect(logs.map((l) => l.eventName)).to.deep.equal(["SegmentLeaves", "SegmentCommitted", "SegmentLeaves", "SegmentCommitted"]);
    const leaves = await resolveCommittedLeaves(publicClient, f.market.address, logs);
    expect(leaves.get(committedLogKey(logs[1]!))).to.deep.equal(s0.hashes);
    expect(leaves.get(committedLogKey(logs[3]!))).to.deep.equal(s1.hashes);
    const commits = await getSegmentCommits(publicClient, { jobMarket: f.market.address, jobId: 2n, fromBlock: 0n });
    expect(commits.map((c) => c.stateHashes)).to.deep.equal([s0.hashes, s1.hashes]);
  });

  it("leaves that do not reproduce the event's trace root or end state are refused", async () => {
    const f = await loadFixture(withWallet);
    const { hashes } = segmentHashes(1n, 0);
    const { events } = await logsOf(await f.market.write.commitSegment([1n, 0n, hashes, 1_000n, CHECKPOINT_CID], { account: f.provider.account }));
    const l = events[0]!;
    if (l.eventName !== "SegmentCommitted") throw new Error("unreachable");
    const tx = await publicClient.getTransaction({ hash: l.transactionHash });
    const ref: CommittedLeavesRef = { jobMarket: f.market.address, ...l.args, blockHash: l.blockHash, transactionIndex: tx.transactionIndex, transactionHash: l.transactionHash, logIndex: l.logIndex };
    expect(await getCommittedLeaves(publicClient, ref)).to.deep.equal(hashes);
    const forged = [...hashes];
    forged[2] = segmentHashes(1n, 0, 4, "forged").hashes[2]!;
    const fake = [{ jobId: 1n, segment: 0n, stateHashes: forged, transactionHash: l.transactionHash, logIndex: l.logIndex - 1 }];
    for (const [r, leavesLogs, what] of [
      [ref, fake, "trace root"],
      [{ ...ref, endStateHash: hashes[0]! }, [], "end state hash"],
      [{ ...ref, segment: 1n }, [], "commits segment 0"],
    ] as const) {
      let thrown: unknown;
      await getCommittedLeaves(publicClient, r, leavesLogs).catch((err: unknown) => (thrown = err));
      expect(thrown, what).to.be.instanceOf(CommittedLeavesError);
      expect((thrown as CommittedLeavesError).shortMessage, what).to.contain(what);
    }
  });
});
