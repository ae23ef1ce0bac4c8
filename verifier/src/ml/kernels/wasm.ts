/**
 * The WebAssembly SIMD128 kernels (wasm/kernels.wat, built into the committed wasm/kernels.wasm by
 * scripts/build-kernels.ts). Bit for bit the reference kernels (reference.ts): test/ml/kernels.test.ts.
 *
 * The module owns one linear memory; each call copies its operands in at 16-byte-aligned offsets and
 * its result out, so callers keep plain Float32Arrays and nothing aliases wasm memory across calls. Results
 * go into arrays from `uninitializedFloat32` (every element is written before the array is returned), which
 * skips the zero-fill of a fresh Float32Array (~0.1 ms per 1.2 MB, docs/engine.md "Kernel layer").
 */
import { readFileSync } from "node:fs";
import type { Kernels } from "./types.ts";
import { checkAdamShapes, checkMatmulShapes, type AdamScalars, type MatmulLayout } from "./reference.ts";
import { uninitializedFloat32 } from "../tensors.ts";
import { CANONICAL_NAN_BITS } from "./reference-v3.ts";
import { checkMatmul32, type Layout } from "./transformer-ref.ts";
import { scratchF32 } from "./scratch.ts";

export const KERNELS_WASM_URL = new URL("./wasm/kernels.wasm", import.meta.url);

type Exports = {
  memory: WebAssembly.Memory;
  matmul(a: number, b: number, c: number, M: number, K: number, N: number, aRow: number, aInner: number, bInner: number, bCol: number, pa: number, pb: number, ls: number): number;
  adam(w: number, m: number, v: number, g: number, ow: number, om: number, ov: number, n: number,
    b1: number, b2: number, o1: number, o2: number, lr: number, eps: number, c1: number, c2: number): void;
};

const PAGE = 65536;
const align16 = (n: number) => (n + 15) & ~15;

/** Why the SIMD128 module `file` (its bytes) cannot run here, or null when it can: checked by validating the module itself. */
export function wasmModuleUnavailable(bytes: Uint8Array<ArrayBuffer>, file: string): string | null {
  if (typeof WebAssembly !== "object") return "this runtime has no WebAssembly";
  try {
    if (!WebAssembly.validate(bytes)) return `this runtime does not support WebAssembly SIMD128 (${file} does not validate)`;
  } catch (err) {
    return `${file} could not be validated: ${(err as Error).message}`;
  }
  return null;
}

/** Why the wasm kernels cannot run here (null when they can). */
export function wasmKernelsUnavailable(bytes: Uint8Array<ArrayBuffer> = new Uint8Array(readFileSync(KERNELS_WASM_URL))): string | null {
  return wasmModuleUnavailable(bytes, "kernels.wasm");
}

export class WasmKernels implements Kernels {
  readonly name = "wasm-simd128";
  /**
   * Matmuls that took the kernel's sparse path (A less than half nonzero and B finite: the ~0.8 zeros of MNIST
   * pixels; the same bits as the dense path, kernels.wat `$sparse`). Tests check both paths ran.
   */
  sparseCalls = 0;
  private readonly x: Exports;
  private f32: Float32Array;

  /** Throws when the module does not compile here; use `wasmKernelsUnavailable` to ask first. */
  constructor(bytes: Uint8Array<ArrayBuffer> = new Uint8Array(readFileSync(KERNELS_WASM_URL))) {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
    this.x = instance.exports as unknown as Exports;
    this.f32 = new Float32Array(this.x.memory.buffer);
  }

  /** Makes memory at least `bytes` long (views are refreshed: growing detaches the old buffer). */
  private reserve(bytes: number): Float32Array {
    const have = this.x.memory.buffer.byteLength;
    if (bytes > have) this.x.memory.grow(Math.ceil((bytes - have) / PAGE));
    if (this.f32.buffer !== this.x.memory.buffer) this.f32 = new Float32Array(this.x.memory.buffer);
    return this.f32;
  }

  matmul(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: MatmulLayout = "nn"): Float32Array {
    checkMatmulShapes(a, b, M, K, N);
    // an empty inner dimension leaves C at +0 (the kernel needs K >= 1)
    if (K === 0 || M === 0 || N === 0) return new Float32Array(M * N);
    // C comes back with rows of 8 * ceil(N/8) columns (the kernel's column groups; the padding is dropped here)
    const Np = (N + 7) & ~7;
    const aOff = 0;
    const bOff = align16(aOff + 4 * M * K);
    const cOff = align16(bOff + 4 * K * N);
    const paOff = align16(cOff + 4 * M * Np);
    const pbOff = align16(paOff + 8 * M * K);
    const lsOff = align16(pbOff + 8 * K * Np);
    const heap = this.reserve(lsOff + 1024);
    heap.set(a, aOff >> 2);
    heap.set(b, bOff >> 2);
    const [aRow, aInner] = layout === "tn" ? [1, M] : [K, 1];
    const [bInner, bCol] = layout === "nt" ? [1, K] : [N, 1];
    if (this.x.matmul(aOff, bOff, cOff, M, K, N, aRow, aInner, bInner, bCol, paOff, pbOff, lsOff) === 1) this.sparseCalls++;
    const c = uninitializedFloat32(M * N);
    const c0 = cOff >> 2;
    if (Np === N) c.set(heap.subarray(c0, c0 + M * N));
    else for (let i = 0; i < M; i++) c.set(heap.subarray(c0 + i * Np, c0 + i * Np + N), i * N);
    return c;
  }

  adam(s: AdamScalars, c1: number, c2: number, w: Float32Array, m: Float32Array, v: Float32Array, g: Float32Array,
    outW: Float32Array, outM: Float32Array, outV: Float32Array): void {
    checkAdamShapes(w, m, v, g, outW, outM, outV);
    const n = w.length;
    // Chunks of ADAM_CHUNK elements: the four operand chunks (256 KB) stay in cache between the copy in, the kernel
    // and the copy out, where whole tensors (43 MB each for a GPT-class embedding block) went through memory three
    // times. The update is elementwise, so chunking cannot change a bit. The kernel runs in place on the copies
    // (ow = w, om = m, ov = v): kernels.wat reads w, m, v and g at an offset before it stores there.
    const chunk = Math.min(n, ADAM_CHUNK);
    const stride = align16(4 * chunk);
    const heap = this.reserve(4 * stride);
    const [w0, m0, v0, g0] = [0, stride, 2 * stride, 3 * stride];
    for (let from = 0; from < n; from += chunk) {
      const to = Math.min(n, from + chunk), len = to - from;
      heap.set(w.subarray(from, to), w0 >> 2);
      heap.set(m.subarray(from, to), m0 >> 2);
      heap.set(v.subarray(from, to), v0 >> 2);
      heap.set(g.subarray(from, to), g0 >> 2);
      this.x.adam(w0, m0, v0, g0, w0, m0, v0, len, s.beta1, s.beta2, s.oneMinusBeta1, s.oneMinusBeta2, s.lr, s.epsilon, c1, c2);
      outW.set(heap.subarray(w0 >> 2, (w0 >> 2) + len), from);
      outM.set(heap.subarray(m0 >> 2, (m0 >> 2) + len), from);
      outV.set(heap.subarray(v0 >> 2, (v0 >> 2) + len), from);
    }
  }
}

/** Elements per chunk of the wasm Adam update (64 KB per operand). */
const ADAM_CHUNK = 16384;

export const MATMUL_V3_WASM_URL = new URL("./wasm/matmul-v3.wasm", import.meta.url);

/** Rows of A per register tile of matmul-v3.wat (its packed A panels); columns per tile: 8. */
export const V3_MR = 4;
/** matmul-v3.wat's cache blocks: K values per block (the float32 partial sums go through C between blocks) and columns per block. */
export const V3_KC = 512;
export const V3_NC = 512;

type V3Exports = {
  memory: WebAssembly.Memory;
  packA(a: number, aRow: number, aInner: number, M: number, K: number, pa: number, fa: number): void;
  packB(b: number, bCol: number, bInner: number, N: number, K: number, pb: number, fb: number): void;
  gemm(pa: number, pb: number, c: number, Mp: number, K: number, Np: number, kc: number, nc: number): void;
};

/** Why the bitwise-v3 matmul module cannot run here (null when it can). */
export function matmulV3WasmUnavailable(bytes: Uint8Array<ArrayBuffer> = new Uint8Array(readFileSync(MATMUL_V3_WASM_URL))): string | null {
  return wasmModuleUnavailable(bytes, "matmul-v3.wasm");
}

/**
 * The dense matmul of numerics "bitwise-v3" (wasm/matmul-v3.wat): bit for bit `matmulV3Ref` (reference-v3.ts) in
 * every layout and for `count` batched products (test/ml/matmul-v3.test.ts). Per product: A and B are quantized and
 * packed once (integer ops on the bit patterns), the special rows of A and columns of B flagged, the 4x8 register
 * tiles computed, and the canonical NaN written over the flagged rows and columns of C here.
 */
export class WasmMatmulV3 {
  readonly name = "wasm-simd128";
  private readonly x: V3Exports;
  private u32: Uint32Array;
  private u8: Uint8Array;

  /** Throws when the module does not compile here; use `matmulV3WasmUnavailable` to ask first. */
  constructor(bytes: Uint8Array<ArrayBuffer> = new Uint8Array(readFileSync(MATMUL_V3_WASM_URL))) {
    this.x = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports as unknown as V3Exports;
    this.u32 = new Uint32Array(this.x.memory.buffer);
    this.u8 = new Uint8Array(this.x.memory.buffer);
  }

  private reserve(bytes: number): void {
    const have = this.x.memory.buffer.byteLength;
    if (bytes > have) this.x.memory.grow(Math.ceil((bytes - have) / PAGE));
    if (this.u32.buffer !== this.x.memory.buffer) {
      this.u32 = new Uint32Array(this.x.memory.buffer);
      this.u8 = new Uint8Array(this.x.memory.buffer);
    }
  }

  matmul(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout = "nn", count = 1): Float32Array {
    checkMatmul32(a, b, M, K, N, count);
    // scratch (scratch.ts) inside a transformer pass: every element is written below
    const out = scratchF32(count * M * N);
    let unit = 0;
    this.matmulUnits(a, b, M, K, N, layout, count, new Uint32Array(out.buffer, out.byteOffset, out.length), Math.max(1, M), () => unit++);
    return out;
  }

  /**
   * The units of `count` products C_q = A_q . B_q that `claim()` hands out, written into `out` (the bits of C, [count,
   * M, N]); `claim` returns unit numbers in any order and one >= the unit count when none is left. A unit is one
   * product when count > 1, else `unitRows` rows of C. Threads share a product this way (threads.ts): each thread
   * claims units until none is left, so a thread the OS runs less takes fewer. Which thread computes a row cannot
   * change its bits: every element is one sequential k sum of its own row of A and column of B, and its canonical NaN
   * depends on that row and column alone (rule 3). B (or B_q) is packed once per run of consecutive units of one
   * product. Returns the units it computed.
   */
  matmulUnits(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout, count: number, out: Uint32Array, unitRows: number, claim: () => number): number[] {
    checkMatmul32(a, b, M, K, N, count);
    if (layout !== "nn" && layout !== "tn" && layout !== "nt") throw new RangeError(`matmulV3: layout must be nn, tn or nt, got ${String(layout)}`);
    if (out.length !== count * M * N) throw new RangeError(`matmulV3: out has ${out.length} elements, C has ${count * M * N}`);
    if (!Number.isInteger(unitRows) || unitRows < 1) throw new RangeError(`matmulV3: unitRows must be a positive integer, got ${unitRows}`);
    const rowsPer = count > 1 ? M : Math.min(unitRows, M);
    const units = count > 1 ? count : M === 0 ? 0 : Math.ceil(M / rowsPer);
    const done: number[] = [];
    // no inner dimension: every sum is the +0 it starts from (and no operand can be special)
    if (K === 0 || out.length === 0) {
      for (let u = claim(); u < units; u = claim()) {
        const [q, i0, rows] = count > 1 ? [u, 0, M] : [0, u * rowsPer, Math.min(rowsPer, M - u * rowsPer)];
        out.fill(0, (q * M + i0) * N, (q * M + i0 + rows) * N);
        done.push(u);
      }
      return done;
    }
    const Mp = Math.ceil(rowsPer / V3_MR) * V3_MR;
    const Np = (N + 7) & ~7;
    const aOff = 0;
    const bOff = align16(aOff + 4 * a.length);
    const paOff = align16(bOff + 4 * b.length);
    const pbOff = align16(paOff + 4 * Mp * K);
    const cOff = align16(pbOff + 4 * K * Np);
    const faOff = align16(cOff + 4 * Mp * Np);
    const fbOff = align16(faOff + Mp);
    if (fbOff + N > 2 ** 32 - PAGE) throw new RangeError(`matmulV3: a ${count} x ${M}x${K}x${N} product needs more than 4 GiB of wasm memory`);
    let copied = false;
    let packedQ = -1;
    const [aRow, aInner] = layout === "tn" ? [1, M] : [K, 1];
    const [bInner, bCol] = layout === "nt" ? [1, K] : [N, 1];
    for (let u = claim(); u < units; u = claim()) {
      if (!copied) {
        // operands are copied in once, at the first unit this thread claims
        this.reserve(fbOff + N);
        this.u32.set(new Uint32Array(a.buffer, a.byteOffset, a.length), aOff >> 2);
        this.u32.set(new Uint32Array(b.buffer, b.byteOffset, b.length), bOff >> 2);
        copied = true;
      }
      const [q, i0, rows] = count > 1 ? [u, 0, M] : [0, u * rowsPer, Math.min(rowsPer, M - u * rowsPer)];
      if (q !== packedQ) {
        this.x.packB(bOff + 4 * q * K * N, bCol, bInner, N, K, pbOff, fbOff);
        packedQ = q;
      }
      this.x.packA(aOff + 4 * (q * M * K + i0 * aRow), aRow, aInner, rows, K, paOff, faOff);
      this.x.gemm(paOff, pbOff, cOff, Math.ceil(rows / V3_MR) * V3_MR, K, Np, V3_KC, V3_NC);
      const c0 = cOff >> 2, o0 = (q * M + i0) * N;
      if (Np === N) out.set(this.u32.subarray(c0, c0 + rows * N), o0);
      else for (let i = 0; i < rows; i++) out.set(this.u32.subarray(c0 + i * Np, c0 + i * Np + N), o0 + i * N);
      const fa = this.u8.subarray(faOff, faOff + rows), fb = this.u8.subarray(fbOff, fbOff + N);
      if (fa.includes(1) || fb.includes(1)) {
        // rule 3: an element whose row of A or column of B holds a special operand is the canonical NaN
        for (let i = 0; i < rows; i++) {
          for (let j = 0; j < N; j++) if (fa[i] || fb[j]) out[o0 + i * N + j] = CANONICAL_NAN_BITS;
        }
      }
      done.push(u);
    }
    return done;
  }
}
