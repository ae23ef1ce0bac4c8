/**
 * ChainError hierarchy. A contract revert is decoded by its custom error name and arguments against the
 * generated ABIs (viem's decodeErrorResult), never by message text:
 *
 *   ChainError
 *   ├── ContractRevertError    the call reverted with a known custom error: `errorName`, `args`; its short message is
 *   │   │                      the revert in words (revertText.ts: enum names, dates, time left, token symbol)
 *   │   └── UnknownJobError    JobMarketUnknownJob, or a read found no such job: one behaviour everywhere (CLI exit 2)
 *   ├── UnknownRevertError     reverted with data that matches no known error (or none)
 *   ├── RpcUnavailableError    transport failure / timeout after retries (retryable)
 *   ├── TxDroppedError         a sent transaction never reached a receipt
 *   ├── TxRevertedError        a sent transaction was mined and reverted (its nonce is spent, its effect is not)
 *   ├── GasFundsError          the account's ETH does not cover gas * fee (+ value)
 *   ├── NonceTooLowError       the transaction's nonce was already used by another transaction of the account
 *   ├── ReplacementUnderpricedError  another transaction with the same nonce is pending at an equal or higher fee
 *   ├── FeeTooLowError         the transaction's fee cap is below the block base fee (or the node's minimum)
 *   └── WalletRejectedError    an injected (EIP-1193) wallet's user refused to sign (code 4001): nothing was sent
 *
 * The node errors (the last four) carry no structured code over JSON-RPC: they are recognised by the node's
 * message, with viem's own patterns (viem/errors/node.ts) widened to the messages Hardhat's EDR and geth print.
 * `classifySendFailure` says which failures a later attempt can get past (funds, allowance, nonce, fees, RPC).
 *
 * @example
 *   try { await acceptJob(clients, { jobMarket, jobId }) }
 *   catch (err) { if (err instanceof ContractRevertError && err.errorName === "JobMarketWrongStatus") ... }
 */
import {
  BaseError as ViemBaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  FeeCapTooLowError,
  HttpRequestError,
  InsufficientFundsError,
  NonceTooLowError as ViemNonceTooLowError,
  TimeoutError,
  UserRejectedRequestError,
  type Hex,
} from "viem";
import { PouwError, type PouwErrorOptions } from "../errors/index.ts";
import { allErrorsAbi } from "./abi/index.ts";
import { revertText } from "./revertText.ts";

export class ChainError extends PouwError {
  override name = "ChainError";
  override readonly code: string = "CHAIN_ERROR";
}

export class ContractRevertError extends ChainError {
  override name = "ContractRevertError";
  override readonly code: string = "CONTRACT_REVERT";
  readonly errorName: string;
  readonly args: readonly unknown[];
  /** The raw form, `Name(arg, ...)`. */
  readonly raw: string;
  constructor(errorName: string, args: readonly unknown[], options: PouwErrorOptions & { message?: string } = {}) {
    const raw = `${errorName}(${args.map(formatArg).join(", ")})`;
    const text = revertText(errorName, args);
    super(options.message ?? (text === undefined ? `reverted: ${raw}` : `${text} [${errorName}]`), options);
    this.errorName = errorName;
    this.args = args;
    this.raw = raw;
  }
}

/**
 * The job does not exist: the contract reverted JobMarketUnknownJob, or a read of it came back status None. Every
 * command reports it the same way (`pouw: job 9 does not exist`, exit 2).
 */
export class UnknownJobError extends ContractRevertError {
  override name = "UnknownJobError";
  override readonly code: string = "UNKNOWN_JOB";
  readonly jobId: bigint;
  constructor(jobId: bigint, options: PouwErrorOptions = {}) {
    super("JobMarketUnknownJob", [jobId], { ...options, message: `job ${jobId} does not exist` });
    this.jobId = jobId;
  }
}

export class UnknownRevertError extends ChainError {
  override name = "UnknownRevertError";
  override readonly code: string = "UNKNOWN_REVERT";
  readonly data: Hex | undefined;
  constructor(data: Hex | undefined, options: PouwErrorOptions = {}) {
    super(`reverted${data ? ` with unknown data ${data.slice(0, 10)}` : " without data"}`, options);
    this.data = data;
  }
}

export class RpcUnavailableError extends ChainError {
  override name = "RpcUnavailableError";
  override readonly code: string = "RPC_UNAVAILABLE";
}

export class TxDroppedError extends ChainError {
  override name = "TxDroppedError";
  override readonly code: string = "TX_DROPPED";
}

export class TxRevertedError extends ChainError {
  override name = "TxRevertedError";
  override readonly code: string = "TX_REVERTED";
  readonly hash: Hex;
  readonly blockNumber: bigint;
  constructor(what: string, hash: Hex, blockNumber: bigint, options: PouwErrorOptions = {}) {
    super(`${what} ${hash} reverted in block ${blockNumber}`, options);
    this.hash = hash;
    this.blockNumber = blockNumber;
  }
}

export class GasFundsError extends ChainError {
  override name = "GasFundsError";
  override readonly code: string = "GAS_FUNDS";
}

export class NonceTooLowError extends ChainError {
  override name = "NonceTooLowError";
  override readonly code: string = "NONCE_TOO_LOW";
}

export class ReplacementUnderpricedError extends ChainError {
  override name = "ReplacementUnderpricedError";
  override readonly code: string = "REPLACEMENT_UNDERPRICED";
}

export class FeeTooLowError extends ChainError {
  override name = "FeeTooLowError";
  override readonly code: string = "FEE_TOO_LOW";
}

/** The browser wallet's user rejected the request (EIP-1193 code 4001); never retried. */
export class WalletRejectedError extends ChainError {
  override name = "WalletRejectedError";
  override readonly code: string = "WALLET_REJECTED";
}

// viem's patterns, case-insensitive, plus Hardhat EDR's wording ("Nonce too low. Expected nonce to be 3 but got 2",
// "Sender doesn't have enough funds to send tx", "Replacement transaction underpriced", "Transaction gas price is
// ..., which is below the minimum").
const GAS_FUNDS = new RegExp(`${InsufficientFundsError.nodeMessage.source}|doesn't have enough funds`, "i");
const NONCE_TOO_LOW = /nonce too low|nonce has already been used/i;
const REPLACEMENT = /replacement (transaction|fee) (is )?(underpriced|too low)/i;
const FEE_TOO_LOW = new RegExp(`${FeeCapTooLowError.nodeMessage.source}|transaction underpriced|gas price is .* below the minimum|max fee per gas .* too low`, "i");

/** The node-level failure a viem error chain reports, if any: by viem's error class, else by the node's message. */
function nodeFailure(err: ViemBaseError): PouwError | undefined {
  const text: string[] = [];
  let cls: "funds" | "nonce" | "fee" | undefined;
  err.walk((e) => {
    if (e instanceof InsufficientFundsError) cls ??= "funds";
    else if (e instanceof ViemNonceTooLowError && !/already known|already imported/i.test((e as ViemBaseError).details ?? "")) cls ??= "nonce";
    else if (e instanceof FeeCapTooLowError) cls ??= "fee";
    const m = (e as { details?: unknown; message?: unknown }).details ?? (e as { message?: unknown }).message;
    if (typeof m === "string") text.push(m);
    return false;
  });
  const all = text.join("\n");
  const opts = { cause: err };
  // NOTE: viem reports EDR's refusal as "Missing or invalid parameters"; the person needs the cause, not viem's words
  if (cls === "funds" || GAS_FUNDS.test(all)) return new GasFundsError("not enough ETH for gas: the account's balance does not cover gas x fee", opts);
  if (REPLACEMENT.test(all)) return new ReplacementUnderpricedError(`another transaction with the same nonce is pending: ${err.shortMessage}`, opts);
  if (cls === "nonce" || NONCE_TOO_LOW.test(all)) return new NonceTooLowError(`nonce already used: ${err.shortMessage}`, opts);
  if (cls === "fee" || FEE_TOO_LOW.test(all)) return new FeeTooLowError(`fee too low: ${err.shortMessage}`, opts);
  return undefined;
}

function formatArg(a: unknown): string {
  return typeof a === "bigint" ? a.toString() : typeof a === "string" ? a : JSON.stringify(a, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
}

/** Revert data carried anywhere in a viem error chain. */
function revertData(err: ViemBaseError): Hex | undefined {
  let found: Hex | undefined;
  err.walk((e) => {
    const data = (e as { data?: unknown }).data;
    if (typeof data === "string" && data.startsWith("0x") && data.length >= 10) found ??= data as Hex;
    if (typeof data === "object" && data !== null && typeof (data as { data?: unknown }).data === "string") found ??= (data as { data: Hex }).data;
    return false;
  });
  return found;
}

function revertError(errorName: string, args: readonly unknown[], cause: unknown): ContractRevertError {
  if (errorName === "JobMarketUnknownJob" && typeof args[0] === "bigint") return new UnknownJobError(args[0], { cause });
  return new ContractRevertError(errorName, args, { cause });
}

/** Maps any error from a viem call to a ChainError subclass (returns PouwErrors unchanged). */
export function toChainError(err: unknown): PouwError {
  if (err instanceof PouwError) return err;
  if (err instanceof ViemBaseError) {
    const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
    if (reverted?.data?.errorName) return revertError(reverted.data.errorName, reverted.data.args ?? [], err);
    const data = reverted?.raw ?? revertData(err);
    if (data) {
      try {
        const decoded = decodeErrorResult({ abi: allErrorsAbi, data });
        return revertError(decoded.errorName, (decoded.args ?? []) as readonly unknown[], err);
      } catch {
        return new UnknownRevertError(data, { cause: err });
      }
    }
    if (reverted) return new UnknownRevertError(undefined, { cause: err });
    if (err.walk((e) => e instanceof UserRejectedRequestError || (e as { code?: unknown }).code === UserRejectedRequestError.code)) {
      return new WalletRejectedError("the wallet rejected the request: nothing was signed or sent", { cause: err });
    }
    const node = nodeFailure(err);
    if (node) return node;
    if (err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError)) {
      return new RpcUnavailableError(`RPC unavailable: ${err.shortMessage}`, { cause: err });
    }
    return new ChainError(err.shortMessage, { cause: err });
  }
  return new ChainError(err instanceof Error ? err.message : String(err), { cause: err });
}

/**
 * Reverts a later attempt can get past: the account's token balance or allowance is short (the bot waits for funds
 * and re-approves). Every other revert is the contract refusing for good (a closed window, a step already disputed,
 * a job refunded).
 */
export const FIXABLE_REVERTS: ReadonlySet<string> = new Set(["ERC20InsufficientBalance", "ERC20InsufficientAllowance", "DisputeGameDepositNotApproved"]);

/**
 * Reverts that only say "not yet": a deadline, a window or a seed block still ahead, a job frozen by an open
 * dispute, or a job (or challenger) at its limit of open disputes. Time changes the answer, so they are retried (with backoff) rather than recorded as failed.
 */
export const LATER_REVERTS: ReadonlySet<string> = new Set([
  "JobMarketDeadlineNotPassed",
  "JobMarketChallengeWindowOpen",
  "JobMarketFrozen",
  "DisputeGameVotingOpen",
  "DisputeGameSeedNotReady",
  // a unanimous first-round Fault settles once its provider's appeal window passed
  "DisputeGameFaultAppealOpen",
  // a slot frees when one of the job's (or the challenger's) open disputes resolves
  "DisputeGameChallengerLimit",
  "DisputeGameJobDisputeLimit",
]);

export type SendFailureClass =
  /** token balance or allowance short (a fixable revert), or not enough ETH for gas: wait for funds */
  | "funds"
  /** the signed bytes can never be mined (nonce used by another transaction): re-sign */
  | "nonce"
  /** another transaction holds the nonce, or the fee cap is below the base fee: retry later (re-sign for the fee) */
  | "fee"
  /** the RPC cannot be reached: retry later */
  | "rpc"
  /** the contract says not yet (LATER_REVERTS): retry later */
  | "later"
  /** mined and reverted: the nonce is spent, nothing happened; re-estimate (which decodes why) and try again */
  | "mined-revert"
  /** the contract refuses for good: record the decoded reason */
  | "permanent"
  /** anything else (no known cause): retried with backoff, logged at error */
  | "unknown";

/** What a failed send means for the intent that sent it (see SendFailureClass). */
export function classifySendFailure(err: PouwError): SendFailureClass {
  if (err instanceof ContractRevertError) return FIXABLE_REVERTS.has(err.errorName) ? "funds" : LATER_REVERTS.has(err.errorName) ? "later" : "permanent";
  if (err instanceof UnknownRevertError) return "permanent";
  if (err instanceof GasFundsError) return "funds";
  if (err instanceof NonceTooLowError) return "nonce";
  if (err instanceof ReplacementUnderpricedError || err instanceof FeeTooLowError) return "fee";
  if (err instanceof RpcUnavailableError || err instanceof TxDroppedError) return "rpc";
  if (err instanceof TxRevertedError) return "mined-revert";
  return "unknown";
}

/** Whether retrying the same request may succeed (transport trouble, not a revert). */
export function isRetryable(err: unknown): boolean {
  return err instanceof RpcUnavailableError;
}
