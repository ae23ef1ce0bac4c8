import { expect } from "chai";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError, parseConfig } from "../../verifier/src/config/index.ts";
import { loadAccount } from "../../verifier/src/config/keys.ts";
import { decryptKeystoreV3, KeystoreError } from "../../verifier/src/config/keystore-v3.ts";
import { readHardhatKeystoreKey } from "../../verifier/src/config/hardhat-keystore.ts";

const KEY = "0x7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d";
/** Web3 Secret Storage definition, test vector 1 (PBKDF2-SHA-256), password "testpassword". */
const PBKDF2_VECTOR = {
  version: 3,
  crypto: {
    cipher: "aes-128-ctr",
    cipherparams: { iv: "6087dab2f9fdbbfaddc31a909735c1e6" },
    ciphertext: "5318b4d5bcd28de64ee5559e671353e16f075ecae9f99c7a79a38af5f869aa46",
    kdf: "pbkdf2",
    kdfparams: { c: 262144, dklen: 32, prf: "hmac-sha256", salt: "ae3cd4e7013836a3df6bd7241b12db061dbe2c6785853cce422d148a624ce0bd" },
    mac: "517ead924a9d0dc3124507e3393d175ce3ff7c1e96529c6c555ce9e51205e9b2",
  },
};
/** Same definition, test vector 2 (scrypt n=262144, r=1, p=8): outside RFC 7914, so OpenSSL refuses it. */
const SCRYPT_R1_VECTOR = {
  version: 3,
  crypto: {
    cipher: "aes-128-ctr",
    cipherparams: { iv: "83dbcc02d8ccb40e466191a123791e0e" },
    ciphertext: "d172bf743a674da9cdad04534d56926ef8358534d458fffccd4e6ad2fbde479c",
    kdf: "scrypt",
    kdfparams: { dklen: 32, n: 262144, r: 1, p: 8, salt: "ab0c7876052600dd703518d6fc3fe8984592145b591fc8fb5c6d43190334ba19" },
    mac: "2103ac29920d71da29f15d75b4a16dbe95cfd7ff8faea1056c33131d846e3097",
  },
};
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")) as unknown;

describe("config: keystore v3", () => {
  it("decrypts the Web3 Secret Storage PBKDF2 test vector", () => {
    expect(decryptKeystoreV3(PBKDF2_VECTOR, "testpassword")).to.equal(KEY);
  });
  it("decrypts an scrypt keystore written by ethers v6 (independent implementation)", () => {
    expect(decryptKeystoreV3(fixture("keystore-scrypt.ethers.json"), "testpassword")).to.equal(KEY);
  });
  it("rejects a wrong password by MAC, never returning a wrong key", () => {
    expect(() => decryptKeystoreV3(PBKDF2_VECTOR, "wrong")).to.throw(KeystoreError, /MAC mismatch/);
  });
  it("rejects scrypt parameters outside RFC 7914 with a reason", () => {
    expect(() => decryptKeystoreV3(SCRYPT_R1_VECTOR, "testpassword")).to.throw(KeystoreError, /RFC 7914/);
  });
  it("rejects a tampered ciphertext, a wrong version and a non-object", () => {
    const t = structuredClone(PBKDF2_VECTOR);
    t.crypto.ciphertext = "0" + t.crypto.ciphertext.slice(1);
    expect(() => decryptKeystoreV3(t, "testpassword")).to.throw(KeystoreError, /MAC/);
    expect(() => decryptKeystoreV3({ ...PBKDF2_VECTOR, version: 1 }, "testpassword")).to.throw(KeystoreError, /version/);
    expect(() => decryptKeystoreV3("nope", "x")).to.throw(KeystoreError);
  });
});

describe("config: Hardhat keystore", () => {
  it("reads a key from a keystore written by hardhat-keystore's own code", async () => {
    const require = createRequire(import.meta.url);
    const pkg = dirname(require.resolve("@nomicfoundation/hardhat-keystore/package.json"));
    const enc = await import(pathToFileURL(join(pkg, "dist/src/internal/keystores/encryption.js")).href);
    const { salt, masterKey } = enc.createMasterKey({ password: "pw" });
    let ks = enc.createEmptyEncryptedKeystore({ masterKey, salt });
    ks = enc.addSecretToKeystore({ masterKey, encryptedKeystore: ks, key: "PROVIDER_KEY", value: KEY });
    const path = join(mkdtempSync(join(tmpdir(), "pouw-hhks-")), "keystore.json");
    writeFileSync(path, JSON.stringify(ks));
    expect(await readHardhatKeystoreKey(path, "pw", "PROVIDER_KEY")).to.equal(KEY);
    await readHardhatKeystoreKey(path, "bad", "PROVIDER_KEY").then(() => expect.fail(), (e) => expect(e).to.be.instanceOf(KeystoreError));
    await readHardhatKeystoreKey(path, "pw", "OTHER").then(() => expect.fail(), (e) => expect(String(e)).to.match(/no key "OTHER"/));
  });
});

describe("config: parseConfig", () => {
  it("applies defaults and returns a frozen object", () => {
    const c = parseConfig({}, {});
    expect(c.rpcUrl).to.equal("http://127.0.0.1:8545");
    expect(c.confirmations).to.equal(1);
    expect(c.key.kind).to.equal("none");
    expect(Object.isFrozen(c)).to.equal(true);
  });
  it("takes flags over env over defaults", () => {
    const c = parseConfig({ rpc: "http://127.0.0.1:9999" }, { POUW_RPC_URL: "http://127.0.0.1:1", POUW_CONFIRMATIONS: "3" });
    expect(c.rpcUrl).to.equal("http://127.0.0.1:9999");
    expect(c.confirmations).to.equal(3);
  });
  it("names the bad flag", () => {
    expect(() => parseConfig({ rpc: "ftp://x" }, {})).to.throw(ConfigError, /--rpc/);
    expect(() => parseConfig({ confirmations: "0" }, {})).to.throw(ConfigError, /--confirmations/);
    expect(() => parseConfig({ logLevel: "loud" }, {})).to.throw(ConfigError, /--log-level/);
    expect(() => parseConfig({ privateKey: "0x1234" }, {})).to.throw(ConfigError, /32 bytes/);
    expect(() => parseConfig({ privateKey: KEY, keystore: "k.json" }, { POUW_KEYSTORE_PASSWORD: "x" })).to.throw(ConfigError, /one key source/);
    expect(() => parseConfig({ keystore: "k.json" }, {})).to.throw(ConfigError, /password/);
  });
  it("allows a raw private key only on chain 31337, with a warning", async () => {
    const c = parseConfig({ privateKey: KEY }, {});
    const warnings: string[] = [];
    const account = await loadAccount(c, 31337, (l) => warnings.push(l));
    expect(account.address).to.equal("0x008AeEda4D805471dF9b2A5B0f38A0C3bCBA786b");
    expect(warnings[0]).to.match(/WARNING/);
    await loadAccount(c, 1, () => {}).then(() => expect.fail(), (e) => expect(e).to.be.instanceOf(ConfigError));
  });
  it("loads an account from a keystore file on any chain", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-ks-"));
    writeFileSync(join(dir, "k.json"), JSON.stringify(PBKDF2_VECTOR));
    writeFileSync(join(dir, "pw"), "testpassword\n");
    const c = parseConfig({ keystore: join(dir, "k.json"), passwordFile: join(dir, "pw") }, {});
    expect((await loadAccount(c, 1)).address).to.equal("0x008AeEda4D805471dF9b2A5B0f38A0C3bCBA786b");
  });
});
