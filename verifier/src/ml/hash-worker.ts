/** The worker of HashPipeline (hash-pipeline.ts): h(t) of each posted state, in order, with tensorStateHash. */
import { receiveMessageOnPort, workerData, type MessagePort } from "node:worker_threads";
import { hexToBytes } from "viem";
import { tensorStateHash, type StateDigest } from "../trace/digest.ts";
import type { HashJob } from "./hash-pipeline.ts";

const w = workerData as { ctrl: SharedArrayBuffer; results: SharedArrayBuffer; port: MessagePort; scheme: StateDigest; jobId: string; pollMs: number; idlePolls: number };
const ctrl = new Int32Array(w.ctrl);
const results = new Uint8Array(w.results);
const jobId = BigInt(w.jobId);
let data: SharedArrayBuffer | null = null;
let seen = 0;

// NOTE: the loop starts after this module has finished evaluating: terminate() of a worker still inside
// (async) module evaluation trips a V8 check (a fatal error at exit), so close() would crash the process.
setImmediate(serve);

function serve(): void {
  Atomics.store(ctrl, 3, 1);
  Atomics.notify(ctrl, 3);
  for (;;) {
    // poll on a timer while jobs keep coming (no notify from the step thread: hash-pipeline.ts header), then
    // sleep until notified: SLEEPING (4) is set before the wait, so a job stored after it is either seen by
    // the wait (REQ changed: it returns at once) or followed by the submitter's notify
    let polls = 0;
    while (Atomics.load(ctrl, 0) === seen && polls++ < w.idlePolls) Atomics.wait(ctrl, 0, seen, w.pollMs);
    if (Atomics.load(ctrl, 0) === seen) {
      Atomics.store(ctrl, 4, 1);
      Atomics.wait(ctrl, 0, seen);
      Atomics.store(ctrl, 4, 0);
    }
    seen = Atomics.load(ctrl, 0);
    for (let msg = receiveMessageOnPort(w.port); msg; msg = receiveMessageOnPort(w.port)) {
      const job = msg.message as HashJob;
      try {
        if (job.data) data = job.data;
        const weights = new Uint8Array(data!, job.off, job.wBytes);
        const opt = new Uint8Array(data!, job.off + job.wBytes, job.oBytes);
        results.set(hexToBytes(tensorStateHash(w.scheme, jobId, job.t, [weights], [opt])), 32 * job.slot);
      } catch (err) {
        process.stderr.write(`state hash worker: ${(err as Error).stack ?? String(err)}\n`);
        Atomics.store(ctrl, 2, 1);
      }
      Atomics.store(ctrl, 1, job.seq);
      Atomics.notify(ctrl, 1);
    }
  }
}
