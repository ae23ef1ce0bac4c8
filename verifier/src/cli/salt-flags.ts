/**
 * The job-salt flags of the offline commands (`pouw train`, `pouw audit`): `--salt 0x..`, or `--chain-id N
 * --market 0x..` to derive salt(job) = keccak256(abi.encode(chainId, jobMarket, jobId)) for the command's job
 * id; neither gives the offline salt of the job id (chain 0, market 0x0: docs/engine.md "Job salt"). The
 * chain commands (`pouw provider run`, the bot) take the salt from their deployment and have no such flag.
 */
import type { Command } from "commander";
import { getAddress, isAddress, type Hex } from "viem";
import { InputError } from "../errors/index.ts";
import { jobSalt, offlineSalt, parseSalt } from "../ml/salt.ts";

export type SaltFlags = { salt?: string; chainId?: string; market?: string };

export type ResolvedSalt = { salt: Hex; source: "salt" | "chain" | "offline" };

export function addSaltOptions(cmd: Command): Command {
  return cmd
    .option("--salt <0x..>", "the job's salt, keccak256(abi.encode(chainId, jobMarket, jobId)) (default: derived from --chain-id and --market, else the offline salt of the job id)")
    .option("--chain-id <n>", "chain id of the job's market (with --market: derives the salt)")
    .option("--market <address>", "JobMarket address of the job (with --chain-id: derives the salt)");
}

/** The salt the flags name for job `jobId`; InputError (exit 2) on a malformed or contradictory combination. */
export function saltFromFlags(flags: SaltFlags, jobId: bigint): ResolvedSalt {
  const chain = flags.chainId !== undefined || flags.market !== undefined;
  if (flags.salt !== undefined && chain) throw new InputError("give --salt, or --chain-id with --market, not both");
  if (flags.salt !== undefined) return { salt: parseSalt(flags.salt), source: "salt" };
  if (!chain) return { salt: offlineSalt(jobId), source: "offline" };
  if (flags.chainId === undefined || flags.market === undefined) throw new InputError("--chain-id and --market go together (they derive the job's salt)");
  if (!/^[1-9][0-9]{0,77}$/.test(flags.chainId) || BigInt(flags.chainId) >= 1n << 256n) throw new InputError(`--chain-id must be a positive decimal integer, got ${JSON.stringify(flags.chainId)}`);
  if (!isAddress(flags.market, { strict: false })) throw new InputError(`--market must be a 0x-prefixed 20-byte address, got ${JSON.stringify(flags.market)}`);
  return { salt: jobSalt({ chainId: BigInt(flags.chainId), jobMarket: getAddress(flags.market), jobId }), source: "chain" };
}
