/**
 * Reads one secret (a private key) from Hardhat 3's encrypted keystore (`npx hardhat keystore set NAME`),
 * the file hardhat-keystore keeps in Hardhat's global config dir. Decryption is hardhat-keystore's own
 * code (scrypt master key, HMAC check, AES-GCM-SIV), loaded from the installed plugin.
 *
 * NOTE: the plugin exports no programmatic API, so this imports its internal encryption module by file;
 * its format is versioned ("hardhat-v3-keystore-1") and checked below.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { isHex, type Hex } from "viem";
import { KeystoreError } from "./keystore-v3.ts";

type Encryption = {
  KEYSTORE_VERSION: string;
  deriveMasterKeyFromKeystore(a: { password: string; encryptedKeystore: unknown }): Uint8Array;
  decryptSecret(a: { masterKey: Uint8Array; encryptedKeystore: unknown; key: string }): string;
};

async function encryption(): Promise<Encryption> {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve("@nomicfoundation/hardhat-keystore/package.json"));
  return (await import(pathToFileURL(join(pkg, "dist/src/internal/keystores/encryption.js")).href)) as Encryption;
}

/** Hardhat's production keystore file (…/hardhat-nodejs/keystore.json in the global config dir). */
export async function defaultHardhatKeystorePath(): Promise<string> {
  const { getConfigDir } = (await import("@nomicfoundation/hardhat-utils/global-dir")) as { getConfigDir: () => Promise<string> };
  return join(await getConfigDir(), "keystore.json");
}

export async function readHardhatKeystoreKey(path: string, password: string, key: string): Promise<Hex> {
  let keystore: { version?: unknown };
  try {
    keystore = JSON.parse(await readFile(path, "utf8")) as { version?: unknown };
  } catch (err) {
    throw new KeystoreError(`cannot read the Hardhat keystore ${path}`, { cause: err });
  }
  const enc = await encryption();
  if (keystore.version !== enc.KEYSTORE_VERSION) throw new KeystoreError(`${path}: unsupported Hardhat keystore version ${JSON.stringify(keystore.version)}`);
  let secret: string;
  try {
    const masterKey = enc.deriveMasterKeyFromKeystore({ password, encryptedKeystore: keystore });
    secret = enc.decryptSecret({ masterKey, encryptedKeystore: keystore, key });
  } catch (err) {
    const name = (err as Error).name;
    if (name === "SecretNotFoundError") throw new KeystoreError(`the Hardhat keystore has no key ${JSON.stringify(key)}`, { cause: err });
    throw new KeystoreError("cannot decrypt the Hardhat keystore: wrong password or corrupted file", { cause: err });
  }
  const pk = secret.startsWith("0x") ? secret : `0x${secret}`;
  if (!isHex(pk) || pk.length !== 66) throw new KeystoreError(`Hardhat keystore key ${JSON.stringify(key)} is not a 32-byte hex private key`);
  return pk;
}
