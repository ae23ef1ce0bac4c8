/**
 * chain/events.ts: market logs decoded into the typed event union, each tagged with the contract that emitted it
 * (by address), JobRecords' receipts and provenance included; a log from another address is not a market event.
 */
import { expect } from "chai";
import { encodeAbiParameters, encodeEventTopics, type Address, type Hex, type Log } from "viem";
import { decodeMarketEvents, jobMarketAbi, jobRecordsAbi } from "../../verifier/src/chain/index.ts";

const jobMarket: Address = "0x1111111111111111111111111111111111111111";
const jobRecords: Address = "0x2222222222222222222222222222222222222222";
const stakeVault: Address = "0x3333333333333333333333333333333333333333";
const stranger: Address = "0x4444444444444444444444444444444444444444";
const auditor: Address = "0x5555555555555555555555555555555555555555";
const digest: Hex = `0x${"ab".repeat(32)}`;
const root: Hex = `0x${"cd".repeat(32)}`;

function log(address: Address, topics: Hex[], data: Hex, logIndex: number): Log {
  return { address, topics: topics as [Hex, ...Hex[]], data, blockNumber: 7n, logIndex, transactionHash: `0x${"01".repeat(32)}`, blockHash: `0x${"02".repeat(32)}`, transactionIndex: 0, removed: false };
}

const cancelled = (address: Address, logIndex: number) =>
  log(address, encodeEventTopics({ abi: jobMarketAbi, eventName: "JobCancelled", args: { jobId: 3n } }) as Hex[], encodeAbiParameters([{ type: "uint256" }], [5n * 10n ** 17n]), logIndex);

const receipt = (address: Address, logIndex: number) =>
  log(
    address,
    encodeEventTopics({ abi: jobRecordsAbi, eventName: "ReceiptRecorded", args: { jobId: 3n, segment: 1n, auditor } }) as Hex[],
    encodeAbiParameters([{ type: "bytes32" }, { type: "bytes32" }, { type: "uint32" }, { type: "uint32" }, { type: "uint8" }], [digest, root, 5, 16, 0]),
    logIndex,
  );

describe("chain: typed market events", () => {
  it("decodes a JobRecords receipt with its typed arguments, tagged JobRecords, beside JobMarket's events", () => {
    const events = decodeMarketEvents([cancelled(jobMarket, 0), receipt(jobRecords, 1)], { jobMarket, jobRecords, stakeVault });
    expect(events.map((e) => `${e.contract}.${e.eventName}`)).to.deep.equal(["JobMarket.JobCancelled", "JobRecords.ReceiptRecorded"]);
    const [c, r] = events;
    if (c?.eventName !== "JobCancelled" || r?.eventName !== "ReceiptRecorded") throw new Error("wrong events");
    // typed: no cast; bigints for uint256, numbers for uint32/uint8, checksummed addresses
    expect(c.args.refund).to.equal(5n * 10n ** 17n);
    expect(r.args).to.deep.include({ jobId: 3n, segment: 1n, auditor, digest, traceRoot: root, checks: 5, sampledSteps: 16, verdict: 0 });
    expect(r).to.deep.include({ address: jobRecords, blockNumber: 7n, logIndex: 1 });
  });

  it("ignores a log from an address that is not one of the market's contracts, even with a market event's topics", () => {
    expect(decodeMarketEvents([cancelled(stranger, 0), receipt(stranger, 1)], { jobMarket, jobRecords, stakeVault })).to.deep.equal([]);
  });

  it("without JobRecords in the sources its receipts are not decoded", () => {
    expect(decodeMarketEvents([receipt(jobRecords, 0)], { jobMarket, stakeVault })).to.deep.equal([]);
  });
});
