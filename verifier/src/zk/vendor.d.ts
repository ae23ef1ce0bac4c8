// Minimal typings for the parts of snarkjs and circomlibjs this module uses (neither ships types).

declare module "circomlibjs" {
  export type PoseidonField = {
    toObject(e: Uint8Array): bigint;
  };
  export type Poseidon = ((inputs: readonly (bigint | number | string)[]) => Uint8Array) & { F: PoseidonField };
  export function buildPoseidonOpt(): Promise<Poseidon>;
}

declare module "snarkjs" {
  export type Groth16Proof = {
    pi_a: string[];
    pi_b: string[][];
    pi_c: string[];
    protocol: string;
    curve: string;
  };
  export type VerificationKey = Record<string, unknown> & { protocol: string; curve: string; nPublic: number };
  export type MemFile = { type: "mem"; data?: Uint8Array };
  export type FileRef = string | MemFile | Uint8Array;
  export type CircuitInput = Record<string, unknown>;

  export const groth16: {
    fullProve(
      input: CircuitInput,
      wasmFile: FileRef,
      zkeyFile: FileRef,
      logger?: unknown,
    ): Promise<{ proof: Groth16Proof; publicSignals: string[] }>;
    prove(zkeyFile: FileRef, witnessFile: FileRef, logger?: unknown): Promise<{ proof: Groth16Proof; publicSignals: string[] }>;
    verify(vk: VerificationKey, publicSignals: readonly string[], proof: Groth16Proof, logger?: unknown): Promise<boolean>;
    exportSolidityCallData(proof: Groth16Proof, publicSignals: readonly string[]): Promise<string>;
  };
  export const wtns: {
    calculate(input: CircuitInput, wasmFile: FileRef, wtnsFile: FileRef): Promise<void>;
    exportJson(wtnsFile: FileRef): Promise<bigint[]>;
  };
  export const zKey: {
    newZKey(r1cs: FileRef, ptau: FileRef, zkey: FileRef, logger?: unknown): Promise<unknown>;
    contribute(zkeyOld: FileRef, zkeyNew: FileRef, name: string, entropy: string, logger?: unknown): Promise<Uint8Array>;
    beacon(
      zkeyOld: FileRef,
      zkeyNew: FileRef,
      name: string,
      beaconHashHex: string,
      numIterationsExp: number,
      logger?: unknown,
    ): Promise<Uint8Array>;
    verifyFromR1cs(r1cs: FileRef, ptau: FileRef, zkey: FileRef, logger?: unknown): Promise<boolean>;
    exportVerificationKey(zkey: FileRef, logger?: unknown): Promise<VerificationKey>;
    exportSolidityVerifier(zkey: FileRef, templates: Record<string, string>, logger?: unknown): Promise<string>;
  };
  export const powersOfTau: {
    newAccumulator(curve: unknown, power: number, file: FileRef, logger?: unknown): Promise<unknown>;
    contribute(oldFile: FileRef, newFile: FileRef, name: string, entropy: string, logger?: unknown): Promise<unknown>;
    beacon(
      oldFile: FileRef,
      newFile: FileRef,
      name: string,
      beaconHashHex: string,
      numIterationsExp: number,
      logger?: unknown,
    ): Promise<unknown>;
    preparePhase2(oldFile: FileRef, newFile: FileRef, logger?: unknown): Promise<unknown>;
  };
  export const r1cs: {
    info(r1cs: FileRef, logger?: unknown): Promise<{ nConstraints: number; nVars: number; nOutputs: number; nPubInputs: number; nPrvInputs: number }>;
  };
  export const curves: {
    getCurveFromName(name: string, options?: { singleThread?: boolean }): Promise<{ terminate(): Promise<void> }>;
  };
}
