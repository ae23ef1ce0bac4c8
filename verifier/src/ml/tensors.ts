/**
 * Fixed-order tensor lists: the layout shared by state hashing, checkpoints and witnesses.
 */
export type TensorSpec = { readonly name: string; readonly shape: readonly number[] };

export function sizeOf(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/**
 * A Float32Array of `n` elements whose contents are NOT zeroed (Node's Buffer.allocUnsafe; a plain zeroed
 * Float32Array where Buffer is absent, e.g. the dApp bundle). Only for arrays the caller writes in full before
 * anyone reads them (kernel outputs, the next training state): it skips the zero-fill, ~0.1 ms per 1.2 MB.
 * Only arrays too large for Node's Buffer pool take this path, so every such array has an ArrayBuffer of its own
 * (byteOffset 0); smaller ones are ordinary zeroed Float32Arrays.
 */
export function uninitializedFloat32(n: number): Float32Array {
  const B = (globalThis as { Buffer?: { allocUnsafe(size: number): Uint8Array; poolSize: number } }).Buffer;
  if (!B || 4 * n < Math.max(4096, B.poolSize >>> 1)) return new Float32Array(n);
  const bytes = B.allocUnsafe(4 * n);
  return new Float32Array(bytes.buffer, bytes.byteOffset, n);
}

const LITTLE_ENDIAN = new Uint8Array(Float32Array.of(1).buffer)[3] === 0x3f;

/**
 * The little-endian bytes of float32 arrays as a list of chunks whose concatenation is
 * float32Bytes(arrays): views of the arrays themselves on little-endian hosts (no copy), one
 * converted buffer otherwise. For hashing a state in place (trace hashBytes takes chunks).
 */
export function float32Chunks(arrays: readonly Float32Array[]): Uint8Array[] {
  if (!LITTLE_ENDIAN) return [float32Bytes(arrays)];
  return arrays.map((a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
}

/** Concatenates float32 arrays as little-endian bytes (the weightsBytes / optimizerStateBytes). */
export function float32Bytes(arrays: readonly Float32Array[]): Uint8Array {
  const total = arrays.reduce((n, a) => n + a.length, 0);
  const out = new Uint8Array(total * 4);
  let offset = 0;
  if (LITTLE_ENDIAN) {
    // typed arrays use the platform byte order; on little-endian hosts a byte copy is the encoding
    for (const a of arrays) {
      out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), offset);
      offset += a.byteLength;
    }
    return out;
  }
  const view = new DataView(out.buffer);
  for (const a of arrays) {
    for (let i = 0; i < a.length; i++, offset += 4) view.setFloat32(offset, a[i]!, true);
  }
  return out;
}

/** Rounds a float32 value to the nearest IEEE half-precision value (ties to even), back as a number. */
export function roundToHalf(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const ax = Math.abs(x);
  if (ax >= 65520) return x > 0 ? Infinity : -Infinity;
  // exponent of x; half has 10 fraction bits, subnormals below 2^-14 have a fixed 2^-24 quantum.
  let e = Math.floor(Math.log2(ax));
  if (2 ** e > ax) e -= 1;
  if (2 ** (e + 1) <= ax) e += 1;
  const quantum = 2 ** (Math.max(e, -14) - 10);
  const q = ax / quantum; // exact: quantum is a power of two
  let r = Math.floor(q);
  const frac = q - r;
  if (frac > 0.5 || (frac === 0.5 && r % 2 === 1)) r += 1;
  return Math.sign(x) * r * quantum;
}
