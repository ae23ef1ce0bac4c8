/**
 * Numeric backend selection and pinning.
 *
 * Bitwise mode runs only on the TensorFlow.js CPU backend (plain JavaScript float64 arithmetic
 * rounded to float32 on every store, no threads, no SIMD): see docs/determinism.md. tfjs silently
 * falls back to another registered backend when one fails to initialise, so the engine checks
 * `tf.getBackend()` after selecting it and before every step, and refuses to run otherwise.
 *
 * "pouw" is the engine's own kernel layer (kernels/: plain-JS reference kernels that define the bits,
 * wasm SIMD128 versions equal to them) for the mnist-mlp step and the optimizers, with the same bits
 * as "cpu" (test/ml/kernels.test.ts); tfjs stays pinned to its CPU backend underneath for everything
 * the kernel layer does not cover (evaluation, per-example outputs, char-transformer).
 *
 * "webgpu" (numerics bitwise-v3 only) runs the transformer's matmuls on a WebGPU device (webgpu/sync-kernels.ts)
 * and everything else as "pouw" does; tfjs stays pinned to its CPU backend as for "pouw".
 */
import * as tf from "@tensorflow/tfjs-core";
import "@tensorflow/tfjs-backend-cpu";
import { BackendError } from "./errors.ts";

export type BackendName = "cpu" | "wasm" | "pouw" | "webgpu";

/** The tfjs backend an engine runs its tf ops on. */
export function tfBackendOf(name: BackendName): "cpu" | "wasm" {
  return name === "pouw" || name === "webgpu" ? "cpu" : name;
}

/** Engines whose bits are the CPU reference's (allowed for numerics "bitwise"). */
export function isBitwiseBackend(name: BackendName): boolean {
  return name === "cpu" || name === "pouw";
}

/** The CPU backend's matMul block size: part of the summation order, so part of the result bits. */
export const CPU_MATMUL_BLOCK_SIZE = 48;

let prodModeSet = false;

/** Selects `name` and checks it is really active. Idempotent. */
export async function useBackend(engine: BackendName): Promise<typeof tf> {
  const name = tfBackendOf(engine);
  if (!prodModeSet) {
    // PROD mode only silences warnings (the "install tfjs-node" banner) and debug checks; it does
    // not change any kernel.
    tf.enableProdMode();
    prodModeSet = true;
  }
  if (name === "wasm") await import("@tensorflow/tfjs-backend-wasm");
  let ok: boolean;
  try {
    ok = await tf.setBackend(name);
  } catch (err) {
    throw new BackendError(`backend '${name}' failed to initialise`, { cause: err });
  }
  await tf.ready();
  if (!ok || tf.getBackend() !== name) throw new BackendError(`backend '${name}' is not active (got '${tf.getBackend()}')`);
  if (name === "cpu") {
    const blockSize = (tf.backend() as unknown as { blockSize?: number }).blockSize;
    if (blockSize !== CPU_MATMUL_BLOCK_SIZE) {
      throw new BackendError(`cpu backend matMul block size is ${blockSize}, bitwise mode needs ${CPU_MATMUL_BLOCK_SIZE} (tfjs version drift)`);
    }
  }
  return tf;
}

let gradientsRegistered = false;

/**
 * Registers the gradient functions tf.valueAndGrads needs (char-transformer). tfjs-core's CommonJS
 * build ships none and its ESM build is not loadable by Node (extensionless imports), so they come
 * from the @tensorflow/tfjs bundle, which registers them into tfjs's global registry on import.
 * The bundle also registers the webgl backend; the active backend is re-checked afterwards.
 */
export async function registerGradients(): Promise<void> {
  if (gradientsRegistered) return;
  const active = tf.getBackend();
  await import("@tensorflow/tfjs");
  gradientsRegistered = true;
  if (tf.getBackend() !== active) throw new BackendError(`importing @tensorflow/tfjs switched the backend from '${active}' to '${tf.getBackend()}'`);
}

/** Throws unless `name` is the active backend (checked before every step). */
export function assertBackend(engine: BackendName): void {
  const name = tfBackendOf(engine);
  const active = tf.getBackend();
  if (active !== name) throw new BackendError(`active backend is '${active}', the run was pinned to '${name}'${engine === name ? "" : ` (engine '${engine}')`}`);
}

export { tf };

/**
 * Runs `fn` in a tensor scope and disposes every tensor it created, deterministically, when it
 * returns or throws. `fn` must return plain data (no tensors). Unlike tf.tidy this never walks the
 * result (tf.tidy enumerates every element of returned typed arrays).
 */
export function scoped<T>(fn: () => T): T {
  const engine = tf.engine();
  engine.startScope();
  try {
    return fn();
  } finally {
    engine.endScope();
  }
}
