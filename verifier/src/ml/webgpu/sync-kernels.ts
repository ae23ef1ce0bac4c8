/**
 * The `webgpu` engine's synchronous kernels (numerics bitwise-v3): the trainer calls `matmul` synchronously
 * (kernels/transformer.ts), WebGPU is asynchronous, so a worker thread (gpu-worker.ts) owns the Dawn device and the
 * training thread blocks in Atomics.wait while it computes, as kernels/threads.ts does for its CPU workers.
 * Operands go to the worker and the result comes back through one SharedArrayBuffer (grown as needed, sent to the
 * worker once per buffer); the job itself goes over a MessagePort.
 *
 * Which op runs where: every matmul of the pass (forward, backward, the attention heads) runs the WGSL v3 matmul
 * (v3-matmul-wgsl.ts) on the device; the causal softmax, the layer norm (both directions), the loss head, the
 * elementwise ops and Adam run on the CPU kernels of kernels/transformer-v3.ts (wasm, else the JS reference). The bits
 * are the same either way: reference-v3.ts defines them and every WGSL kernel equals it (test/ml/webgpu-v3.test.ts).
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import type { Layout } from "../kernels/transformer-ref.ts";
import { checkMatmul32 } from "../kernels/transformer-ref.ts";
import { fastestTransformerKernelsV3, v3TransformerKernels } from "../kernels/transformer-v3.ts";
import type { TransformerKernels } from "../kernels/transformer.ts";
import { logger } from "../../log/index.ts";
import { useSwiftShaderWhenNoIcd, WebGpuError, WebGpuUnavailableError, type AdapterInfo } from "./device.ts";

/** A matmul job: operands and result as 32-bit element offsets into the shared data buffer. */
export type GpuJob = { seq: number; data?: SharedArrayBuffer; M: number; K: number; N: number; layout: Layout; count: number; aOff: number; bOff: number; cOff: number };

/** Control words (Int32Array over a SharedArrayBuffer): the sequence number of the last finished job, a failure flag. */
export const DONE = 0;
export const FAILED = 1;

type Ready = { ok: true; info: AdapterInfo } | { ok: false; unavailable: boolean; message: string; details?: string };

export class WebGpuMatmulV3 {
  readonly info: AdapterInfo;
  /** Matmuls run on the device so far (tests check the device really ran). */
  calls = 0;
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly ctrl: Int32Array;
  private data: SharedArrayBuffer | null = null;
  private sent: SharedArrayBuffer | null = null;
  private seq = 0;
  private closed = false;

  private constructor(worker: Worker, port: MessagePort, ctrl: Int32Array, info: AdapterInfo) {
    this.worker = worker;
    this.port = port;
    this.ctrl = ctrl;
    this.info = info;
  }

  /**
   * Starts the worker and opens the first adapter Dawn finds there. Throws WebGpuUnavailableError (naming
   * VK_ICD_FILENAMES) when there is none: set VK_ICD_FILENAMES before this call (Dawn reads it in the worker).
   */
  static async open(): Promise<WebGpuMatmulV3> {
    const ctrl = new Int32Array(new SharedArrayBuffer(8));
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(new URL("./gpu-worker.ts", import.meta.url), { workerData: { ctrl: ctrl.buffer, port: port2 }, transferList: [port2] });
    const ready = await new Promise<Ready>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new WebGpuError(`the WebGPU worker exited (code ${code}) before opening a device`)));
    });
    if (!ready.ok) {
      await worker.terminate();
      if (ready.unavailable) throw new WebGpuUnavailableError(ready.message, ready.details === undefined ? {} : { details: ready.details });
      throw new WebGpuError(`the WebGPU worker failed to open a device: ${ready.message}`);
    }
    worker.removeAllListeners();
    worker.unref();
    port1.unref();
    return new WebGpuMatmulV3(worker, port1, ctrl, ready.info);
  }

  /** `count` products C_q = A_q . B_q with matmulV3Ref's bits (reference-v3.ts; layouts as there); a fresh array. */
  matmul(a: Float32Array, b: Float32Array, M: number, K: number, N: number, layout: Layout = "nn", count = 1): Float32Array {
    checkMatmul32(a, b, M, K, N, count);
    if (this.closed) throw new WebGpuError("the webgpu kernels are closed");
    const aOff = 0, bOff = count * M * K, cOff = bOff + count * K * N;
    const need = 4 * (cOff + count * M * N);
    if (!this.data || this.data.byteLength < need) this.data = new SharedArrayBuffer(Math.max(need, 2 * (this.data?.byteLength ?? 0)));
    const heap = new Float32Array(this.data);
    heap.set(a, aOff);
    heap.set(b, bOff);
    const job: GpuJob = { seq: ++this.seq, M, K, N, layout, count, aOff, bOff, cOff };
    if (this.sent !== this.data) {
      job.data = this.data;
      this.sent = this.data;
    }
    this.port.postMessage(job);
    // INVARIANT: only the worker writes DONE, once per job, after the result is in the buffer (or FAILED is set)
    while (Atomics.load(this.ctrl, DONE) !== this.seq) Atomics.wait(this.ctrl, DONE, Atomics.load(this.ctrl, DONE), 10_000);
    if (Atomics.load(this.ctrl, FAILED) !== 0) {
      const why = receiveMessageOnPort(this.port)?.message;
      this.closed = true;
      void this.worker.terminate();
      throw new WebGpuError(`the webgpu matmul ${count} x ${M}x${K}x${N} (${layout}) failed on ${this.info.description || this.info.vendor}: ${String(why ?? "no reason given")}`);
    }
    this.calls++;
    return heap.slice(cOff, cOff + count * M * N);
  }

  /** Ends the worker and its device (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.worker.terminate();
  }
}

/**
 * The bitwise-v3 kernel set of the `webgpu` engine: `gpu`'s matmul over the CPU elementwise kernels of
 * fastestTransformerKernelsV3 (wasm, else the JS reference). Named "webgpu".
 */
export function webgpuTransformerKernelsV3(gpu: WebGpuMatmulV3): TransformerKernels {
  return v3TransformerKernels("webgpu", (a, b, M, K, N, layout, count) => gpu.matmul(a, b, M, K, N, layout, count), fastestTransformerKernelsV3());
}

/**
 * Opens the `webgpu` engine's kernels: the adapter the environment gives Dawn (a GPU's Vulkan driver), else, when
 * VK_ICD_FILENAMES is unset and Debian's SwiftShader is installed, SwiftShader (software: the same bits, far slower;
 * logged). Throws WebGpuUnavailableError when neither gives an adapter.
 */
export async function openWebGpuKernelsV3(): Promise<{ gpu: WebGpuMatmulV3; kernels: TransformerKernels }> {
  let gpu: WebGpuMatmulV3;
  try {
    gpu = await WebGpuMatmulV3.open();
  } catch (err) {
    if (!(err instanceof WebGpuUnavailableError) || process.env.VK_ICD_FILENAMES) throw err;
    const icd = useSwiftShaderWhenNoIcd();
    if (icd === null) throw err;
    logger("webgpu").warn({ icd }, "no GPU adapter; the webgpu engine runs on SwiftShader (software Vulkan: the same bits, slow)");
    gpu = await WebGpuMatmulV3.open();
  }
  return { gpu, kernels: webgpuTransformerKernelsV3(gpu) };
}
