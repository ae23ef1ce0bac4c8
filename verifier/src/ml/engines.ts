/**
 * Which engine a run may use, decided from the manifest alone (no tfjs loaded: the CLI checks `--engine`
 * before it pays for the engine's modules).
 *
 *   pouw  the kernel layer (kernels/: wasm SIMD128 kernels equal to plain-JS references; tfjs-cpu underneath
 *         for what it does not cover), the same bits as cpu
 *   cpu   tfjs-cpu, the bitwise reference
 *   wasm  tfjs-wasm (XNNPACK): faster than cpu but other bits, so only for numerics "tolerance"
 */
import { InputError } from "../errors/index.ts";
import type { BackendName } from "./backend.ts";
import type { Manifest } from "./manifest.ts";

export const ENGINES = ["pouw", "cpu", "wasm"] as const satisfies readonly BackendName[];

/** The engines whose results the manifest's numerics accept ("bitwise": the ones that give tfjs-cpu's bits). */
export function enginesAllowed(numerics: Manifest["numerics"]): readonly BackendName[] {
  return numerics === "bitwise" ? ["pouw", "cpu"] : ENGINES;
}

/**
 * The engine a run gets when the caller names none: 'pouw' for mnist-mlp (its kernel layer gives
 * tfjs-cpu's bits, test/ml/kernels.test.ts; ~19x faster per step), 'cpu' for char-transformer (not covered by
 * the kernel layer). See docs/engine.md "Kernel layer".
 */
export function defaultBackend(manifest: Pick<Manifest, "model">): BackendName {
  // linear-tile: integer arithmetic in plain JS (BigInt), no tensor backend computes any of it; cpu is only the label
  return manifest.model.arch === "mnist-mlp" ? "pouw" : "cpu";
}

/** Throws InputError unless the manifest's numerics allow `engine`; `what` names where the engine came from. */
export function checkEngine(manifest: Pick<Manifest, "numerics">, engine: BackendName, what = "engine"): void {
  const allowed = enginesAllowed(manifest.numerics);
  if (allowed.includes(engine)) return;
  throw new InputError(
    `${what} ${engine}: manifest numerics "${manifest.numerics}" runs only on ${allowed.join(" or ")} (the engines that give tfjs-cpu's bits; ${engine} needs numerics "tolerance")`,
  );
}

/** Parses an `--engine` value against the manifest; throws InputError naming the choices. */
export function parseEngine(text: string, manifest: Pick<Manifest, "numerics">): BackendName {
  if (!(ENGINES as readonly string[]).includes(text)) throw new InputError(`--engine must be one of ${ENGINES.join(", ")}, got ${JSON.stringify(text)}`);
  const engine = text as BackendName;
  checkEngine(manifest, engine, "--engine");
  return engine;
}
