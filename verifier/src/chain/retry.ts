/** Retry with exponential backoff on retryable RPC errors (never on a revert). */
import { logger } from "../log/index.ts";
import { isRetryable, toChainError } from "./errors.ts";

const log = logger("chain");

export type RetryOptions = {
  attempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  what?: string;
  /**
   * Level of the per-attempt "retrying" line (default warn). `debug` where the caller turns the last failure into one
   * clear message of its own (the CLI's "cannot reach the RPC"), so that retries do not print before it.
   */
  retryLogLevel?: "warn" | "debug";
};

export async function withRetry<T>(fn: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 8;
  const base = options.baseDelayMs ?? 100;
  const max = options.maxDelayMs ?? 5_000;
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (raw) {
      const err = toChainError(raw);
      if (!isRetryable(err) || i >= attempts) throw err;
      const delay = Math.min(max, base * 2 ** (i - 1)) * (0.5 + Math.random() / 2);
      log[options.retryLogLevel ?? "warn"]({ err: err.shortMessage, attempt: i, delayMs: Math.round(delay), what: options.what }, "RPC error, retrying");
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
