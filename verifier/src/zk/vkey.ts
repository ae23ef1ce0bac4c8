/**
 * The vkey hash that names a Groth16 verifier at deployment (DisputeGame's constructor, docs/zk.md "Deploying
 * with the result"):
 *
 *   vkeyHash = keccak256(abi.encodePacked(uint256 words...))
 *
 * over the verification key's words in the order the generated Solidity verifier declares them as constants
 * (contracts/verifiers/StepVerifier.sol): alphax, alphay, betax1, betax2, betay1, betay2, gamma (4 words),
 * delta (4 words), then IC0x, IC0y, IC1x, ... (snarkjs stores each G2 coordinate as [c0, c1]; the verifier
 * declares x1 = c1, x2 = c0, the order the pairing precompile wants).
 *
 * The generated verifier inlines every one of these constants as a PUSH32 in its runtime code, so
 * `verifierCodeHasVkey` can check a deployed verifier against a vkey file from its bytecode alone.
 */
import { concatHex, keccak256, numberToHex, type Hex } from "viem";
import type { VerificationKey } from "snarkjs";
import { ZkArtifactError } from "./errors.ts";

type G2 = readonly (readonly string[])[];

function g2Words(p: G2, what: string): bigint[] {
  const [x, y] = p;
  if (!x || !y || x.length < 2 || y.length < 2) throw new ZkArtifactError(`verification key: ${what} is not a G2 point`);
  return [BigInt(x[1]!), BigInt(x[0]!), BigInt(y[1]!), BigInt(y[0]!)];
}

function g1Words(p: readonly string[], what: string): bigint[] {
  if (p.length < 2) throw new ZkArtifactError(`verification key: ${what} is not a G1 point`);
  return [BigInt(p[0]!), BigInt(p[1]!)];
}

/** The verification key's words in the generated verifier's constant order (see the file header). */
export function vkeyWords(vk: VerificationKey): bigint[] {
  const k = vk as unknown as { vk_alpha_1: string[]; vk_beta_2: G2; vk_gamma_2: G2; vk_delta_2: G2; IC: string[][]; nPublic: number };
  if (!Array.isArray(k.IC) || k.IC.length !== k.nPublic + 1) throw new ZkArtifactError(`verification key: ${k.IC?.length} IC points for ${k.nPublic} public signals`);
  return [
    ...g1Words(k.vk_alpha_1, "alpha"),
    ...g2Words(k.vk_beta_2, "beta"),
    ...g2Words(k.vk_gamma_2, "gamma"),
    ...g2Words(k.vk_delta_2, "delta"),
    ...k.IC.flatMap((p, i) => g1Words(p, `IC${i}`)),
  ];
}

/** The vkey hash DisputeGame is deployed with (keccak256 of the packed words). */
export function vkeyHash(vk: VerificationKey): Hex {
  return keccak256(concatHex(vkeyWords(vk).map((w) => numberToHex(w, { size: 32 }))));
}

/**
 * Whether runtime `code` holds every word of `vk` as a PUSH32 immediate: true for the snarkjs verifier generated
 * from that key, false for a verifier of any other key (its alpha, beta, gamma, delta or IC differ).
 */
export function verifierCodeHasVkey(code: Hex, vk: VerificationKey): boolean {
  const body = code.toLowerCase();
  return vkeyWords(vk).every((w) => body.includes(`7f${numberToHex(w, { size: 32 }).slice(2)}`));
}
