/** Shared helpers of the zk tests: seeded random tiles and raw witness access through the committed wasm. */
import * as snarkjs from "snarkjs";
import { DEFAULT_ARTIFACTS, STEP_PARAMS, type Matrix, type StepInput } from "../../verifier/src/zk/index.ts";

/** xorshift32: reproducible tiles without Math.random. */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

/** A rows x cols matrix of signed integers in [-bound, bound]. */
export function randomMatrix(next: () => number, rows: number, cols: number, bound: number): bigint[][] {
  return Array.from({ length: rows }, () =>
    Array.from({ length: cols }, () => BigInt(Math.floor(next() * (2 * bound + 1)) - bound)),
  );
}

/** A random tile whose values stay within `bound` (2^16 = 1.0) and a given learning rate. */
export function randomTile(seed: number, bound: number, lr: bigint): StepInput {
  const next = rng(seed);
  const { inputs, outputs, batch } = STEP_PARAMS;
  return {
    w: randomMatrix(next, inputs, outputs, bound),
    x: randomMatrix(next, batch, inputs, bound),
    y: randomMatrix(next, batch, outputs, bound),
    lr,
  };
}

export function zeros(rows: number, cols: number): bigint[][] {
  return Array.from({ length: rows }, () => Array.from({ length: cols }, () => 0n));
}

export function withEntry(m: Matrix, r: number, c: number, v: bigint): bigint[][] {
  return m.map((row, i) => row.map((e, j) => (i === r && j === c ? v : e)));
}

/** The full witness for a raw circuit input (throws when a constraint assertion fails). */
export async function witnessOf(input: snarkjs.CircuitInput): Promise<bigint[]> {
  const mem: snarkjs.MemFile = { type: "mem" };
  await snarkjs.wtns.calculate(input, DEFAULT_ARTIFACTS.wasm, mem);
  return snarkjs.wtns.exportJson(mem);
}

/** The witness as a .wtns binary (for proving from a tampered witness). */
export async function witnessFile(input: snarkjs.CircuitInput): Promise<Uint8Array> {
  const mem: snarkjs.MemFile = { type: "mem" };
  await snarkjs.wtns.calculate(input, DEFAULT_ARTIFACTS.wasm, mem);
  return mem.data as Uint8Array;
}

/**
 * Overwrites witness value `index` in a .wtns (v2) binary: sections are [type u32][size u64][body];
 * section 1 holds n8, the prime and the count, section 2 the values (n8 bytes each, little-endian).
 */
export function setWitnessValue(wtns: Uint8Array, index: number, value: bigint): Uint8Array {
  const out = Uint8Array.from(wtns);
  const view = new DataView(out.buffer);
  const nSections = view.getUint32(8, true);
  let offset = 12;
  let n8 = 0;
  for (let s = 0; s < nSections; s++) {
    const type = view.getUint32(offset, true);
    const size = Number(view.getBigUint64(offset + 4, true));
    const body = offset + 12;
    if (type === 1) n8 = view.getUint32(body, true);
    if (type === 2) {
      let v = value;
      for (let k = 0; k < n8; k++) {
        out[body + index * n8 + k] = Number(v & 0xffn);
        v >>= 8n;
      }
      return out;
    }
    offset = body + size;
  }
  throw new Error("no witness section");
}

/**
 * Runs the witness generator on an input that must violate a constraint and returns the error. The
 * generator prints its own diagnostics to the console; they are silenced here to keep test output clean.
 */
export async function witnessRejection(input: snarkjs.CircuitInput): Promise<Error> {
  const { log, error } = console;
  console.log = () => {};
  console.error = () => {};
  try {
    await witnessOf(input);
  } catch (err) {
    return err as Error;
  } finally {
    console.log = log;
    console.error = error;
  }
  throw new Error("the witness generator accepted an input that violates a constraint");
}
