/**
 * Turns the configured key source into a viem local account. A raw private key is accepted only on the
 * local dev chain (id 31337) and prints a warning on stderr; keystores work on any chain.
 */
import { readFile } from "node:fs/promises";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { ConfigError, DEV_CHAIN_ID, type Config } from "./index.ts";
import { defaultHardhatKeystorePath, readHardhatKeystoreKey } from "./hardhat-keystore.ts";
import { decryptKeystoreV3, KeystoreError } from "./keystore-v3.ts";

export async function loadAccount(config: Config, chainId: number, warn: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<PrivateKeyAccount> {
  const key = config.key;
  switch (key.kind) {
    case "none":
      throw new ConfigError("this command signs transactions: pass --keystore FILE, --hardhat-keystore NAME or (dev chain only) --private-key");
    case "private-key":
      if (chainId !== DEV_CHAIN_ID) {
        throw new ConfigError(`--private-key is allowed only on the local dev chain (${DEV_CHAIN_ID}); this RPC is chain ${chainId}: use --keystore or --hardhat-keystore`);
      }
      warn("pouw: WARNING: using a raw private key from the command line or environment (local dev chain only)");
      return privateKeyToAccount(key.key);
    case "keystore": {
      let json: unknown;
      try {
        json = JSON.parse(await readFile(key.path, "utf8"));
      } catch (err) {
        throw new KeystoreError(`cannot read keystore ${key.path}`, { cause: err });
      }
      return privateKeyToAccount(decryptKeystoreV3(json, key.password));
    }
    case "hardhat-keystore":
      return privateKeyToAccount(await readHardhatKeystoreKey(key.path ?? (await defaultHardhatKeystorePath()), key.password, key.name));
  }
}
