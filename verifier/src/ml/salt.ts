/**
 * The job salt and the data order derived from it (docs/engine.md "Job salt").
 *
 *   salt(job)  = keccak256(abi.encode(uint256 chainId, address jobMarket, uint256 jobId))   (trace/index.ts jobSalt,
 *                Trace.sol jobSalt: the one definition, with fixed vectors on both sides)
 *   key(l, i)  = keccak256(abi.encode(bytes32 salt, uint32 manifest.data.seed, string l, uint256 i))
 *   stream     = Rng.fromKey(key): sfc32 with its whole 128-bit state from the key's first 16 bytes
 *
 * The batch of step t draws from key("epoch", floor((t-1)/E)) (mnist-mlp: the epoch's permutation) or
 * key("windows", t) (char-transformer: B random windows), so the data order is a pure function of
 * (data seed, salt, t), and two jobs of the same manifest train on different batches from step 1 on: a
 * peer's states re-keyed to another job fail recompute at the first step of every segment.
 *
 * NOTE: the initialisation (manifest.init) and the train/test split do NOT depend on the salt. The init is
 * the buyer's choice (a given seed, or a base checkpoint, which no salt could change), and state 0 costs no
 * compute, so sharing it across jobs gives a copier nothing; the split must stay what the manifest says so
 * that the held-out data (progress check, evaluation) is the same for every job of it.
 */
import { encodeAbiParameters, hexToBytes, keccak256, zeroAddress, type Address, type Hex } from "viem";
import { InputError } from "../errors/index.ts";
import { jobSalt } from "../trace/index.ts";
import { Rng } from "./prng.ts";

export { jobSalt };

/**
 * The chain id of the offline salt: no EVM chain has id 0 (EIP-155 chain ids are positive, and
 * deployment files require one), so an offline trajectory is never that of an on-chain job.
 */
export const OFFLINE_CHAIN_ID = 0n;

/** The salt `pouw train` and `pouw audit` use without a salt flag: salt(chain 0, market 0x0, jobId). */
export function offlineSalt(jobId: bigint): Hex {
  return jobSalt({ chainId: OFFLINE_CHAIN_ID, jobMarket: zeroAddress, jobId });
}

/** The salt of an on-chain job of a deployment (what `pouw provider run`, the bot and the buyer use). */
export function deploymentSalt(deployment: { chainId: number | bigint; jobMarket: Address }, jobId: bigint): Hex {
  return jobSalt({ chainId: deployment.chainId, jobMarket: deployment.jobMarket, jobId });
}

export class SaltError extends InputError {
  override name = "SaltError";
  override readonly code: string = "SALT";
}

const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/** A salt as given on a command line or in a file: 0x and 64 hex digits, returned lower-case. */
export function parseSalt(text: string, what = "--salt"): Hex {
  if (!BYTES32.test(text)) throw new SaltError(`${what} must be 0x and 64 hex digits (the job's salt, keccak256(abi.encode(chainId, jobMarket, jobId))), got ${JSON.stringify(text)}`);
  return text.toLowerCase() as Hex;
}

/** The data-order stream `label`/`index` of a job (see the header). */
export function dataOrderRng(salt: Hex, dataSeed: number, label: string, index: number): Rng {
  const key = keccak256(
    encodeAbiParameters([{ type: "bytes32" }, { type: "uint32" }, { type: "string" }, { type: "uint256" }], [salt, dataSeed, label, BigInt(index)]),
  );
  return Rng.fromKey(hexToBytes(key));
}
