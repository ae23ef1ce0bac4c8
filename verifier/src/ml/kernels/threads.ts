/**
 * Multi-threaded kernels that cannot change bits: `ThreadedKernels(threads, base)` splits each large
 * matmul by output rows into `threads` tiles; tile 0 runs on the calling thread and every other tile on
 * its own worker_threads worker, each with the same kind of kernels as `base` (wasm SIMD128 or the JS
 * reference). A tile is an ordinary matmul of a slice of the rows of C, and every element of C is computed
 * by one kernel in the reference order (reference.ts matmulRef: the order of an element depends on its
 * inner-dimension blocks only, never on M or on the row tiling), so C is the same bit for bit at any thread
 * count: an auditor with one core recomputes a provider's 16-thread run exactly
 * (test/ml/threads.test.ts). Adam and the elementwise ops stay on the calling thread.
 *
 * `matmulV3` splits the numerics "bitwise-v3" matmul (reference-v3.ts) the same way: a tile is the product of
 * some rows of A (of every batch) with all of B. Its bits cannot depend on the tiling: every element is one
 * sequential k sum from +0, and an element's canonical NaN depends only on its own row of A (in the tile) and
 * its own column of B (all of B is in every tile) (test/ml/matmul-v3.test.ts).
 *
 * The calls stay synchronous: operands go to each worker through its own SharedArrayBuffer, the worker
 * is woken with Atomics.notify and the caller blocks in Atomics.wait until every tile is back. Workers
 * are unref'd (they never keep the process alive); `close()` ends them.
 */
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { checkAdamShapes, checkMatmulShapes, type AdamScalars, type MatmulLayout } from "./reference.ts";
import { matmulV3Ref } from "./reference-v3.ts";
import { checkMatmul32, type Layout } from "./transformer-ref.ts";
import type { Kernels } from "./types.ts";
import { WasmMatmulV3 } from "./wasm.ts";
import { scratchF32 } from "./scratch.ts";

/** A matmul below this many multiply-adds runs on the calling thread (waking workers costs ~10-50 us). */
export const THREAD_MIN_MACS = 1 << 18;
export const MAX_THREADS = 64;

/** Control words per worker (Int32Array over a SharedArrayBuffer). */
const SEQ = 0;
const DONE = 1;
const FAILED = 2;

export type TileJob = {
  seq: number;
  /** "v3": the bitwise-v3 matmul of `count` batches (matmulV3Ref's bits); absent: the base kernels' matmul. */
  op?: "v3";
  count?: number;
  /** Set when the data buffer was (re)allocated. */
  data?: SharedArrayBuffer;
  M: number;
  K: number;
  N: number;
  layout: MatmulLayout | Layout;
  /** Float32 element offsets into the data buffer. */
  aOff: number;
  bOff: number;
  cOff: number;
};

type Slot = { worker: Worker; port: MessagePort; ctrl: Int32Array; data: SharedArrayBuffer | null; seq: number; sent: SharedArrayBuffer | null };

export class ThreadedKernels implements Kernels {
  readonly name: string;
  readonly threads: number;
  /** Matmuls split across threads so far (tests check the workers really ran). */
  dispatched = 0;
  private readonly base: Kernels;
  private readonly minMacs: number;
  private readonly slots: Slot[] = [];
  private v3: ((a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout, count: number) => Float32Array) | null = null;

  /**
   * `threads` >= 1 (1: no workers, `base` alone); `base` must be a wasm-simd128 or js kernel set (workers
   * build their own of the same name). `minMacs`: the split threshold (tests pass 0 to split every product).
   */
  constructor(threads: number, base: Kernels, options: { minMacs?: number } = {}) {
    if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) throw new RangeError(`threads must be an integer in [1, ${MAX_THREADS}], got ${threads}`);
    if (base.name !== "wasm-simd128" && base.name !== "js") throw new RangeError(`threaded kernels need wasm-simd128 or js base kernels, not ${base.name}`);
    this.base = base;
    this.threads = threads;
    this.minMacs = options.minMacs ?? THREAD_MIN_MACS;
    this.name = threads === 1 ? base.name : `${base.name} x${threads} threads`;
    for (let w = 1; w < threads; w++) {
      const ctrl = new Int32Array(new SharedArrayBuffer(16));
      const { port1, port2 } = new MessageChannel();
      const worker = new Worker(new URL("./thread-worker.ts", import.meta.url), {
        workerData: { ctrl: ctrl.buffer, port: port2, kernels: base.name },
        transferList: [port2],
      });
      worker.unref();
      port1.unref();
      this.slots.push({ worker, port: port1, ctrl, data: null, seq: 0, sent: null });
    }
  }

  matmul(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: MatmulLayout = "nn"): Float32Array {
    checkMatmulShapes(a, b, M, K, N);
    const tiles = Math.min(this.threads, M);
    if (tiles <= 1 || M * K * N < this.minMacs) return this.base.matmul(a, b, M, K, N, layout);
    const c = new Float32Array(M * N);
    // rows [bounds[t], bounds[t+1]) of C go to tile t
    const bounds = Array.from({ length: tiles + 1 }, (_, t) => Math.floor((t * M) / tiles));
    const started: { slot: Slot; i0: number; rows: number; cOff: number }[] = [];
    for (let t = 1; t < tiles; t++) {
      const slot = this.slots[t - 1]!;
      const [i0, i1] = [bounds[t]!, bounds[t + 1]!];
      const rows = i1 - i0;
      const aOff = 0;
      const bOff = rows * K;
      const cOff = bOff + K * N;
      const need = 4 * (cOff + rows * N);
      if (!slot.data || slot.data.byteLength < need) slot.data = new SharedArrayBuffer(Math.max(need, 2 * (slot.data?.byteLength ?? 0)));
      const heap = new Float32Array(slot.data);
      if (layout === "tn") {
        // A^T stored [K, M]: the tile's rows of A are columns i0..i1 of a; stored [K, rows] for the worker
        for (let k = 0; k < K; k++) heap.set(a.subarray(k * M + i0, k * M + i1), aOff + k * rows);
      } else {
        heap.set(a.subarray(i0 * K, i1 * K), aOff);
      }
      heap.set(b, bOff);
      slot.seq++;
      this.post(slot, { seq: slot.seq, M: rows, K, N, layout, aOff, bOff, cOff });
      started.push({ slot, i0, rows, cOff });
    }
    // tile 0 on this thread, meanwhile
    const r0 = bounds[1]!;
    const a0 = layout === "tn" ? gatherColumns(a, K, M, 0, r0) : a.subarray(0, r0 * K);
    c.set(this.base.matmul(a0, b, r0, K, N, layout), 0);
    for (const { slot, i0, rows, cOff } of started) {
      this.await(slot, `${rows}x${K}x${N}`);
      c.set(new Float32Array(slot.data!, 4 * cOff, rows * N), i0 * N);
    }
    this.dispatched++;
    return c;
  }

  /** Hands `job` to `slot`'s worker (its shared buffer once per buffer) and wakes it. */
  private post(slot: Slot, job: TileJob): void {
    if (slot.data && slot.sent !== slot.data) {
      job.data = slot.data;
      slot.sent = slot.data;
    }
    slot.port.postMessage(job);
    Atomics.store(slot.ctrl, SEQ, slot.seq);
    Atomics.notify(slot.ctrl, SEQ);
  }

  /**
   * `count` products C_q = A_q . B_q in numerics bitwise-v3 (matmulV3Ref's bits; layouts as there), split by rows of
   * C over the threads; the kernels are the wasm module (WasmMatmulV3) for a wasm-simd128 base, the reference for js.
   */
  matmulV3(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout = "nn", count = 1): Float32Array {
    checkMatmul32(a, b, M, K, N, count);
    const local = (this.v3 ??= this.base.name === "js" ? matmulV3Ref : v3Of(new WasmMatmulV3()));
    const tiles = Math.min(this.threads, M);
    if (tiles <= 1 || count * M * K * N < this.minMacs) return local(a, b, M, K, N, layout, count);
    const c = scratchF32(count * M * N); // scratch.ts; the tiles' rows cover every element of every batch
    const bounds = Array.from({ length: tiles + 1 }, (_, t) => Math.floor((t * M) / tiles));
    const started: { slot: Slot; i0: number; rows: number; cOff: number }[] = [];
    for (let t = 1; t < tiles; t++) {
      const slot = this.slots[t - 1]!;
      const [i0, i1] = [bounds[t]!, bounds[t + 1]!];
      const rows = i1 - i0;
      const aOff = 0;
      const bOff = count * rows * K;
      const cOff = bOff + count * K * N;
      const need = 4 * (cOff + count * rows * N);
      if (!slot.data || slot.data.byteLength < need) slot.data = new SharedArrayBuffer(Math.max(need, 2 * (slot.data?.byteLength ?? 0)));
      const heap = new Float32Array(slot.data);
      heap.set(rowsOfA(a, M, K, layout, count, i0, i1), aOff);
      heap.set(b, bOff);
      slot.seq++;
      this.post(slot, { seq: slot.seq, op: "v3", count, M: rows, K, N, layout, aOff, bOff, cOff });
      started.push({ slot, i0, rows, cOff });
    }
    const r0 = bounds[1]!;
    scatterRows(c, local(rowsOfA(a, M, K, layout, count, 0, r0), b, r0, K, N, layout, count), M, N, count, 0, r0);
    for (const { slot, i0, rows, cOff } of started) {
      this.await(slot, `${count} x ${rows}x${K}x${N} bitwise-v3`);
      scatterRows(c, new Float32Array(slot.data!, 4 * cOff, count * rows * N), M, N, count, i0, rows);
    }
    this.dispatched++;
    return c;
  }

  /** Blocks until the worker of `slot` has finished its current job; throws when it failed. */
  private await(slot: Slot, what: string): void {
    for (;;) {
      const done = Atomics.load(slot.ctrl, DONE);
      if (done === slot.seq) break;
      Atomics.wait(slot.ctrl, DONE, done, 10_000);
      if (Atomics.load(slot.ctrl, FAILED) !== 0) throw new Error(`matmul worker failed on a ${what} tile (see its stderr)`);
    }
  }

  adam(s: AdamScalars, c1: number, c2: number, w: Float32Array, m: Float32Array, v: Float32Array, g: Float32Array,
    outW: Float32Array, outM: Float32Array, outV: Float32Array): void {
    checkAdamShapes(w, m, v, g, outW, outM, outV);
    this.base.adam(s, c1, c2, w, m, v, g, outW, outM, outV);
  }

  /** Ends the workers (idempotent). The kernels run on the calling thread alone afterwards. */
  async close(): Promise<void> {
    const slots = this.slots.splice(0);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }
}

/** Columns i0..i1 of a row-major [K, M] array, as a row-major [K, i1-i0] array. */
function gatherColumns(a: Float32Array, K: number, M: number, i0: number, i1: number): Float32Array {
  const rows = i1 - i0;
  if (rows === M) return a;
  const out = new Float32Array(K * rows);
  for (let k = 0; k < K; k++) out.set(a.subarray(k * M + i0, k * M + i1), k * rows);
  return out;
}

const v3Of = (k: WasmMatmulV3) => (a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout, count: number) =>
  k.matmul(a, b, M, K, N, layout, count);

/**
 * Rows i0..i1 of every one of the `count` A operands (each [M,K], or [K,M] stored for "tn"), as `count` operands
 * of i1-i0 rows in the same layout (a copy: no element changes).
 */
export function rowsOfA(a: Float32Array, M: number, K: number, layout: Layout, count: number, i0: number, i1: number): Float32Array {
  const rows = i1 - i0;
  if (rows === M) return a;
  const out = new Float32Array(count * rows * K);
  for (let q = 0; q < count; q++) {
    const src = a.subarray(q * M * K, (q + 1) * M * K), dst = out.subarray(q * rows * K, (q + 1) * rows * K);
    if (layout === "tn") dst.set(gatherColumns(src, K, M, i0, i1));
    else dst.set(src.subarray(i0 * K, i1 * K));
  }
  return out;
}

/** Writes `count` tiles of `rows` rows of C (tile [count, rows, N]) at row i0 of every [M,N] block of c. */
function scatterRows(c: Float32Array, tile: Float32Array, M: number, N: number, count: number, i0: number, rows: number): void {
  for (let q = 0; q < count; q++) c.set(tile.subarray(q * rows * N, (q + 1) * rows * N), (q * M + i0) * N);
}
