/**
 * A fresh local chain for a test file without a `hardhat node` process: Hardhat's in-process network
 * (`network.create()`, chain id 31337, automine) served over JSON-RPC on a loopback port (test/cli/rpc-over-http.ts),
 * so that commands run through main(argv) (test/helpers/cli.ts runPouw) reach it with `--rpc URL`. A spawned
 * `hardhat node` costs ~8 CPU s to start here (it loads every build-info for its stack traces); keep it for the
 * tests whose point is separate processes (e2e/, the bot's SIGKILL restart).
 *
 * @example
 *   const chain = await startLocalChain();
 *   await runPouw(["deploy", "--rpc", chain.url, "--private-key", DEV_KEYS[0]]);
 *   await chain.stop();
 */
import { network } from "hardhat";
import { serveProvider } from "../cli/rpc-over-http.ts";

export type LocalChain = {
  url: string;
  /** The in-process provider itself (for viem's providerClients). */
  provider: Awaited<ReturnType<typeof network.create>>["provider"];
  stop: () => Promise<void>;
};

export async function startLocalChain(): Promise<LocalChain> {
  const conn = await network.create();
  const served = await serveProvider(conn.provider as never);
  return {
    url: served.url,
    provider: conn.provider,
    stop: async () => {
      await served.close();
      await conn.close();
    },
  };
}
