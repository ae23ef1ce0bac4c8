/**
 * State hashes on a worker thread, overlapped with the next step: `submit(state t)` copies the state's
 * tensors into a shared buffer and returns at once; the worker computes h(t) with the same function as
 * `Run.stateHashOf` (trace/digest.ts `tensorStateHash`, so the same bits) while the caller runs step t+1;
 * `next()` returns the oldest submitted hash, waiting only if it is not ready yet. The trainer's critical path
 * then pays the copy (~0.1-0.2 ms per 1.2 MB mnist-mlp state) instead of the hash (~1 ms under sha256-v1,
 * ~7 ms under keccak256); the CPU time of the hash is still spent, on another core (docs/engine.md "State
 * digest"). Used by `pouw train` and `pouw provider run` when they run with --threads > 1.
 *
 * Synchronous like the rest of the step loop: jobs go through a MessagePort read with receiveMessageOnPort,
 * completion through Atomics on a shared control word. The worker is unref'd; `close()` ends it.
 *
 * NOTE: submit() does not wake the worker with Atomics.notify while the worker is polling (every POLL_MS,
 * for up to IDLE_POLLS polls after its last job; then it sleeps until notified, SLEEPING = 1). Measured on
 * the 2-core machine (mnist-fast.json, 1 step thread + this worker): a notify per step took 0.7-1.1 ms of
 * the step thread's time, about one whole sha256 of the state, because Linux runs the woken thread on the
 * waker's core (wake-affine) and it preempts the step thread there; the step loop then waited ~20% of its
 * time, as much as hashing inline. With the worker waking itself on a timer, submit() costs the copy
 * (~0.15-0.3 ms), 5-8% of step + hash (docs/engine.md "State digest").
 */
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { bytesToHex, type Hex } from "viem";
import type { StateDigest } from "../trace/digest.ts";
import type { TrainState } from "./run.ts";
import { HashWorkerTimeoutError } from "./errors.ts";

/** How long next() waits for one hash by default before HashWorkerTimeoutError (a sha256-v1 mnist-mlp hash takes ~1 ms). */
export const HASH_WAIT_LIMIT_MS = 60_000;

/** A hash job: h(t) of the tensors at [off, off + wBytes) (weights) and [off + wBytes, .. + oBytes) (optimizer). */
export type HashJob = { seq: number; t: number; data?: SharedArrayBuffer; off: number; wBytes: number; oBytes: number; slot: number };

const REQ = 0;
const DONE = 1;
const FAILED = 2;
const READY = 3;
const SLEEPING = 4;

/** The worker's poll interval (ms) while jobs keep coming, and how many empty polls before it sleeps (~20 ms). */
export const POLL_MS = 0.25;
export const IDLE_POLLS = 80;

export class HashPipeline {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly ctrl = new Int32Array(new SharedArrayBuffer(32));
  private readonly results: Uint8Array;
  private data: SharedArrayBuffer | null = null;
  private sent: SharedArrayBuffer | null = null;
  private slotBytes = 0;
  private seq = 0;
  private taken = 0;
  private readonly queue: number[] = [];

  /** `depth`: how many submitted hashes may wait to be taken (default 2). */
  readonly depth: number;

  /** How long next() waits for a hash before it throws HashWorkerTimeoutError (ms). */
  readonly waitLimitMs: number;

  constructor(scheme: StateDigest, jobId: bigint, depth = 2, options: { waitLimitMs?: number } = {}) {
    this.depth = depth;
    this.waitLimitMs = options.waitLimitMs ?? HASH_WAIT_LIMIT_MS;
    if (!(this.waitLimitMs > 0)) throw new RangeError(`hash pipeline wait limit must be > 0 ms, got ${this.waitLimitMs}`);
    if (!Number.isInteger(depth) || depth < 1 || depth > 16) throw new RangeError(`hash pipeline depth must be in [1, 16], got ${depth}`);
    this.results = new Uint8Array(new SharedArrayBuffer(32 * depth));
    const { port1, port2 } = new MessageChannel();
    this.worker = new Worker(new URL("./hash-worker.ts", import.meta.url), {
      workerData: { ctrl: this.ctrl.buffer, results: this.results.buffer, port: port2, scheme, jobId: jobId.toString(), pollMs: POLL_MS, idlePolls: IDLE_POLLS },
      transferList: [port2],
    });
    this.worker.unref();
    port1.unref();
    this.port = port1;
  }

  /** Whether the worker is asleep (idle past IDLE_POLLS polls), so the next submit() notifies it. */
  get workerSleeping(): boolean {
    return Atomics.load(this.ctrl, SLEEPING) !== 0;
  }

  /** Hashes submitted and not yet taken. */
  get pending(): number {
    return this.seq - this.taken;
  }

  /** Queues h(state.step); throws when `depth` hashes are already waiting to be taken. */
  submit(state: TrainState): void {
    if (this.pending >= this.depth) throw new RangeError(`hash pipeline full: take a hash (next()) before submitting another (depth ${this.depth})`);
    const wBytes = state.params.reduce((n, a) => n + a.byteLength, 0);
    const oBytes = state.opt.reduce((n, a) => n + a.byteLength, 0);
    const need = (wBytes + oBytes + 7) & ~7;
    if (!this.data || need > this.slotBytes) {
      // NOTE: only when no job is in flight (sizes are fixed per run, so this is the first submit)
      this.drainWorker();
      this.slotBytes = need;
      this.data = new SharedArrayBuffer(need * this.depth);
    }
    const slot = this.seq % this.depth;
    const off = slot * this.slotBytes;
    const bytes = new Uint8Array(this.data);
    let at = off;
    for (const a of [...state.params, ...state.opt]) {
      bytes.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), at);
      at += a.byteLength;
    }
    this.seq++;
    const job: HashJob = { seq: this.seq, t: state.step, off, wBytes, oBytes, slot };
    if (this.sent !== this.data) {
      job.data = this.data;
      this.sent = this.data;
    }
    this.queue.push(state.step);
    this.port.postMessage(job);
    Atomics.store(this.ctrl, REQ, this.seq);
    // a polling worker finds the job by itself (see the header); only a sleeping one is woken
    if (Atomics.load(this.ctrl, SLEEPING) !== 0) Atomics.notify(this.ctrl, REQ);
  }

  /** h(t) of the oldest submitted state not yet taken (blocks until the worker has it). */
  next(): Hex {
    if (this.pending === 0) throw new RangeError("hash pipeline: nothing submitted");
    const want = this.taken + 1;
    this.waitFor(want);
    const slot = this.taken % this.depth;
    this.taken = want;
    this.queue.shift();
    return bytesToHex(this.results.slice(32 * slot, 32 * slot + 32));
  }

  private waitFor(seq: number): void {
    const end = performance.now() + this.waitLimitMs;
    for (;;) {
      if (Atomics.load(this.ctrl, FAILED) !== 0) throw new Error("state hash worker failed (see its stderr)");
      const done = Atomics.load(this.ctrl, DONE);
      if (done >= seq) return;
      const left = end - performance.now();
      if (left <= 0) throw new HashWorkerTimeoutError(`state hash worker gave no hash for submission ${seq} within ${this.waitLimitMs} ms (worker dead or stuck)`);
      Atomics.wait(this.ctrl, DONE, done, Math.min(left, 10_000));
    }
  }

  private drainWorker(): void {
    if (this.seq > 0) this.waitFor(this.seq);
  }

  /**
   * Blocks until the worker has loaded its modules (~0.1-0.5 s; the first next() would otherwise wait for it).
   * Benchmarks call it before timing; the trainer need not.
   */
  waitReady(timeoutMs = 30_000): void {
    const end = performance.now() + timeoutMs;
    while (Atomics.load(this.ctrl, READY) === 0) {
      if (performance.now() > end) throw new Error(`state hash worker not ready after ${timeoutMs} ms`);
      Atomics.wait(this.ctrl, READY, 0, 50);
    }
  }

  /** Ends the worker (idempotent); untaken hashes are dropped. */
  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
