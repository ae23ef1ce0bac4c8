/**
 * How decoded reverts write amounts: the token symbol in force (default "tokens"). The CLI sets it for one command from
 * the deployment's token (cli/context.ts) and main() resets it when the command ends, so the bot, the tests and library
 * callers in the same process always read "tokens". Imports nothing, so that cli/pouw.ts can reset it without loading
 * viem.
 */
let symbol = "tokens";

export function setRevertTokenSymbol(s: string | undefined): void {
  symbol = s && s.trim() !== "" ? s : "tokens";
}

export function revertTokenSymbol(): string {
  return symbol;
}
