/**
 * Web3 Secret Storage v3 (the "encrypted JSON keystore" of geth, ethers, MetaMask exports):
 * derivedKey = scrypt or pbkdf2-hmac-sha256 (password, salt); MAC = keccak256(derivedKey[16..32] ++ ciphertext);
 * privateKey = aes-128-ctr(key = derivedKey[0..16], iv) over the ciphertext. The MAC is checked before
 * decrypting, so a wrong password is reported as such and never yields a wrong key.
 */
import { createDecipheriv, pbkdf2Sync, scryptSync, timingSafeEqual } from "node:crypto";
import { bytesToHex, concatBytes, hexToBytes, keccak256, type Hex } from "viem";
import { z } from "zod";
import { InputError } from "../errors/index.ts";

export class KeystoreError extends InputError {
  override name = "KeystoreError";
  override readonly code: string = "KEYSTORE";
}

const hex = z.string().regex(/^(0x)?[0-9a-fA-F]*$/).transform((s) => (s.startsWith("0x") ? s.slice(2) : s).toLowerCase());

const ScryptParams = z.object({ dklen: z.number().int().min(32), n: z.number().int().positive(), r: z.number().int().positive(), p: z.number().int().positive(), salt: hex });
const Pbkdf2Params = z.object({ dklen: z.number().int().min(32), c: z.number().int().positive(), prf: z.literal("hmac-sha256"), salt: hex });

const CryptoSection = z.object({
  cipher: z.literal("aes-128-ctr"),
  cipherparams: z.object({ iv: hex }),
  ciphertext: hex,
  kdf: z.enum(["scrypt", "pbkdf2"]),
  kdfparams: z.unknown(),
  mac: hex,
});

function crypto(value: unknown) {
  if (typeof value !== "object" || value === null) throw new KeystoreError("keystore is not a JSON object");
  const v = value as { version?: unknown; crypto?: unknown; Crypto?: unknown };
  if (v.version !== 3) throw new KeystoreError(`keystore field version: expected 3, got ${JSON.stringify(v.version)}`);
  // Some writers (ethers, geth) capitalise the field ("Crypto").
  const c = CryptoSection.safeParse(v.crypto ?? v.Crypto);
  if (!c.success) {
    const issue = c.error.issues[0]!;
    throw new KeystoreError(`keystore field crypto.${issue.path.join(".")}: ${issue.message}`);
  }
  return c.data;
}

function deriveKey(kdf: "scrypt" | "pbkdf2", params: unknown, password: string): Uint8Array {
  const pw = Buffer.from(password.normalize("NFKC"), "utf8");
  if (kdf === "scrypt") {
    const p = ScryptParams.safeParse(params);
    if (!p.success) throw new KeystoreError(`keystore field crypto.kdfparams.${p.error.issues[0]!.path.join(".")}: ${p.error.issues[0]!.message}`);
    const { n, r, p: par, dklen, salt } = p.data;
    if ((n & (n - 1)) !== 0 || n < 2) throw new KeystoreError(`keystore scrypt n=${n} is not a power of two`);
    if (n > 2 ** 20) throw new KeystoreError(`keystore scrypt n=${n} is larger than 2^20 (refused: memory)`);
    // RFC 7914 requires N < 2^(128 r / 8); OpenSSL (node:crypto) refuses anything else.
    if (Math.log2(n) >= 16 * r) throw new KeystoreError(`keystore scrypt parameters n=${n}, r=${r} violate RFC 7914 (n < 2^(16 r))`);
    return scryptSync(pw, Buffer.from(salt, "hex"), dklen, { N: n, r, p: par, maxmem: 256 * (n + par + 2) * r + 32 * 1024 * 1024 });
  }
  const p = Pbkdf2Params.safeParse(params);
  if (!p.success) throw new KeystoreError(`keystore field crypto.kdfparams.${p.error.issues[0]!.path.join(".")}: ${p.error.issues[0]!.message}`);
  return pbkdf2Sync(pw, Buffer.from(p.data.salt, "hex"), p.data.c, p.data.dklen, "sha256");
}

/** Decrypts a v3 keystore (parsed JSON) with `password`; returns the 32-byte private key. */
export function decryptKeystoreV3(keystore: unknown, password: string): Hex {
  const c = crypto(keystore);
  const derived = deriveKey(c.kdf, c.kdfparams, password);
  const ciphertext = hexToBytes(`0x${c.ciphertext}`);
  const mac = hexToBytes(keccak256(concatBytes([derived.subarray(16, 32), ciphertext])));
  const expected = hexToBytes(`0x${c.mac}`);
  if (expected.length !== 32 || !timingSafeEqual(mac, expected)) throw new KeystoreError("keystore MAC mismatch: wrong password or corrupted keystore");
  const iv = Buffer.from(c.cipherparams.iv, "hex");
  if (iv.length !== 16) throw new KeystoreError(`keystore iv must be 16 bytes, got ${iv.length}`);
  const decipher = createDecipheriv("aes-128-ctr", derived.subarray(0, 16), iv);
  const key = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  if (key.length !== 32) throw new KeystoreError(`keystore holds a ${key.length}-byte key, expected 32`);
  return bytesToHex(key);
}
