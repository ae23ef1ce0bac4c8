/**
 * Dev chain only: move a local node's clock forward and mine blocks (`evm_increaseTime`, then `hardhat_mine`, which
 * Hardhat and Anvil both answer). What the walkthrough needs to get past the auditor activation delay, a panel's seed
 * block, the vote windows and a challenge window without waiting for them.
 *
 * The caller checks the chain id first (DEV_CHAIN_ID): on any other chain the methods do not exist, and a node that
 * answered them anyway must not be asked to.
 *
 * @example
 *   const r = await advanceDevChain(devChainClient(rpcUrl), { seconds: 3601, blocks: 1 });
 *   // r.after.timestamp >= r.before.timestamp + 3601n; r.after.number === r.before.number + 1n
 */
import { createTestClient, http, publicActions, type Chain } from "viem";
import { hardhat } from "viem/chains";
import { ChainError, toChainError } from "./errors.ts";
import { withRetry } from "./retry.ts";

/** A hardhat-mode test client with public actions, for the dev chain at `rpcUrl`. */
export function devChainClient(rpcUrl: string) {
  const chain: Chain = { ...hardhat, rpcUrls: { default: { http: [rpcUrl] } } };
  return createTestClient({ mode: "hardhat", chain, transport: http(rpcUrl, { retryCount: 2, retryDelay: 100, timeout: 15_000 }) }).extend(publicActions);
}

export type DevChainClient = ReturnType<typeof devChainClient>;

export type AdvanceDevChainParameters = {
  /** Seconds added to the clock before the first mined block (0: none). */
  seconds: number;
  /** Blocks to mine (>= 1). The first carries the advanced time; each later one is 1 s after the previous. */
  blocks: number;
};

export type BlockStamp = { number: bigint; timestamp: bigint };

export type AdvanceDevChainReturnType = { before: BlockStamp; after: BlockStamp };

/** Thrown when the node does not answer the dev methods (not a Hardhat or Anvil node). */
export class DevChainMethodError extends ChainError {
  override name = "DevChainMethodError";
  override readonly code: string = "DEV_CHAIN_METHOD";
}

async function head(client: DevChainClient): Promise<BlockStamp> {
  const b = await withRetry(() => client.getBlock({ blockTag: "latest" }), { what: "getBlock" });
  return { number: b.number, timestamp: b.timestamp };
}

export async function advanceDevChain(client: DevChainClient, p: AdvanceDevChainParameters): Promise<AdvanceDevChainReturnType> {
  if (!Number.isSafeInteger(p.seconds) || p.seconds < 0) throw new ChainError(`seconds must be a whole number >= 0, got ${p.seconds}`);
  if (!Number.isSafeInteger(p.blocks) || p.blocks < 1) throw new ChainError(`blocks must be a whole number >= 1, got ${p.blocks}`);
  const before = await head(client);
  try {
    // NOTE: not retried: a lost answer to evm_increaseTime may have moved the clock already, and moving it twice
    // would silently skip a window the caller meant to stay inside.
    if (p.seconds > 0) await client.increaseTime({ seconds: p.seconds });
    await client.mine({ blocks: p.blocks });
  } catch (err) {
    const e = toChainError(err);
    if (/method .*not (found|supported)|does not exist|not available/i.test(`${e.message}`)) {
      throw new DevChainMethodError(`the node at ${client.transport.url ?? "the RPC"} does not answer evm_increaseTime / hardhat_mine (a Hardhat or Anvil node does)`, { cause: err });
    }
    throw e;
  }
  return { before, after: await head(client) };
}
