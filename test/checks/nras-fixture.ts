/**
 * A test stand-in for NVIDIA's remote attestation service (NRAS): a P-384 signing key published in a JWKS under a `kid`,
 * and detached EAT bundles of the shape NRAS returns ([["JWT", platform token], {"GPU-0": GPU token}], ES384, platform
 * token naming each GPU token by SHA-256 in `submods`). No real NRAS token ships with any installed package, so tests
 * and the bench use this; docs/checks.md says so. Also builds whole evidence bundles (bundle.ts) with a session key.
 */
import { createHash, randomBytes } from "node:crypto";
import { CompactSign, exportJWK, generateKeyPair, SignJWT } from "jose";
import type { Hex, LocalAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { evidenceNonce, NvidiaPolicySchema, sessionAuthorizationMessage, sessionPossessionMessage, type NvidiaPolicy } from "../../verifier/src/checks/attestation/index.ts";

export type Nras = {
  readonly kid: string;
  readonly jwks: { keys: Record<string, unknown>[] };
  readonly policy: NvidiaPolicy;
  /** Signs `claims` as NRAS does (ES384, kid header, iss, iat, exp = iat + ttl). */
  sign(claims: Record<string, unknown>, opts?: { iat?: Date; ttlSeconds?: number; kid?: string }): Promise<string>;
  /** Signs the exact payload text `payload` (ES384, kid header): for payloads JSON builders cannot write (repeated keys). */
  signRaw(payload: string, opts?: { kid?: string }): Promise<string>;
  /** A detached EAT bundle for `nonce` (hex) with one GPU token per entry of `gpus` (claim overrides). */
  eat(nonce: string, opts?: { gpus?: Record<string, unknown>[]; platform?: Record<string, unknown>; iat?: Date; ttlSeconds?: number }): Promise<unknown>;
};

export const GOOD_GPU_CLAIMS = {
  measres: "success",
  dbgstat: "disabled",
  secboot: true,
  "x-nvidia-gpu-arch-check": true,
  "x-nvidia-gpu-driver-version": "550.90.07",
  // a real VBIOS version: hexadecimal fields
  "x-nvidia-gpu-vbios-version": "96.00.9F.00.04",
  hwmodel: "GH100 A01 GSP BROM",
};

export async function makeNras(kid = "nras-test-1"): Promise<Nras> {
  const { publicKey, privateKey } = await generateKeyPair("ES384", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "ES384", use: "sig" };
  const jwks = { keys: [jwk as Record<string, unknown>] };
  const policy = NvidiaPolicySchema.parse({ jwks, minDriverVersion: "535.0", minVbiosVersion: "96.00.5E.00.00", recommendedDriverVersion: "550.0", recommendedVbiosVersion: "96.00.9F.00.00" });
  const sign: Nras["sign"] = async (claims, opts = {}) => {
    const t = Math.floor((opts.iat ?? new Date()).getTime() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "ES384", kid: opts.kid ?? kid, typ: "JWT" })
      .setIssuer("https://nras.attestation.nvidia.com")
      .setIssuedAt(t)
      .setNotBefore(t)
      .setExpirationTime(t + (opts.ttlSeconds ?? 3600))
      .sign(privateKey);
  };
  const signRaw: Nras["signRaw"] = async (payload, opts = {}) =>
    new CompactSign(new TextEncoder().encode(payload)).setProtectedHeader({ alg: "ES384", kid: opts.kid ?? kid, typ: "JWT" }).sign(privateKey);
  const eat: Nras["eat"] = async (nonce, opts = {}) => {
    const gpus = opts.gpus ?? [{}];
    const tokens: Record<string, string> = {};
    const submods: Record<string, unknown> = {};
    for (let i = 0; i < gpus.length; i++) {
      // ueid: the GPU's unique id (a fresh random one per token unless the case names a device)
      const t = await sign({ ...GOOD_GPU_CLAIMS, ueid: BigInt(`0x${randomBytes(20).toString("hex")}`).toString(), eat_nonce: nonce, ...gpus[i] }, opts);
      tokens[`GPU-${i}`] = t;
      submods[`GPU-${i}`] = ["DIGEST", ["SHA256", createHash("sha256").update(t).digest("hex")]];
    }
    const platform = await sign({ sub: "NVIDIA-PLATFORM-ATTESTATION", "x-nvidia-ver": "2.0", "x-nvidia-overall-att-result": true, eat_nonce: nonce, submods, ...opts.platform }, opts);
    return [["JWT", platform], tokens];
  };
  return { kid, jwks, policy, sign, signRaw, eat };
}

/** A fresh session key (what the attested machine would make inside the TEE). */
export const newSessionKey = (): LocalAccount => privateKeyToAccount(generatePrivateKey());

/** The session key proof fields of a bundle for `provider` (signs the authorization) and `binding`. */
export async function sessionProof(provider: LocalAccount, sessionKey: LocalAccount, binding: Hex) {
  return {
    provider: provider.address,
    sessionKey: sessionKey.address,
    authorization: await provider.signMessage({ message: sessionAuthorizationMessage(provider.address, sessionKey.address, binding) }),
    possession: await sessionKey.signMessage({ message: sessionPossessionMessage(provider.address, binding) }),
  };
}

/** A whole nvidia-eat evidence bundle (bytes) for `provider`'s `binding`, its nonce committing to `sessionKey`. */
export async function nvidiaBundle(nras: Nras, provider: LocalAccount, binding: Hex, opts: { sessionKey?: LocalAccount; gpus?: Record<string, unknown>[]; iat?: Date } = {}): Promise<Buffer> {
  const sessionKey = opts.sessionKey ?? newSessionKey();
  const nonce = evidenceNonce(binding, sessionKey.address).slice(2);
  const eat = await nras.eat(nonce, { gpus: opts.gpus, iat: opts.iat });
  return Buffer.from(JSON.stringify({ version: 1, ...(await sessionProof(provider, sessionKey, binding)), evidence: { format: "nvidia-eat", eat } }));
}
