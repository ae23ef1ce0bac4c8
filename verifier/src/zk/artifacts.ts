/**
 * Locations of the committed circuit artifacts (written by `npm run zk:setup`, hashes in
 * circuits/keys/README.md). Proving needs the wasm and the final zkey; verifying needs the vkey.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { VerificationKey } from "snarkjs";
import { ZkArtifactError } from "./errors.ts";

export type StepArtifacts = {
  /** Witness generator compiled by circom (circuits/keys/step.wasm). */
  wasm: string;
  /** Final Groth16 proving key (circuits/keys/step_final.zkey). */
  zkey: string;
  /** Verification key JSON (circuits/keys/step.vkey.json). */
  vkey: string;
};

const KEYS_DIR = fileURLToPath(new URL("../../../circuits/keys/", import.meta.url));

export const DEFAULT_ARTIFACTS: StepArtifacts = {
  wasm: `${KEYS_DIR}step.wasm`,
  zkey: `${KEYS_DIR}step_final.zkey`,
  vkey: `${KEYS_DIR}step.vkey.json`,
};

/** Reads and parses a verification key; throws ZkArtifactError when missing or malformed. */
export async function loadVerificationKey(path: string = DEFAULT_ARTIFACTS.vkey): Promise<VerificationKey> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new ZkArtifactError(`cannot read verification key ${path}`, { details: "run `npm run zk:setup`", cause: err });
  }
  let vk: VerificationKey;
  try {
    vk = JSON.parse(text) as VerificationKey;
  } catch (err) {
    throw new ZkArtifactError(`verification key ${path} is not JSON`, { cause: err });
  }
  if (vk.protocol !== "groth16" || vk.curve !== "bn128") {
    throw new ZkArtifactError(`verification key ${path} is not a groth16/bn128 key`, {
      details: `protocol ${vk.protocol}, curve ${vk.curve}`,
    });
  }
  return vk;
}
