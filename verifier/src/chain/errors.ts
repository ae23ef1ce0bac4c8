/**
 * ChainError hierarchy. A contract revert is decoded by its custom error name and arguments against the
 * generated ABIs (viem's decodeErrorResult), never by message text:
 *
 *   ChainError
 *   ├── ContractRevertError    the call reverted with a known custom error: `errorName`, `args`
 *   ├── UnknownRevertError     reverted with data that matches no known error (or none)
 *   ├── RpcUnavailableError    transport failure / timeout after retries (retryable)
 *   └── TxDroppedError         a sent transaction never reached a receipt
 *
 * @example
 *   try { await acceptJob(clients, { jobMarket, jobId }) }
 *   catch (err) { if (err instanceof ContractRevertError && err.errorName === "JobMarketWrongStatus") ... }
 */
import {
  BaseError as ViemBaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  HttpRequestError,
  TimeoutError,
  type Hex,
} from "viem";
import { PouwError, type PouwErrorOptions } from "../errors/index.ts";
import { allErrorsAbi } from "./abi/index.ts";

export class ChainError extends PouwError {
  override name = "ChainError";
  override readonly code: string = "CHAIN_ERROR";
}

export class ContractRevertError extends ChainError {
  override name = "ContractRevertError";
  override readonly code: string = "CONTRACT_REVERT";
  readonly errorName: string;
  readonly args: readonly unknown[];
  constructor(errorName: string, args: readonly unknown[], options: PouwErrorOptions = {}) {
    super(`reverted: ${errorName}(${args.map(formatArg).join(", ")})`, options);
    this.errorName = errorName;
    this.args = args;
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

/** Maps any error from a viem call to a ChainError subclass (returns PouwErrors unchanged). */
export function toChainError(err: unknown): PouwError {
  if (err instanceof PouwError) return err;
  if (err instanceof ViemBaseError) {
    const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
    if (reverted?.data?.errorName) return new ContractRevertError(reverted.data.errorName, reverted.data.args ?? [], { cause: err });
    const data = reverted?.raw ?? revertData(err);
    if (data) {
      try {
        const decoded = decodeErrorResult({ abi: allErrorsAbi, data });
        return new ContractRevertError(decoded.errorName, (decoded.args ?? []) as readonly unknown[], { cause: err });
      } catch {
        return new UnknownRevertError(data, { cause: err });
      }
    }
    if (reverted) return new UnknownRevertError(undefined, { cause: err });
    if (err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError)) {
      return new RpcUnavailableError(`RPC unavailable: ${err.shortMessage}`, { cause: err });
    }
    return new ChainError(err.shortMessage, { cause: err });
  }
  return new ChainError(err instanceof Error ? err.message : String(err), { cause: err });
}

/** Whether retrying the same request may succeed (transport trouble, not a revert). */
export function isRetryable(err: unknown): boolean {
  return err instanceof RpcUnavailableError;
}
