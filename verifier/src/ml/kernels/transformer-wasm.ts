/**
 * The bitwise-v2 transformer kernels in WebAssembly SIMD128 (wasm/transformer.wat, built into the
 * committed wasm/transformer.wasm by scripts/build-kernels.ts): the matmuls in every layout, exp and
 * the causal softmax with its backward pass. Bit for bit the reference (transformer-ref.ts):
 * test/ml/transformer-kernels.test.ts. Layer norm runs the JS reference (its row sums are folds, which
 * a column-vectorised kernel cannot reorder; a row-per-lane kernel is not written yet).
 *
 * The module owns one linear memory; each call copies its operands in at 16-byte-aligned offsets (with
 * 16 bytes of padding, which the softmax kernels may read past a row end) and its result out.
 */
import { readFileSync } from "node:fs";
import { causalSoftmaxBackRef, checkMatmul32, layerNormBackRef, layerNormRef, type Layout } from "./transformer-ref.ts";
import type { TransformerKernels } from "./transformer.ts";
import { wasmModuleUnavailable } from "./wasm.ts";
import { scratchF32 } from "./scratch.ts";

export const TRANSFORMER_WASM_URL = new URL("./wasm/transformer.wasm", import.meta.url);

type Exports = {
  memory: WebAssembly.Memory;
  transpose(src: number, dst: number, rows: number, cols: number, count: number): void;
  matmul(a: number, b: number, c: number, M: number, K: number, N: number, aRow: number, aInner: number, count: number): void;
  exp(x: number, n: number): void;
  causalSoftmax(s: number, p: number, T: number, count: number): void;
  causalSoftmaxBack(p: number, dp: number, ds: number, T: number, count: number): void;
};

const PAGE = 65536;
const slot = (elements: number) => (4 * elements + 16 + 15) & ~15;

/** Why the module cannot run here (null when it can). */
export function transformerWasmUnavailable(bytes: Uint8Array<ArrayBuffer> = new Uint8Array(readFileSync(TRANSFORMER_WASM_URL))): string | null {
  return wasmModuleUnavailable(bytes, "transformer.wasm");
}

export class WasmTransformerKernels implements TransformerKernels {
  readonly name = "wasm-simd128";
  private readonly x: Exports;
  private f32: Float32Array;

  constructor(bytes: Uint8Array<ArrayBuffer> = new Uint8Array(readFileSync(TRANSFORMER_WASM_URL))) {
    this.x = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports as unknown as Exports;
    this.f32 = new Float32Array(this.x.memory.buffer);
  }

  private reserve(bytes: number): Float32Array {
    const have = this.x.memory.buffer.byteLength;
    if (bytes > have) this.x.memory.grow(Math.ceil((bytes - have) / PAGE));
    if (this.f32.buffer !== this.x.memory.buffer) this.f32 = new Float32Array(this.x.memory.buffer);
    return this.f32;
  }

  matmul(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout = "nn", count = 1): Float32Array {
    checkMatmul32(a, b, M, K, N, count);
    const aOff = 0;
    const bOff = aOff + slot(a.length);
    const tOff = bOff + slot(b.length);
    const cOff = tOff + (layout === "nt" ? slot(b.length) : 0);
    const heap = this.reserve(cOff + slot(count * M * N));
    heap.set(a, aOff >> 2);
    heap.set(b, bOff >> 2);
    let bAt = bOff;
    if (layout === "nt") {
      // B stored [N,K] per block -> [K,N]: a copy, so no element's arithmetic changes
      this.x.transpose(bOff, tOff, N, K, count);
      bAt = tOff;
    }
    heap.fill(0, cOff >> 2, (cOff >> 2) + count * M * N); // the kernel accumulates into C from +0
    const [aRow, aInner] = layout === "tn" ? [1, M] : [K, 1];
    this.x.matmul(aOff, bAt, cOff, M, K, N, aRow, aInner, count);
    return copyOut(heap, cOff >> 2, (cOff >> 2) + count * M * N);
  }

  /** exp32 of every element (tests and the softmax kernels' building block). */
  exp(x: Float32Array): Float32Array {
    const heap = this.reserve(slot(x.length));
    heap.set(x, 0);
    this.x.exp(0, x.length);
    return copyOut(heap, 0, x.length);
  }

  causalSoftmax(s: Float32Array, T: number, count: number): Float32Array {
    if (s.length !== count * T * T) throw new RangeError(`causalSoftmax: ${s.length} scores, ${count} x [${T},${T}] needs ${count * T * T}`);
    const pOff = slot(s.length);
    const heap = this.reserve(pOff + slot(s.length));
    heap.set(s, 0);
    this.x.causalSoftmax(0, pOff, T, count);
    return copyOut(heap, pOff >> 2, (pOff >> 2) + s.length);
  }

  causalSoftmaxBack(p: Float32Array, dp: Float32Array, T: number, count: number): Float32Array {
    if (p.length !== count * T * T || dp.length !== p.length) return causalSoftmaxBackRef(p, dp, T, count); // throws the reference's error
    const dpOff = slot(p.length);
    const dsOff = dpOff + slot(p.length);
    const heap = this.reserve(dsOff + slot(p.length));
    heap.set(p, 0);
    heap.set(dp, dpOff >> 2);
    this.x.causalSoftmaxBack(0, dpOff, dsOff, T, count);
    return copyOut(heap, dsOff >> 2, (dsOff >> 2) + p.length);
  }

  layerNorm = layerNormRef;
  layerNormBack = layerNormBackRef;
}

/** heap[from, to) copied into a scratch array (scratch.ts; a fresh one outside a pass): every element written. */
function copyOut(heap: Float32Array, from: number, to: number): Float32Array {
  const out = scratchF32(to - from);
  out.set(heap.subarray(from, to));
  return out;
}
