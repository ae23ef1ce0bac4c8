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
 * `matmulV3` shares the numerics "bitwise-v3" matmul (reference-v3.ts) differently: it is cut into units (one
 * product of a batch, or some rows of C) that every thread, the caller included, claims from a shared counter
 * until none is left (see the method). Its bits cannot depend on which thread computes which unit: every element
 * is one sequential k sum from +0, and an element's canonical NaN depends only on its own row of A and its own
 * column of B (test/ml/matmul-v3.test.ts).
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
  /**
   * "v3": units of a bitwise-v3 product of `count` batches (matmulV3Ref's bits) claimed through the gate words of
   * call `call` (ThreadedKernels.matmulV3); absent: a tile of the base kernels' matmul.
   */
  op?: "v3";
  count?: number;
  call?: number;
  unitRows?: number;
  /** Set once: the gate words of bitwise-v3 calls. */
  gate?: SharedArrayBuffer;
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

/**
 * Gate words of a bitwise-v3 call (Int32Array over a SharedArrayBuffer shared by every thread): GATE holds the call
 * number << GATE_SHIFT, the closed bit and the count of workers that joined; CLAIM the next unit; LEFT how many joined
 * workers have finished; FAIL the call number of a failed worker part.
 */
export const GATE = 0;
export const CLAIM = 1;
export const LEFT = 2;
/** Set to the call number by a worker whose part of that call failed (before it leaves). */
export const FAIL = 3;
export const GATE_SHIFT = 8;
export const GATE_CLOSED = 0x80;
export const GATE_JOINED_MASK = 0x7f;
const GATE_CALL_MASK = 0x7fffff;

/** Rows of C per unit of a single bitwise-v3 product: about four units per thread, whole 4-row panels, >= 16 rows. */
export function unitRowsFor(M: number, threads: number): number {
  if (threads <= 1) return Math.max(1, M);
  return Math.max(16, Math.ceil(M / (4 * threads) / 4) * 4);
}

/** A bitwise-v3 kernel that computes claimed units of a product (WasmMatmulV3, or RefUnits for the js base). */
export type UnitKernel = {
  matmulUnits(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout, count: number, out: Uint32Array, unitRows: number, claim: () => number): number[];
};

/** matmulV3Ref by units (the js base's UnitKernel): each unit is the reference product of its rows of A with B_q. */
export class RefUnits implements UnitKernel {
  matmulUnits(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout, count: number, out: Uint32Array, unitRows: number, claim: () => number): number[] {
    const rowsPer = count > 1 ? M : Math.min(unitRows, M);
    const units = count > 1 ? count : M === 0 ? 0 : Math.ceil(M / rowsPer);
    const done: number[] = [];
    for (let u = claim(); u < units; u = claim()) {
      const [q, i0, rows] = count > 1 ? [u, 0, M] : [0, u * rowsPer, Math.min(rowsPer, M - u * rowsPer)];
      const aq = a.subarray(q * M * K, (q + 1) * M * K), bq = b.subarray(q * K * N, (q + 1) * K * N);
      const cq = matmulV3Ref(rowsOfA(aq, M, K, layout, 1, i0, i0 + rows), bq, rows, K, N, layout, 1);
      out.set(new Uint32Array(cq.buffer, cq.byteOffset, cq.length), (q * M + i0) * N);
      done.push(u);
    }
    return done;
  }
}

/**
 * A worker's part of bitwise-v3 call `call`: joins through the gate (unless the call has closed or moved on), claims
 * units until none is left, writes them into the shared C, and leaves. Returns the units it computed.
 */
export function joinV3Call(gate: Int32Array, call: number, kernel: UnitKernel, heap: Float32Array, job: TileJob): number[] {
  let g = Atomics.load(gate, GATE);
  for (;;) {
    if (g >>> GATE_SHIFT !== call || (g & GATE_CLOSED) !== 0) return [];
    const was = Atomics.compareExchange(gate, GATE, g, g + 1);
    if (was === g) break;
    g = was;
  }
  try {
    const { M, K, N, layout, aOff, bOff, cOff } = job;
    const count = job.count!;
    const a = heap.subarray(aOff, aOff + count * M * K), b = heap.subarray(bOff, bOff + count * K * N);
    const out = new Uint32Array(heap.buffer, heap.byteOffset + 4 * cOff, count * M * N);
    return kernel.matmulUnits(a, b, M, K, N, layout as Layout, count, out, job.unitRows!, () => Atomics.add(gate, CLAIM, 1));
  } catch (err) {
    Atomics.store(gate, FAIL, call); // before LEFT: the caller must not take this worker's units
    throw err;
  } finally {
    Atomics.add(gate, LEFT, 1);
    Atomics.notify(gate, LEFT);
  }
}

type Slot = { worker: Worker; port: MessagePort; ctrl: Int32Array; data: SharedArrayBuffer | null; seq: number; sent: SharedArrayBuffer | null };

export class ThreadedKernels implements Kernels {
  readonly name: string;
  readonly threads: number;
  /** Matmuls split across threads so far (tests check the workers really ran). */
  dispatched = 0;
  /** bitwise-v3 units computed by the workers so far, and by every thread (bench/threads.ts reports the share). */
  unitsByWorkers = 0;
  unitsTotal = 0;
  private readonly base: Kernels;
  private readonly minMacs: number;
  private readonly slots: Slot[] = [];
  private v3: UnitKernel | null = null;
  /** bitwise-v3 calls: the shared operand buffer, the call number and the gate words (see matmulV3). */
  private shared: SharedArrayBuffer | null = null;
  private call = 0;
  private readonly gate = new Int32Array(new SharedArrayBuffer(16));

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
   * `count` products C_q = A_q . B_q in numerics bitwise-v3 (matmulV3Ref's bits; layouts as there), shared by the
   * calling thread and the workers through a claim counter: the product is cut into units (one product of a batch,
   * or for one product `unitRowsFor` rows of C) and every thread claims units until none is left, so a thread the OS
   * runs less (a loaded machine) takes fewer, and the call never waits for a worker that has not started: the
   * calling thread closes the call when the units are gone, and only workers that joined before are waited for.
   * The kernels are WasmMatmulV3 for a wasm-simd128 base, the reference for js. Which thread computes a unit changes
   * no bit (WasmMatmulV3.matmulUnits).
   *
   * INVARIANT: no worker reads the shared operands of call c after the call returns: a worker computes only after
   * joining through the gate word (call c, not closed), and the call waits until every joined worker has left.
   */
  matmulV3(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout = "nn", count = 1): Float32Array {
    checkMatmul32(a, b, M, K, N, count);
    const local = (this.v3 ??= this.base.name === "js" ? new RefUnits() : new WasmMatmulV3());
    const c = scratchF32(count * M * N); // scratch.ts; the units cover every element of every batch
    const out = new Uint32Array(c.buffer, c.byteOffset, c.length);
    const unitRows = unitRowsFor(M, this.threads);
    const units = count > 1 ? count : Math.ceil(M / unitRows);
    if (this.threads <= 1 || units <= 1 || count * M * K * N < this.minMacs) {
      let u = 0;
      local.matmulUnits(a, b, M, K, N, layout, count, out, unitRows, () => u++);
      return c;
    }
    // the shared buffer: A, then B, then C; operands copied in once per call
    const [aLen, bLen, cLen] = [a.length, b.length, c.length];
    const need = 4 * (aLen + bLen + cLen);
    if (!this.shared || this.shared.byteLength < need) this.shared = new SharedArrayBuffer(Math.max(need, 2 * (this.shared?.byteLength ?? 0)));
    const heap = new Float32Array(this.shared);
    heap.set(a, 0);
    heap.set(b, aLen);
    const call = (this.call = (this.call + 1) & GATE_CALL_MASK) || (this.call = 1);
    const gate = this.gate;
    Atomics.store(gate, CLAIM, 0);
    Atomics.store(gate, LEFT, 0);
    Atomics.store(gate, GATE, call << GATE_SHIFT);
    for (const slot of this.slots) {
      slot.seq++;
      const job: TileJob = { seq: slot.seq, op: "v3", call, count, M, K, N, layout, aOff: 0, bOff: aLen, cOff: aLen + bLen, unitRows };
      if (slot.sent !== this.shared) {
        job.data = this.shared;
        job.gate = gate.buffer as SharedArrayBuffer;
        slot.sent = this.shared;
      }
      slot.port.postMessage(job);
      Atomics.store(slot.ctrl, SEQ, slot.seq);
      Atomics.notify(slot.ctrl, SEQ);
    }
    const mine = local.matmulUnits(a, b, M, K, N, layout, count, out, unitRows, () => Atomics.add(gate, CLAIM, 1));
    // close the gate: a worker that has not joined by now never will for this call
    let g = Atomics.load(gate, GATE);
    for (let was = Atomics.compareExchange(gate, GATE, g, g | GATE_CLOSED); was !== g; was = Atomics.compareExchange(gate, GATE, g, g | GATE_CLOSED)) g = was;
    const joined = g & GATE_JOINED_MASK;
    for (let left = Atomics.load(gate, LEFT); left < joined; left = Atomics.load(gate, LEFT)) Atomics.wait(gate, LEFT, left, 10_000);
    if (Atomics.load(gate, FAIL) === call) throw new Error(`matmul worker failed on a ${count} x ${M}x${K}x${N} bitwise-v3 product (see its stderr)`);
    this.unitsTotal += units;
    this.unitsByWorkers += units - mine.length;
    if (mine.length < units) {
      // the workers' units, from the shared C
      const ours = new Uint8Array(units);
      for (const u of mine) ours[u] = 1;
      const shared = new Uint32Array(this.shared, 4 * (aLen + bLen), cLen);
      const span = count > 1 ? M * N : unitRows * N;
      for (let u = 0; u < units; u++) if (!ours[u]) out.set(shared.subarray(u * span, Math.min(cLen, (u + 1) * span)), u * span);
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

