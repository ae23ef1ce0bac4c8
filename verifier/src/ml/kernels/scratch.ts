/**
 * Pass-scoped scratch memory for the transformer pass's temporaries (kernels/transformer.ts `transformerPass`).
 *
 * Why: a fresh Float32Array of a few MB costs its page faults and zero-fill on first touch (4-25 ms of CPU for 6 MB on
 * the shared build machine, against 0.3 ms to rewrite memory already mapped); a GPT-class step allocates ~0.7 GB of
 * activations and products, so fresh allocations were a third of its time. Inside `withScratch`, `scratchF32` hands
 * out views of chunks that stay mapped from one pass to the next; outside it, a fresh array.
 *
 * INVARIANT: a scratch view is valid until the next outermost `withScratch` begins; nothing may keep one past its
 * pass (the pass copies what it returns). INVARIANT: scratch memory is NOT zeroed: every caller writes every element
 * it reads, or fills it first. Neither changes a bit: allocation only decides where a value is stored.
 */

/** Chunks of at least this many bytes; a larger request gets a chunk of its own size. */
const CHUNK_BYTES = 64 << 20;
/** Above this many bytes in chunks, requests fall back to fresh arrays (memory over speed for very large models). */
const DEFAULT_CAP_BYTES = 4 * 2 ** 30;

class Arena {
  readonly chunks: ArrayBuffer[] = [];
  chunk = 0;
  offset = 0;
  bytes = 0;
  readonly capBytes: number;
  constructor(capBytes: number) {
    this.capBytes = capBytes;
  }

  reset(): void {
    this.chunk = 0;
    this.offset = 0;
  }

  f32(n: number): Float32Array {
    const need = (4 * n + 63) & ~63; // 64-byte alignment: whole cache lines per view
    while (this.chunk < this.chunks.length) {
      const c = this.chunks[this.chunk]!;
      if (this.offset + need <= c.byteLength) {
        const view = new Float32Array(c, this.offset, n);
        this.offset += need;
        return view;
      }
      this.chunk++;
      this.offset = 0;
    }
    if (this.bytes + Math.max(need, CHUNK_BYTES) > this.capBytes) return new Float32Array(n);
    const c = new ArrayBuffer(Math.max(need, CHUNK_BYTES));
    this.chunks.push(c);
    this.bytes += c.byteLength;
    this.chunk = this.chunks.length - 1;
    this.offset = need;
    return new Float32Array(c, 0, n);
  }
}

let arena: Arena | undefined;
let depth = 0;

/**
 * Runs `fn` with scratch allocation on; the outermost call first recycles every view the previous pass handed out.
 * Synchronous only (a single-threaded scope: nothing else runs while `fn` does).
 */
export function withScratch<T>(fn: () => T): T {
  arena ??= new Arena(DEFAULT_CAP_BYTES);
  if (depth === 0) arena.reset();
  depth++;
  try {
    return fn();
  } finally {
    depth--;
  }
}

/** `n` float32 values, NOT zeroed: a scratch view inside `withScratch`, else a fresh (zeroed) array. */
export function scratchF32(n: number): Float32Array {
  return depth > 0 ? arena!.f32(n) : new Float32Array(n);
}

/** Bytes the scratch chunks hold (mapped for the life of the process). */
export function scratchBytes(): number {
  return arena?.bytes ?? 0;
}
