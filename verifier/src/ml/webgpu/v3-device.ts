/**
 * The numerics bitwise-v3 kernels on one WebGPU device (asynchronous): the tiled matmul (v3-matmul-wgsl.ts) and
 * the elementwise ops (v3-elementwise-wgsl.ts), each with the bits of kernels/reference-v3.ts. Operands and
 * results are float32 bit patterns (Uint32Array views); NaN results are the canonical 0x7fc00000.
 *
 * Every call is one command buffer: upload, one dispatch, copy back, map. Buffers are created per call and
 * destroyed after it: the differential tests and gpu:check run many small shapes, and the cost of a buffer is
 * small next to a dispatch on any adapter.
 */
import type { Layout } from "../kernels/transformer-ref.ts";
import { checkMatmul32 } from "../kernels/transformer-ref.ts";
import { openWebGpu, WebGpuError, type AdapterInfo, type WebGpuConstants } from "./device.ts";
import { V3_ELEMENTWISE_WGSL, V3_OPS, V3_ROW_WGSL, v3RowInvocations, type V3Op, type V3RowKernel } from "./v3-elementwise-wgsl.ts";
import { V3_MATMUL_WGSL, V3_TILE } from "./v3-matmul-wgsl.ts";

type Kernel = "matmul" | "ops" | V3RowKernel;

/** Elements one invocation of the elementwise kernel handles per dispatch row (x dimension limit workaround). */
const OPS_WORKGROUP = 64;

export class GpuV3 {
  readonly info: AdapterInfo;
  private readonly device: GPUDevice;
  private readonly k: WebGpuConstants;
  private readonly sources: Record<Kernel, string>;
  private readonly pipelines = new Map<Kernel, GPUComputePipeline>();
  private lost: string | null = null;
  /** The GPU instance and adapter: Dawn must not collect them while the device is in use (device.ts openWebGpu). */
  private readonly keepAlive: object;

  private constructor(device: GPUDevice, info: AdapterInfo, k: WebGpuConstants, sources: Record<Kernel, string>, keepAlive: object) {
    this.device = device;
    this.keepAlive = keepAlive;
    this.info = info;
    this.k = k;
    this.sources = sources;
    void device.lost.then((l) => { this.lost = `${l.reason}: ${l.message}`; });
  }

  /**
   * Opens the first adapter (WebGpuUnavailableError without one). Each kernel is compiled on its first use (a
   * soft-float shader takes seconds to compile on SwiftShader). `matmulSource` replaces the matmul shader (tests
   * use it to show that a kernel with another summation order is caught).
   */
  static async create(opts: { matmulSource?: string } = {}): Promise<GpuV3> {
    const { device, info, constants, keepAlive } = await openWebGpu();
    const sources = { matmul: opts.matmulSource ?? V3_MATMUL_WGSL, ops: V3_ELEMENTWISE_WGSL, ...V3_ROW_WGSL };
    return new GpuV3(device, info, constants, sources, keepAlive);
  }

  /** Compiles a kernel now (gpu:check times compilation apart from the runs). */
  async pipeline(kernel: Kernel): Promise<GPUComputePipeline> {
    const have = this.pipelines.get(kernel);
    if (have) return have;
    const code = this.sources[kernel];
    if (code === undefined) throw new RangeError(`kernel ${String(kernel)}: not one of ${Object.keys(this.sources).join(", ")}`);
    this.device.pushErrorScope("validation");
    const module = this.device.createShaderModule({ code });
    const pipeline = this.device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const err = await this.device.popErrorScope();
    if (err) throw new WebGpuError(`the v3 ${kernel} shader failed to compile: ${err.message}`);
    this.pipelines.set(kernel, pipeline);
    return pipeline;
  }

  /**
   * `count` products C_q = A_q . B_q with the bits of reference-v3.ts `matmulV3Ref` (same layouts and batch
   * offsets). `a` and `b` are float32 bit patterns.
   */
  async matmul(a: Uint32Array, b: Uint32Array, M: number, K: number, N: number, layout: Layout = "nn", count = 1): Promise<Uint32Array> {
    checkMatmul32(new Float32Array(a.buffer, a.byteOffset, a.length), new Float32Array(b.buffer, b.byteOffset, b.length), M, K, N, count);
    if (count * M * N === 0) return new Uint32Array(0);
    if (K === 0) return new Uint32Array(count * M * N); // no product: every output is the +0 acc starts from
    const gx = Math.ceil(N / V3_TILE), gy = Math.ceil(M / V3_TILE);
    this.checkGroups(`matmul ${count}x${M}x${K}x${N}`, gx, gy, count);
    const [aRow, aInner] = layout === "tn" ? [1, M] : [K, 1];
    const [bInner, bCol] = layout === "nt" ? [1, K] : [N, 1];
    return this.dispatch(await this.pipeline("matmul"), [a, b], count * M * N, Uint32Array.of(M, K, N, aRow, aInner, bInner, bCol, count), [gx, gy, count]);
  }

  /**
   * One float32 operation per element, computed by the integer soft-float (v3-elementwise-wgsl.ts): out[i] =
   * op(x[i], y[i]) correctly rounded, as `Math.fround` of the float64 operation (y is ignored by the unary ops).
   */
  async op(op: V3Op, x: Uint32Array, y: Uint32Array): Promise<Uint32Array> {
    if (x.length !== y.length) throw new RangeError(`op ${op}: x has ${x.length} elements, y ${y.length}`);
    const code = V3_OPS.indexOf(op);
    if (code < 0) throw new RangeError(`op ${String(op)}: not one of ${V3_OPS.join(", ")}`);
    if (x.length === 0) return new Uint32Array(0);
    const groups = Math.ceil(x.length / OPS_WORKGROUP);
    this.checkGroups(`op ${op} over ${x.length}`, groups, 1, 1);
    return this.dispatch(await this.pipeline("ops"), [x, y], x.length, Uint32Array.of(x.length, code, 0, 0), [groups, 1, 1]);
  }

  /**
   * A row kernel (v3-elementwise-wgsl.ts V3_ROW_WGSL): one invocation per row of width `width` folds the row in
   * the reference's order. `inputs` are bound in order, `params` fill the uniform after (rows, width); the
   * result has `outWords` words.
   */
  async rows(kernel: V3RowKernel, inputs: Uint32Array[], rows: number, width: number, outWords: number, params: number[] = []): Promise<Uint32Array> {
    if (!(kernel in V3_ROW_WGSL)) throw new RangeError(`row kernel ${String(kernel)}: not one of ${Object.keys(V3_ROW_WGSL).join(", ")}`);
    if (rows === 0 || outWords === 0) return new Uint32Array(outWords);
    const groups = Math.ceil(v3RowInvocations(kernel, rows, width) / OPS_WORKGROUP);
    this.checkGroups(`${kernel} over ${rows} rows`, groups, 1, 1);
    const u = new Uint32Array(12);
    u.set([rows, width, ...params]);
    return this.dispatch(await this.pipeline(kernel), inputs, outWords, u, [groups, 1, 1]);
  }

  /** Frees the device. */
  destroy(): void {
    this.device.destroy();
  }

  private checkGroups(what: string, gx: number, gy: number, gz: number): void {
    const max = this.device.limits.maxComputeWorkgroupsPerDimension;
    if (gx > max || gy > max || gz > max) throw new WebGpuError(`${what}: ${gx}x${gy}x${gz} workgroups, over the device's ${max} per dimension`);
  }

  private async dispatch(pipeline: GPUComputePipeline, inputs: Uint32Array[], outWords: number, uniform: Uint32Array, groups: [number, number, number]): Promise<Uint32Array> {
    if (this.lost) throw new WebGpuError(`the WebGPU device was lost (${this.lost})`);
    const max = this.device.limits.maxStorageBufferBindingSize;
    for (const [n, words] of [...inputs.map((x, i) => [`input ${i}`, x.length] as const), ["output", outWords] as const]) {
      if (4 * words > max) throw new WebGpuError(`${n} needs ${4 * words} bytes, over the device's ${max}-byte storage binding limit`);
    }
    const U = this.k.GPUBufferUsage;
    const q = this.device.queue;
    const made: GPUBuffer[] = [];
    const buffer = (bytes: number, usage: number): GPUBuffer => {
      const b = this.device.createBuffer({ size: Math.max(16, Math.ceil(bytes / 4) * 4), usage });
      made.push(b);
      return b;
    };
    try {
      this.device.pushErrorScope("validation");
      const ins = inputs.map((x) => {
        const b = buffer(4 * x.length, U.STORAGE | U.COPY_DST);
        if (x.length > 0) q.writeBuffer(b, 0, new Uint32Array(x)); // a copy over a plain ArrayBuffer (x may sit in a SharedArrayBuffer)
        return b;
      });
      const out = buffer(4 * outWords, U.STORAGE | U.COPY_SRC);
      const read = buffer(4 * outWords, U.MAP_READ | U.COPY_DST);
      const dims = buffer(4 * uniform.length, U.UNIFORM | U.COPY_DST);
      q.writeBuffer(dims, 0, new Uint32Array(uniform));
      const bind = this.device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [
          ...ins.map((b, i) => ({ binding: i, resource: { buffer: b } })),
          { binding: ins.length, resource: { buffer: out } },
          { binding: ins.length + 1, resource: { buffer: dims } },
        ],
      });
      const enc = this.device.createCommandEncoder();
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bind);
      pass.dispatchWorkgroups(...groups);
      pass.end();
      enc.copyBufferToBuffer(out, 0, read, 0, 4 * outWords);
      q.submit([enc.finish()]);
      const err = await this.device.popErrorScope();
      if (err) throw new WebGpuError(`a v3 dispatch failed validation: ${err.message}`);
      await read.mapAsync(this.k.GPUMapMode.READ, 0, 4 * outWords);
      const result = new Uint32Array(read.getMappedRange(0, 4 * outWords).slice(0));
      read.unmap();
      if (this.lost) throw new WebGpuError(`the WebGPU device was lost (${this.lost})`);
      return result;
    } finally {
      for (const b of made) b.destroy();
    }
  }
}
