/**
 * Calldata of the transactions the challenger bot records as intents before it sends them (bot/db.ts: the payload,
 * `{ to, data }`, is stored first, so a restart re-sends the same bytes and never a second transaction). The one place
 * outside the send actions that encodes a market call; the bot never encodes one itself.
 *
 * @example
 *   db.addIntent({ key, kind: "resolveDispute", payload: { to: disputeGame, data: resolveDisputeData(disputeId) } });
 */
import { encodeFunctionData, type Address, type Hex } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { jobRecordsAbi } from "./abi/JobRecords.ts";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import { testTokenAbi } from "./abi/TestToken.ts";

type RecordReceiptArgs = Parameters<typeof encodeFunctionData<typeof jobRecordsAbi, "recordReceipt">>[0]["args"];
type ChallengeArgs = Parameters<typeof encodeFunctionData<typeof disputeGameAbi, "challenge">>[0]["args"];

/** ERC-20 approve(spender, value) on the payment/bond token. */
export const approveData = (spender: Address, value: bigint): Hex => encodeFunctionData({ abi: testTokenAbi, functionName: "approve", args: [spender, value] });

/** JobRecords.recordReceipt(receipt, endStateHash, signature): anchor a signed AuditReceipt (send it to deployment.jobRecords). */
export const recordReceiptData = (args: NonNullable<RecordReceiptArgs>): Hex => encodeFunctionData({ abi: jobRecordsAbi, functionName: "recordReceipt", args });

/** JobMarket.reportTimeout(jobId) or JobMarket.reopenJob(jobId): end the current provider's tenure. */
export const tenureData = (kind: "reportTimeout" | "reopenJob", jobId: bigint): Hex => encodeFunctionData({ abi: jobMarketAbi, functionName: kind, args: [jobId] });

/** DisputeGame.commitChallenge(jobId, segment, commitment): the first half of a copy-resistant challenge. */
export const commitChallengeData = (jobId: bigint, segment: number, commitment: Hex): Hex =>
  encodeFunctionData({ abi: disputeGameAbi, functionName: "commitChallenge", args: [jobId, BigInt(segment), commitment] });

/** DisputeGame.challenge(jobId, segment, step, traceRoot, endStateHash, hPrev, prevProof, hStep, proof, salt). */
export const challengeData = (args: NonNullable<ChallengeArgs>): Hex => encodeFunctionData({ abi: disputeGameAbi, functionName: "challenge", args });

/** DisputeGame.resolve(disputeId). */
export const resolveDisputeData = (disputeId: bigint): Hex => encodeFunctionData({ abi: disputeGameAbi, functionName: "resolve", args: [disputeId] });

/** claim() on StakeVault, DisputeGame or AuditorRegistry (the same selector on each: pull the caller's credit). */
export const claimCreditData = (): Hex => encodeFunctionData({ abi: stakeVaultAbi, functionName: "claim" });
