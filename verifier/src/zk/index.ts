/**
 * The circuit-provable model class (a fixed-point linear tile, circuits/step.circom): reference step,
 * field encoding, Poseidon commitments, Groth16 proving and verification. See docs/zk.md.
 */
export * from "./params.ts";
export * from "./errors.ts";
export * from "./fixed.ts";
export * from "./step.ts";
export * from "./commit.ts";
export * from "./artifacts.ts";
export * from "./prove.ts";
export * from "./abi.ts";
export * from "./vkey.ts";
