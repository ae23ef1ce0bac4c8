/**
 * The worker thread of WebGpuMatmulV3 (sync-kernels.ts): owns the Dawn device (GpuV3) and runs each bitwise-v3
 * matmul the training thread posts. The training thread is blocked in Atomics.wait meanwhile, so this thread keeps
 * its own event loop free for Dawn's asynchronous calls (mapAsync, popErrorScope) and answers through the shared
 * control words: DONE = the job's sequence number, FAILED = 1 with the error's text posted on the port first.
 */
import { parentPort, workerData, type MessagePort } from "node:worker_threads";
import { WebGpuUnavailableError } from "./device.ts";
import { GpuV3 } from "./v3-device.ts";
import { DONE, FAILED, type GpuJob } from "./sync-kernels.ts";

const { ctrl: ctrlBuf, port } = workerData as { ctrl: SharedArrayBuffer; port: MessagePort };
const ctrl = new Int32Array(ctrlBuf);
let data: SharedArrayBuffer | null = null;

// NOTE: the device opens after this module has finished evaluating (no top-level await): terminate() of a worker
// still inside async module evaluation trips a V8 check (a fatal error at exit), as kernels/thread-worker.ts notes.
setImmediate(() => void start());

async function start(): Promise<void> {
  let gpu: GpuV3;
  try {
    gpu = await GpuV3.create();
  } catch (err) {
    const e = err as Error & { details?: string };
    parentPort!.postMessage({ ok: false, unavailable: err instanceof WebGpuUnavailableError, message: e.message, details: e.details });
    return;
  }
  // NOTE: jobs run one at a time: the training thread posts the next only after this one's DONE.
  port.on("message", (job: GpuJob) => void serve(gpu, job));
  parentPort!.postMessage({ ok: true, info: gpu.info });
}

async function serve(gpu: GpuV3, job: GpuJob): Promise<void> {
  try {
    if (job.data) data = job.data;
    const { M, K, N, layout, count, aOff, bOff, cOff } = job;
    const words = new Uint32Array(data!);
    const c = await gpu.matmul(words.subarray(aOff, aOff + count * M * K), words.subarray(bOff, bOff + count * K * N), M, K, N, layout, count);
    words.set(c, cOff);
  } catch (err) {
    port.postMessage((err as Error).stack ?? String(err));
    Atomics.store(ctrl, FAILED, 1);
  }
  Atomics.store(ctrl, DONE, job.seq);
  Atomics.notify(ctrl, DONE);
}
