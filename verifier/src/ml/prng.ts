/**
 * Seeded pseudo-random numbers for initialisation, data splits and batch order.
 *
 * Integer-only arithmetic (Math.imul, shifts) so the output is identical on every JavaScript
 * engine; no Math.random, no transcendental functions. Streams are derived from (seed, label,
 * index) so that, e.g., the permutation of epoch e is computable without generating epochs 0..e-1.
 */

/** splitmix32 finaliser: a bijective 32-bit mixer. */
function mix32(x: number): number {
  x = (x + 0x9e3779b9) | 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** FNV-1a of a label, so streams can be named ("init", "split", "epoch"). */
function hashLabel(label: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** sfc32 generator (small fast counting, 128-bit state; passes PractRand to 2^40+). */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** A stream fixed by (seed, label, index...). */
  constructor(seed: number, label: string, ...index: number[]) {
    let s = mix32(seed >>> 0);
    s = mix32(s ^ hashLabel(label));
    for (const i of index) s = mix32(s ^ (i >>> 0)) ^ mix32((i / 0x1_0000_0000) >>> 0);
    this.a = mix32(s ^ 1);
    this.b = mix32(s ^ 2);
    this.c = mix32(s ^ 3);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.nextU32();
  }

  /**
   * A stream keyed by 128 bits: the first 16 bytes of `key` (big-endian words) are sfc32's whole state
   * (a, b, c and the counter d). For streams that must not collide between jobs (the data order, ml/salt.ts):
   * the (seed, label, index) constructor funnels everything through one 32-bit value, so two of its
   * streams coincide with probability 2^-32; two keyed streams with 2^-128.
   */
  static fromKey(key: Uint8Array): Rng {
    if (key.length < 16) throw new RangeError(`Rng.fromKey needs at least 16 key bytes, got ${key.length}`);
    const r = new Rng(0, "key");
    const view = new DataView(key.buffer, key.byteOffset, 16);
    r.a = view.getUint32(0) | 0;
    r.b = view.getUint32(4) | 0;
    r.c = view.getUint32(8) | 0;
    r.d = view.getUint32(12) | 0;
    for (let i = 0; i < 12; i++) r.nextU32();
    return r;
  }

  nextU32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1) with 24 random bits: exactly representable in float32. */
  nextFloat(): number {
    return (this.nextU32() >>> 8) / 16777216;
  }

  /** Uniform integer in [0, n) without modulo bias (n <= 2^32). */
  nextInt(n: number): number {
    if (n <= 0) throw new RangeError(`nextInt(${n})`);
    const limit = Math.floor(0x1_0000_0000 / n) * n;
    for (;;) {
      const x = this.nextU32();
      if (x < limit) return x % n;
    }
  }

  /** Uniform float32 values in [-bound, bound): bound * (2u - 1), rounded once to float32. */
  uniform(count: number, bound: number): Float32Array {
    const out = new Float32Array(count);
    for (let i = 0; i < count; i++) out[i] = bound * (2 * this.nextFloat() - 1);
    return out;
  }

  /** Fisher-Yates permutation of 0..n-1. */
  permutation(n: number): Uint32Array {
    const p = new Uint32Array(n);
    for (let i = 0; i < n; i++) p[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = this.nextInt(i + 1);
      const tmp = p[i]!;
      p[i] = p[j]!;
      p[j] = tmp;
    }
    return p;
  }
}
