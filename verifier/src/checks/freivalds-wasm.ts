/**
 * The Freivalds check's float64 matrix-vector loops (freivalds.ts rowDots / colDots) in WebAssembly
 * SIMD128 (verifier/src/ml/kernels/wasm/freivalds.wat, built into the committed freivalds.wasm by
 * scripts/build-kernels.ts). Same summation order as the JS loops, so the same residuals and bounds bit for
 * bit (test/checks/freivalds-wasm.test.ts); about 2-4x faster here, and the JS loops remain the fallback
 * where the runtime has no SIMD128.
 *
 * The module owns one linear memory; each call copies its operands in and its results out.
 */
import { readFileSync } from "node:fs";
import { wasmModuleUnavailable } from "../ml/kernels/wasm.ts";

export const FREIVALDS_WASM_URL = new URL("../ml/kernels/wasm/freivalds.wasm", import.meta.url);

type Loop = (m: number, rows: number, cols: number, v: number, k: number, w: number, out: number, abs: number) => void;
type Exports = { memory: WebAssembly.Memory; rowdots: Loop; coldots: Loop };

const PAGE = 65536;
const align16 = (n: number) => (n + 15) & ~15;

/** The signature both loops share: see freivalds.ts rowDots / colDots (w = null: all ones). */
export type DotLoop = (m: Float32Array, rows: number, cols: number, v: Float64Array, k: number, w: Float64Array | null, out: Float64Array, absOut: Float64Array) => void;

export class FreivaldsWasm {
  private readonly x: Exports;
  private buf: ArrayBuffer;
  private ones = new Float64Array(0);

  /** Throws when the module does not compile here (no SIMD128); see `freivaldsWasm()`. */
  constructor(bytes: Uint8Array<ArrayBuffer> = new Uint8Array(readFileSync(FREIVALDS_WASM_URL))) {
    this.x = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports as unknown as Exports;
    this.buf = this.x.memory.buffer;
  }

  private reserve(bytes: number): ArrayBuffer {
    const have = this.x.memory.buffer.byteLength;
    if (bytes > have) this.x.memory.grow(Math.ceil((bytes - have) / PAGE));
    this.buf = this.x.memory.buffer;
    return this.buf;
  }

  private onesOf(n: number): Float64Array {
    if (this.ones.length < n) this.ones = new Float64Array(n).fill(1);
    return this.ones.subarray(0, n);
  }

  /** out[i*k+t] = sum_j M[i,j] v[j*k+t], absOut[i] = sum_j |M[i,j]| w[j]; M is rows x cols. */
  readonly rowDots: DotLoop = (m, rows, cols, v, k, w, out, absOut) => this.call("rowdots", m, rows, cols, v, k, w ?? this.onesOf(cols), out, absOut, cols);

  /** out[l*k+t] = sum_j S[j,l] v[j*k+t], absOut[l] = sum_j |S[j,l]| w[j]; S is stored rows x cols. */
  readonly colDots: DotLoop = (m, rows, cols, v, k, w, out, absOut) => this.call("coldots", m, rows, cols, v, k, w ?? this.onesOf(rows), out, absOut, rows);

  private call(fn: "rowdots" | "coldots", m: Float32Array, rows: number, cols: number, v: Float64Array, k: number, w: Float64Array,
    out: Float64Array, absOut: Float64Array, wLen: number): void {
    if (m.length !== rows * cols) throw new RangeError(`freivalds ${fn}: matrix has ${m.length} values, ${rows} x ${cols} needs ${rows * cols}`);
    if (w.length !== wLen) throw new RangeError(`freivalds ${fn}: ${w.length} weights, need ${wLen}`);
    const mOff = 0;
    const vOff = align16(mOff + 4 * m.length);
    // one float64 of padding past v: rowdots reads it alongside an odd last vector (and discards it)
    const wOff = align16(vOff + 8 * (v.length + 1));
    const oOff = align16(wOff + 8 * w.length);
    const aOff = align16(oOff + 8 * out.length);
    const buf = this.reserve(aOff + 8 * absOut.length);
    new Float32Array(buf, mOff, m.length).set(m);
    new Float64Array(buf, vOff, v.length + 1).set(v);
    new Float64Array(buf, wOff, w.length).set(w);
    const o = new Float64Array(buf, oOff, out.length);
    const a = new Float64Array(buf, aOff, absOut.length);
    if (fn === "coldots") {
      o.fill(0);
      a.fill(0);
    }
    this.x[fn](mOff, rows, cols, vOff, k, wOff, oOff, aOff);
    out.set(o);
    absOut.set(a);
  }
}

let shared: FreivaldsWasm | null | undefined;
let unavailable: string | null = null;

/** The process's wasm loops, or null (with `freivaldsWasmUnavailable()` saying why) where they cannot run. */
export function freivaldsWasm(): FreivaldsWasm | null {
  if (shared !== undefined) return shared;
  try {
    const bytes = new Uint8Array(readFileSync(FREIVALDS_WASM_URL));
    unavailable = wasmModuleUnavailable(bytes, "freivalds.wasm");
    shared = unavailable === null ? new FreivaldsWasm(bytes) : null;
  } catch (err) {
    unavailable = `freivalds.wasm could not be loaded: ${(err as Error).message}`;
    shared = null;
  }
  return shared;
}

export function freivaldsWasmUnavailable(): string | null {
  freivaldsWasm();
  return unavailable;
}
