/**
 * The config flags every chain command takes (config/index.ts) and `--address` for the read-only ones. Command
 * definitions (commands/*.ts) import these from here, not from context.ts, so defining a command loads no viem.
 */
import type { Command } from "commander";
import { addConfigOptions, type ConfigFlags } from "../config/index.ts";

export { addConfigOptions };

export type ReadFlags = ConfigFlags & { address?: string };

/** Adds the config options to a sub-command and returns it. */
export function withConfig(cmd: Command): Command {
  return addConfigOptions(cmd);
}

/** Config options plus `--address`, for commands that only read. */
export function withReadConfig(cmd: Command): Command {
  return addConfigOptions(cmd).option("--address <0x..>", "the account to report on (default: the key's, when one is given); read-only: no key needed");
}
