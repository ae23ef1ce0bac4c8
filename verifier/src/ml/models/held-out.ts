/**
 * The progress check's verifier-held batches (checks/progress.ts): examples of a run's held-out split chosen by the
 * auditor's private seed, which the provider never trains on. Each model class picks the one its data needs.
 */
import { MNIST_PIXELS } from "../data/mnist.ts";
import { Rng } from "../prng.ts";
import type { Batch, Dataset } from "./types.ts";

/** Up to `examples` images (feature rows of `data.width`) of the test split, a seeded sample without repetition. */
export function heldOutImages(data: Dataset, auditorSeed: number, examples: number): Batch {
  if (data.kind !== "images") throw new TypeError(`a held-out image batch needs image data, not ${data.kind}`);
  const n = Math.min(examples, data.test.count);
  const pick = new Rng(auditorSeed, "progress-batch").permutation(data.test.count).subarray(0, n);
  const D = data.width ?? MNIST_PIXELS;
  const x = new Float32Array(n * D);
  const y = new Uint8Array(n);
  const targets = data.test.targets ? new Float32Array(n) : undefined;
  pick.forEach((src, i) => {
    x.set(data.test.images.subarray(src * D, (src + 1) * D), i * D);
    y[i] = data.test.labels[src]!;
    if (targets) targets[i] = data.test.targets![src]!;
  });
  return targets ? { kind: "images", size: n, x, y, targets } : { kind: "images", size: n, x, y };
}

/** Up to min(`examples`, 32) windows of `context` + 1 tokens at seeded offsets of the held-out tail. */
export function heldOutWindows(data: Dataset, auditorSeed: number, examples: number, context: number): Batch {
  if (data.kind !== "tokens") throw new TypeError(`held-out text windows need token data, not ${data.kind}`);
  const T = context;
  const rng = new Rng(auditorSeed, "progress-windows");
  const n = Math.min(examples, 32);
  const tokens = new Uint8Array(n * (T + 1));
  for (let i = 0; i < n; i++) {
    const s = rng.nextInt(data.test.length - T);
    tokens.set(data.test.subarray(s, s + T + 1), i * (T + 1));
  }
  return { kind: "tokens", size: n, tokens };
}
