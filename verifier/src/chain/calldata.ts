/**
 * Transitional: the bot's calldata helpers, each now the `data` of an action's call description (call.ts). New code
 * encodes the description itself: `encodeCall(resolveDisputeCall({ disputeGame, disputeId }))` gives `{ to, data }`.
 * NOTE: kept only while bot/bot.ts and bot/dispute.ts import these names; delete this file once they switch.
 * The address a description carries is not part of its calldata, so these pass the zero address.
 */
import { encodeFunctionData, zeroAddress, type Address, type Hex } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { approveTokenCall } from "./approveToken.ts";
import { encodeCall } from "./call.ts";
import { claimStakeCreditCall } from "./claimStakeCredit.ts";
import { commitChallengeCall } from "./commitChallenge.ts";
import { recordReceiptCall, type RecordReceiptParameters } from "./recordReceipt.ts";
import { reopenJobCall, reportTimeoutCall } from "./reportTimeout.ts";
import { resolveDisputeCall } from "./resolveDispute.ts";

type ChallengeArgs = Parameters<typeof encodeFunctionData<typeof disputeGameAbi, "challenge">>[0]["args"];

/** ERC-20 approve(spender, value) on the payment/bond token. */
export const approveData = (spender: Address, value: bigint): Hex => encodeCall(approveTokenCall({ token: zeroAddress, spender, amount: value })).data;

/** JobRecords.recordReceipt(receipt, endStateHash, signature): anchor a signed AuditReceipt (send it to deployment.jobRecords). */
export const recordReceiptData = ([receipt, endStateHash, signature]: readonly [RecordReceiptParameters["receipt"], Hex, Hex]): Hex =>
  encodeCall(recordReceiptCall({ jobRecords: zeroAddress, receipt, endStateHash, signature })).data;

/** JobMarket.reportTimeout(jobId) or JobMarket.reopenJob(jobId): end the current provider's tenure. */
export const tenureData = (kind: "reportTimeout" | "reopenJob", jobId: bigint): Hex => encodeCall((kind === "reportTimeout" ? reportTimeoutCall : reopenJobCall)({ jobMarket: zeroAddress, jobId })).data;

/** DisputeGame.commitChallenge(jobId, segment, commitment): the first half of a copy-resistant challenge. */
export const commitChallengeData = (jobId: bigint, segment: number, commitment: Hex): Hex => encodeCall(commitChallengeCall({ disputeGame: zeroAddress, jobId, segment, commitment })).data;

/** DisputeGame.challenge(jobId, segment, step, traceRoot, endStateHash, hPrev, prevProof, hStep, proof, salt). */
export const challengeData = (args: NonNullable<ChallengeArgs>): Hex => encodeFunctionData({ abi: disputeGameAbi, functionName: "challenge", args });

/** DisputeGame.resolve(disputeId). */
export const resolveDisputeData = (disputeId: bigint): Hex => encodeCall(resolveDisputeCall({ disputeGame: zeroAddress, disputeId })).data;

/** claim() on StakeVault, DisputeGame or AuditorRegistry (the same selector on each: pull the caller's credit). */
export const claimCreditData = (): Hex => encodeCall(claimStakeCreditCall({ stakeVault: zeroAddress })).data;
