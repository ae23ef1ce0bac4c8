/**
 * Which engine a run may use, decided from the manifest alone (no tfjs loaded: the CLI checks `--engine`
 * before it pays for the engine's modules).
 *
 *   pouw  the kernel layer (kernels/: wasm SIMD128 kernels equal to plain-JS references; tfjs-cpu underneath
 *         for what it does not cover), the same bits as cpu
 *   cpu   tfjs-cpu, the bitwise reference
 *   wasm  tfjs-wasm (XNNPACK): faster than cpu but other bits, so only for numerics "tolerance"
 *   webgpu numerics "bitwise-v3" only: its matmuls on a WebGPU device (webgpu/sync-kernels.ts), the rest on the pouw
 *         kernels; the same bits as pouw (reference-v3.ts defines them)
 */
import { InputError } from "../errors/index.ts";
import type { BackendName } from "./backend.ts";
import type { Manifest } from "./manifest.ts";

export const ENGINES = ["pouw", "cpu", "wasm", "webgpu"] as const satisfies readonly BackendName[];

/**
 * The engines whose results the manifest's numerics accept: "bitwise" the ones that give tfjs-cpu's bits,
 * "bitwise-v2" only pouw and "bitwise-v3" pouw or webgpu, whose own kernels define those bits
 * (kernels/transformer-ref.ts, kernels/reference-v3.ts; the WGSL kernels of webgpu/ exist for v3 only).
 */
export function enginesAllowed(numerics: Manifest["numerics"]): readonly BackendName[] {
  if (numerics === "bitwise-v3") return ["pouw", "webgpu"];
  if (isKernelNumerics(numerics)) return ["pouw"];
  return numerics === "bitwise" ? ["pouw", "cpu"] : ["pouw", "cpu", "wasm"];
}

/** Whether the numerics' bits are defined by the pouw kernels themselves (bitwise-v2, bitwise-v3), not by tfjs-cpu. */
export function isKernelNumerics(numerics: Manifest["numerics"]): numerics is "bitwise-v2" | "bitwise-v3" {
  return numerics === "bitwise-v2" || numerics === "bitwise-v3";
}

/** Whether the numerics compare state hashes bit for bit (recompute), rather than within a tolerance. */
export function isBitwiseNumerics(numerics: Manifest["numerics"]): boolean {
  return numerics !== "tolerance";
}

/**
 * The engine a run gets when the caller names none: 'pouw' for mnist-mlp (its kernel layer gives
 * tfjs-cpu's bits, test/ml/kernels.test.ts; ~19x faster per step) and for numerics "bitwise-v2" (the only
 * engine that has its bits), 'cpu' for a "bitwise" or "tolerance" char-transformer (tfjs-cpu's bits,
 * which the kernel layer does not reproduce for it). See docs/engine.md "Kernel layer".
 */
export function defaultBackend(manifest: Pick<Manifest, "model" | "numerics">): BackendName {
  // linear-tile: integer arithmetic in plain JS (BigInt), no tensor backend computes any of it; cpu is only the label
  return manifest.model.arch === "mnist-mlp" || isKernelNumerics(manifest.numerics) ? "pouw" : "cpu";
}

/** Throws InputError unless the manifest's numerics allow `engine`; `what` names where the engine came from. */
export function checkEngine(manifest: Pick<Manifest, "numerics">, engine: BackendName, what = "engine"): void {
  const allowed = enginesAllowed(manifest.numerics);
  if (allowed.includes(engine)) return;
  const why = isKernelNumerics(manifest.numerics)
    ? `the pouw kernels define ${manifest.numerics}'s bits; tfjs does not reproduce them${engine === "webgpu" ? " and the WebGPU kernels exist for bitwise-v3 only" : ""}`
    : engine === "webgpu" ? `the WebGPU kernels exist for numerics bitwise-v3 only` : `the engines that give tfjs-cpu's bits; ${engine} needs numerics "tolerance"`;
  throw new InputError(`${what} ${engine}: manifest numerics "${manifest.numerics}" runs only on ${allowed.join(" or ")} (${why})`);
}

/** Parses an `--engine` value against the manifest; throws InputError naming the choices. */
export function parseEngine(text: string, manifest: Pick<Manifest, "numerics">): BackendName {
  if (!(ENGINES as readonly string[]).includes(text)) throw new InputError(`--engine must be one of ${ENGINES.join(", ")}, got ${JSON.stringify(text)}`);
  const engine = text as BackendName;
  checkEngine(manifest, engine, "--engine");
  return engine;
}

/**
 * Parses a `--threads` value (default 1): an integer in [1, 64], and more than 1 only on the pouw engine
 * (kernels/threads.ts; threads change no bit, so a provider may use any count and an auditor one).
 */
export function parseThreads(text: string | undefined, engine: BackendName): number {
  if (text === undefined) return 1;
  if (!/^[1-9][0-9]*$/.test(text) || Number(text) > 64) throw new InputError(`--threads must be an integer in [1, 64], got ${JSON.stringify(text)}`);
  const n = Number(text);
  if (n > 1 && engine !== "pouw") throw new InputError(`--threads ${n}: only the pouw engine runs on threads (engine ${engine} is single-threaded)`);
  return n;
}
