/**
 * A matmul worker of ThreadedKernels (threads.ts): waits on its control word, takes the tile job from its
 * port (synchronously), runs it with its own kernels of the caller's kind and signals the result back.
 */
import { receiveMessageOnPort, workerData, type MessagePort } from "node:worker_threads";
import { jsKernels } from "./reference.ts";
import { matmulV3Ref } from "./reference-v3.ts";
import type { TileJob } from "./threads.ts";
import type { MatmulLayout } from "./reference.ts";
import type { Kernels } from "./types.ts";
import { WasmKernels, WasmMatmulV3 } from "./wasm.ts";

const { ctrl: ctrlBuf, port, kernels: kind } = workerData as { ctrl: SharedArrayBuffer; port: MessagePort; kernels: string };
const ctrl = new Int32Array(ctrlBuf);
const kernels: Kernels = kind === "js" ? jsKernels : new WasmKernels();
let v3: WasmMatmulV3 | null = null;
let data: SharedArrayBuffer | null = null;
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
    try {
      const msg = receiveMessageOnPort(port);
      if (!msg) throw new Error(`tile job ${seq} was signalled but not posted`);
      const job = msg.message as TileJob;
      if (job.data) data = job.data;
      const heap = new Float32Array(data!);
      const { M, K, N, layout, aOff, bOff, cOff } = job;
      if (job.op === "v3") {
        const count = job.count!;
        const a = heap.subarray(aOff, aOff + count * M * K), b = heap.subarray(bOff, bOff + count * K * N);
        const c = kind === "js" ? matmulV3Ref(a, b, M, K, N, layout, count) : (v3 ??= new WasmMatmulV3()).matmul(a, b, M, K, N, layout, count);
        heap.set(c, cOff);
      } else {
        const c = kernels.matmul(heap.subarray(aOff, aOff + M * K), heap.subarray(bOff, bOff + K * N), M, K, N, layout as MatmulLayout);
        heap.set(c, cOff);
      }
    } catch (err) {
      process.stderr.write(`matmul worker: ${(err as Error).stack ?? String(err)}\n`);
      Atomics.store(ctrl, 2, 1);
    }
    Atomics.store(ctrl, 1, seq);
    Atomics.notify(ctrl, 1);
  }
}
