/**
 * A WebGPU device through the npm `webgpu` package (Dawn) and the exact matmul pipeline on it (asynchronous).
 * No Kernels implementation wraps it yet (the models call matmul synchronously; docs/gpu.md "Not yet done");
 * scripts/gpu-check.ts uses it directly.
 *
 * Without a GPU, Dawn finds an adapter through a software Vulkan driver: SwiftShader, whose ICD file
 * Debian's chromium package ships (SWIFTSHADER_ICD). `useSwiftShaderWhenNoIcd()` points VK_ICD_FILENAMES at
 * it for tests, benches and the check script; a provider with a GPU leaves the variable unset (or points it
 * at its driver) and Dawn takes the hardware adapter.
 */
import { existsSync } from "node:fs";
import { BackendError } from "../errors.ts";
import { checkMatmulShapes, type MatmulLayout } from "../kernels/reference.ts";
import { EXACT_BLOCK } from "./exact-matmul.ts";
import { MATMUL_WGSL, WORKGROUP_X, WORKGROUP_Y } from "./matmul-wgsl.ts";

/** SwiftShader's Vulkan ICD as Debian's chromium package installs it. */
export const SWIFTSHADER_ICD = "/usr/lib/chromium/vk_swiftshader_icd.json";

/** No WebGPU adapter: the `webgpu` package failed to load, or Dawn found no Vulkan (or other) driver. */
export class WebGpuUnavailableError extends BackendError {
  override name = "WebGpuUnavailableError";
  override readonly code: string = "WEBGPU_UNAVAILABLE";
}

/** A WebGPU call failed after the device was created (validation, out of memory, device lost, a size over the limits). */
export class WebGpuError extends BackendError {
  override name = "WebGpuError";
  override readonly code: string = "WEBGPU_ERROR";
}

/**
 * Sets VK_ICD_FILENAMES to SwiftShader's ICD when it is unset and the file exists (tests, benches, gpu:check on
 * a machine without a GPU). Returns the ICD in effect, or null. Must run before the first adapter request.
 */
export function useSwiftShaderWhenNoIcd(): string | null {
  if (process.env.VK_ICD_FILENAMES) return process.env.VK_ICD_FILENAMES;
  if (!existsSync(SWIFTSHADER_ICD)) return null;
  process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  return SWIFTSHADER_ICD;
}

export type AdapterInfo = { vendor: string; architecture: string; device: string; description: string; isSoftware: boolean };

type Constants = { GPUBufferUsage: Record<"STORAGE" | "COPY_SRC" | "COPY_DST" | "MAP_READ" | "UNIFORM", number>; GPUMapMode: Record<"READ", number> };

/** The WebGPU constants of the `webgpu` package (buffer usage and map mode flags). */
export type WebGpuConstants = Constants;

/**
 * The first adapter Dawn offers (high-performance preference) and a device on it. Throws
 * WebGpuUnavailableError when the package does not load or no adapter is found.
 */
export async function openWebGpu(): Promise<{ device: GPUDevice; info: AdapterInfo; constants: WebGpuConstants; keepAlive: object }> {
  let mod: { create: (o: string[]) => GPU; globals: object };
  try {
    mod = await import("webgpu") as never;
  } catch (err) {
    throw new WebGpuUnavailableError("the webgpu package (Dawn) failed to load", { cause: err });
  }
  const gpu = mod.create([]);
  const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) {
    throw new WebGpuUnavailableError("no WebGPU adapter", {
      details: `VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES ?? "(unset)"}; without a GPU install libvulkan1 and chromium and point VK_ICD_FILENAMES at ${SWIFTSHADER_ICD} (docs/gpu.md)`,
    });
  }
  const ai = adapter.info;
  const description = ai.description ?? "";
  const info: AdapterInfo = {
    vendor: ai.vendor, architecture: ai.architecture, device: ai.device, description,
    isSoftware: /swiftshader|llvmpipe|lavapipe/i.test(`${ai.architecture} ${description}`),
  };
  const device = await adapter.requestDevice();
  // IMPORTANT: the caller must hold `keepAlive` as long as it uses the device. When the GPU instance and the
  // adapter are garbage-collected, Dawn tears its instance down under the live device, and SwiftShader then
  // dies in its worker threads (glibc mutex assertions, std::system_error, SIGSEGV).
  return { device, info, constants: mod.globals as Constants, keepAlive: { gpu, adapter } };
}

/** The exact matmul on one WebGPU device. Buffers grow as needed and are reused. */
export class GpuMatmul {
  readonly info: AdapterInfo;
  private readonly device: GPUDevice;
  private readonly pipeline: GPUComputePipeline;
  private readonly k: Constants;
  private bufs: { a: GPUBuffer; b: GPUBuffer; c: GPUBuffer; read: GPUBuffer; aBytes: number; bBytes: number; cBytes: number } | null = null;
  private lost: string | null = null;
  /** The GPU instance and adapter: Dawn must not collect them while the device is in use (openWebGpu). */
  private readonly keepAlive: object;

  private constructor(device: GPUDevice, pipeline: GPUComputePipeline, info: AdapterInfo, k: Constants, keepAlive: object) {
    this.device = device;
    this.keepAlive = keepAlive;
    this.pipeline = pipeline;
    this.info = info;
    this.k = k;
    void device.lost.then((l) => { this.lost = `${l.reason}: ${l.message}`; });
  }

  /** The first adapter Dawn offers (high-performance preference), its device and the compiled pipeline. */
  static async create(): Promise<GpuMatmul> {
    const { device, info, constants, keepAlive } = await openWebGpu();
    device.pushErrorScope("validation");
    const module = device.createShaderModule({ code: MATMUL_WGSL });
    const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const err = await device.popErrorScope();
    if (err) throw new WebGpuError(`the matmul shader failed to compile: ${err.message}`);
    return new GpuMatmul(device, pipeline, info, constants, keepAlive);
  }

  /** The device's largest storage binding in bytes. */
  get maxBindingBytes(): number {
    return this.device.limits.maxStorageBufferBindingSize;
  }

  /**
   * C = A . B with the bits of kernels/reference.ts `matmulRef` (NaN results canonical, 0x7fc00000), layouts as
   * matmulRef. `a` and `b` are float32 bit patterns (a Float32Array's buffer viewed as u32).
   */
  async matmulBits(a: Uint32Array, b: Uint32Array, M: number, K: number, N: number, layout: MatmulLayout = "nn"): Promise<Uint32Array> {
    checkMatmulShapes(new Float32Array(a.buffer, a.byteOffset, a.length), new Float32Array(b.buffer, b.byteOffset, b.length), M, K, N);
    if (this.lost) throw new WebGpuError(`the WebGPU device was lost (${this.lost})`);
    if (M * N === 0 || K === 0) return new Uint32Array(M * N); // no block: C stays +0, as matmulRef
    const over = [["A", M * K], ["B", K * N], ["C", M * N]].find(([, n]) => 4 * (n as number) > this.maxBindingBytes);
    if (over) throw new WebGpuError(`matmul ${M}x${K}x${N}: ${over[0]} needs ${4 * (over[1] as number)} bytes, over the device's ${this.maxBindingBytes}-byte storage binding limit`);
    const gx = Math.ceil(N / WORKGROUP_X);
    const gy = Math.ceil(M / WORKGROUP_Y);
    const maxGroups = this.device.limits.maxComputeWorkgroupsPerDimension;
    if (gx > maxGroups || gy > maxGroups) throw new WebGpuError(`matmul ${M}x${K}x${N}: ${gx}x${gy} workgroups, over the device's ${maxGroups} per dimension`);
    const [aRow, aInner] = layout === "tn" ? [1, M] : [K, 1];
    const [bInner, bCol] = layout === "nt" ? [1, K] : [N, 1];
    const bufs = this.buffers(4 * M * K, 4 * K * N, 4 * M * N);
    const q = this.device.queue;
    q.writeBuffer(bufs.a, 0, new Uint32Array(a)); // a copy over a plain ArrayBuffer (the operands may sit in a SharedArrayBuffer)
    q.writeBuffer(bufs.b, 0, new Uint32Array(b));
    const U = this.k.GPUBufferUsage;
    const enc = this.device.createCommandEncoder();
    // one dispatch per 48-wide block of k, in ascending order: WebGPU orders dispatches and makes each one's
    // storage writes visible to the next, so C accumulates the blocks in the reference's order
    for (let k0 = 0; k0 < K; k0 += EXACT_BLOCK) {
      const dims = this.device.createBuffer({ size: 32, usage: U.UNIFORM | U.COPY_DST });
      q.writeBuffer(dims, 0, Uint32Array.of(M, K, N, aRow, aInner, bInner, bCol, k0));
      const bind = this.device.createBindGroup({
        layout: this.pipeline.getBindGroupLayout(0),
        entries: [
          { binding: 0, resource: { buffer: bufs.a, size: 4 * M * K } },
          { binding: 1, resource: { buffer: bufs.b, size: 4 * K * N } },
          { binding: 2, resource: { buffer: bufs.c, size: 4 * M * N } },
          { binding: 3, resource: { buffer: dims } },
        ],
      });
      const pass = enc.beginComputePass();
      pass.setPipeline(this.pipeline);
      pass.setBindGroup(0, bind);
      pass.dispatchWorkgroups(gx, gy);
      pass.end();
    }
    enc.copyBufferToBuffer(bufs.c, 0, bufs.read, 0, 4 * M * N);
    q.submit([enc.finish()]);
    await bufs.read.mapAsync(this.k.GPUMapMode.READ, 0, 4 * M * N);
    const out = new Uint32Array(bufs.read.getMappedRange(0, 4 * M * N).slice(0));
    bufs.read.unmap();
    if (this.lost) throw new WebGpuError(`the WebGPU device was lost (${this.lost})`);
    return out;
  }

  /** Frees the device. */
  destroy(): void {
    this.device.destroy();
  }

  private buffers(aBytes: number, bBytes: number, cBytes: number): NonNullable<GpuMatmul["bufs"]> {
    const cur = this.bufs;
    if (cur && cur.aBytes >= aBytes && cur.bBytes >= bBytes && cur.cBytes >= cBytes) return cur;
    for (const b of cur ? [cur.a, cur.b, cur.c, cur.read] : []) b.destroy();
    const U = this.k.GPUBufferUsage;
    const grow = (need: number, had = 0) => Math.max(need, had, 256);
    const sizes = { aBytes: grow(aBytes, cur?.aBytes), bBytes: grow(bBytes, cur?.bBytes), cBytes: grow(cBytes, cur?.cBytes) };
    this.bufs = {
      ...sizes,
      a: this.device.createBuffer({ size: sizes.aBytes, usage: U.STORAGE | U.COPY_DST }),
      b: this.device.createBuffer({ size: sizes.bBytes, usage: U.STORAGE | U.COPY_DST }),
      c: this.device.createBuffer({ size: sizes.cBytes, usage: U.STORAGE | U.COPY_SRC }),
      read: this.device.createBuffer({ size: sizes.cBytes, usage: U.MAP_READ | U.COPY_DST }),
    };
    return this.bufs;
  }
}
