/**
 * A matmul worker of ThreadedKernels (threads.ts): waits on its control word, takes the tile job from its
 * port (synchronously), runs it with its own kernels of the caller's kind and signals the result back.
 */
import { receiveMessageOnPort, workerData, type MessagePort } from "node:worker_threads";
import { jsKernels } from "./reference.ts";
import { joinV3Call, RefUnits, type TileJob, type UnitKernel } from "./threads.ts";
import type { MatmulLayout } from "./reference.ts";
import type { Kernels } from "./types.ts";
import { WasmKernels, WasmMatmulV3 } from "./wasm.ts";

const { ctrl: ctrlBuf, port, kernels: kind } = workerData as { ctrl: SharedArrayBuffer; port: MessagePort; kernels: string };
const ctrl = new Int32Array(ctrlBuf);
const kernels: Kernels = kind === "js" ? jsKernels : new WasmKernels();
let v3: UnitKernel | null = null;
let data: SharedArrayBuffer | null = null;
let gate: Int32Array | null = null;
let seen = 0;

// NOTE: the loop starts after this module has finished evaluating: terminate() of a worker still inside
// (async) module evaluation trips a V8 check (a fatal error at exit), so close() would crash the process.
setImmediate(serve);

function serve(): void {
  for (;;) {
    Atomics.wait(ctrl, 0, seen);
    const seq = Atomics.load(ctrl, 0);
    if (seq === seen) continue;
    seen = seq;
    // every job posted up to `seq`, in order: a bitwise-v3 call the caller has already closed is skipped at its gate
    for (let msg = receiveMessageOnPort(port); msg; msg = receiveMessageOnPort(port)) {
      const job = msg.message as TileJob;
      try {
        if (job.data) data = job.data;
        if (job.gate) gate = new Int32Array(job.gate);
        const heap = new Float32Array(data!);
        if (job.op === "v3") joinV3Call(gate!, job.call!, (v3 ??= kind === "js" ? new RefUnits() : new WasmMatmulV3()), heap, job);
        else {
          const { M, K, N, layout, aOff, bOff, cOff } = job;
          const c = kernels.matmul(heap.subarray(aOff, aOff + M * K), heap.subarray(bOff, bOff + K * N), M, K, N, layout as MatmulLayout);
          heap.set(c, cOff);
        }
      } catch (err) {
        process.stderr.write(`matmul worker: ${(err as Error).stack ?? String(err)}\n`);
        Atomics.store(ctrl, 2, 1);
      }
      Atomics.store(ctrl, 1, job.seq);
      Atomics.notify(ctrl, 1);
    }
  }
}
