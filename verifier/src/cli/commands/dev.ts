/**
 * `pouw dev advance [SECONDS] [--blocks N] [--json]` (alias `advance-time`): on the local dev chain only, move the
 * node's clock forward by SECONDS and mine N blocks (default 1), so that a walkthrough gets past the auditor
 * activation delay, a panel's seed block, the vote windows and a challenge window without waiting. Refused with one
 * line, exit 2, on any chain whose id is not 31337. Needs no key and no deployment.
 */
import type { Command } from "commander";
import { advanceDevChain, chainDate, devChainClient, fetchChainId } from "../../chain/index.ts";
import { DEV_CHAIN_ID } from "../../config/index.ts";
import { InputError } from "../../errors/index.ts";
import { configFrom, withConfig } from "../context.ts";

type Opts = Record<string, string | boolean | undefined>;

function parseWhole(flag: string, text: string, min: number, max: number): number {
  if (!/^[0-9]{1,10}$/.test(text) || Number(text) < min || Number(text) > max) throw new InputError(`${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return Number(text);
}

export function registerDev(program: Command): void {
  const dev = program.command("dev").description("local dev chain helpers (chain id 31337 only): advance time and mine blocks");

  withConfig(
    dev
      .command("advance")
      .alias("advance-time")
      .description("move the local node's clock forward by SECONDS and mine --blocks blocks (evm_increaseTime + hardhat_mine); refused on any chain but 31337")
      .argument("[seconds]", "seconds to add to the clock before the first mined block", "0")
      .option("--blocks <n>", "blocks to mine; the first carries the advanced time, each later one is 1 s after the previous", "1")
      .option("--json", "print {before, after} blocks as JSON")
      .addHelpText(
        "after",
        [
          "",
          "Examples:",
          "  pouw dev advance 3601            past the auditor activation delay (1 h by default)",
          "  pouw dev advance --blocks 2      past a dispute's seed block (2 blocks by default)",
          "  pouw dev advance 86401           past a vote window (1 day by default)",
          "",
        ].join("\n"),
      ),
  ).action(async (secondsArg: string, opts: Opts) => {
    const seconds = parseWhole("SECONDS", secondsArg, 0, 10 * 365 * 86_400);
    const blocks = parseWhole("--blocks", String(opts.blocks), 1, 100_000);
    const config = configFrom(opts as never);
    const chainId = await fetchChainId(config.rpcUrl).catch((err: unknown) => {
      throw new InputError(`cannot reach the RPC at ${config.rpcUrl} (start \`npx hardhat node\` or pass --rpc)`, { cause: err });
    });
    // INVARIANT: time is moved only on the local dev chain; anything else is refused before a dev method is sent.
    if (chainId !== DEV_CHAIN_ID) throw new InputError(`pouw dev advance works only on the local dev chain (${DEV_CHAIN_ID}); ${config.rpcUrl} is chain ${chainId}`);
    const r = await advanceDevChain(devChainClient(config.rpcUrl), { seconds, blocks });
    if (opts.json) {
      const stamp = (b: typeof r.before) => ({ number: b.number.toString(), timestamp: b.timestamp.toString() });
      process.stdout.write(JSON.stringify({ chainId, seconds, blocks, before: stamp(r.before), after: stamp(r.after) }) + "\n");
      return;
    }
    process.stdout.write(
      `block ${r.after.number} at ${chainDate(r.after.timestamp)} (+${r.after.timestamp - r.before.timestamp} s, +${r.after.number - r.before.number} block${r.after.number - r.before.number === 1n ? "" : "s"})\n`,
    );
  });
}
