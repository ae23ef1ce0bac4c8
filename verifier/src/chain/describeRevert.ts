/**
 * A revert in words with its error name: the custom errors the challenger bot and the commands meet, with enum names,
 * dates and token amounts instead of raw arguments (`job 1's challenge window closed at 2026-01-02T10:00:00Z (chain time
 * ...) [JobMarketChallengeWindowClosed]` rather than `JobMarketChallengeWindowClosed(1, 1767348000, 1767348100)`).
 * Decoded by error name (errors.ts), never by message text; the table is revertText.ts; an error not listed there reads
 * as its ContractRevertError shortMessage (`reverted: Name(args)`).
 *
 * @example
 *   catch (err) { const e = toChainError(err); log.error({ reason: describeRevert(e) }, "challenge refused") }
 */
import { ContractRevertError, type ChainError } from "./errors.ts";
import { revertText, type RevertTextOptions } from "./revertText.ts";
import type { PouwError } from "../errors/index.ts";

export { chainDate, formatDuration } from "./revertText.ts";

/** The revert (or any chain error) in words, for logs and the intent table. */
export function describeRevert(e: PouwError | ChainError, options: RevertTextOptions = {}): string {
  if (e instanceof ContractRevertError) {
    const text = revertText(e.errorName, e.args, options);
    if (text !== undefined) return `${text} [${e.errorName}]`;
  }
  return e.shortMessage;
}
