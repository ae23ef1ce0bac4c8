/**
 * SGD and Adam as explicit float32 tf ops on the pinned backend.
 *
 * Optimizer state layout (the optimizerStateBytes of the state hash, in this order):
 *   SGD:  empty (plain SGD has no state: the next step depends on weights and batch only).
 *   Adam: m for every parameter (paramSpecs order), then v for every parameter, then
 *         beta1^t and beta2^t as float32 scalars (the bias corrections). Keeping the powers in the
 *         state, updated by one float32 multiplication per step, avoids Math.pow, whose last bit is
 *         not specified across JavaScript engines.
 *
 * Adam update (all float32): m' = b1*m + (1-b1)*g;  v' = b2*v + (1-b2)*g*g;
 *   p1' = p1*b1;  p2' = p2*b2;  w' = w - lr * (m' / (1-p1')) / (sqrt(v' / (1-p2')) + eps)
 *
 * With `kernels` (the "pouw" engine) the same updates run on the kernel layer (kernels/reference.ts
 * adamRef, sgdRef and their wasm twin), which reproduces these tf ops bit for bit.
 */
import { scoped, tf } from "./backend.ts";
import { adamPowers, adamScalars, sgdRef, type Kernels } from "./kernels/index.ts";
import type { OptimizerConfig } from "./manifest.ts";
import { optimizerStateSpecs } from "./state-layout.ts";
import { uninitializedFloat32 } from "./tensors.ts";
import type { TensorSpec } from "./tensors.ts";

export type UpdateResult = { params: Float32Array[]; opt: Float32Array[] };

export interface Optimizer {
  readonly name: string;
  stateSpecs(paramSpecs: readonly TensorSpec[]): TensorSpec[];
  initState(paramSpecs: readonly TensorSpec[]): Float32Array[];
  /**
   * One update with gradients `grads`; returns fresh arrays (inputs are never mutated). With `into` (a state the caller
   * hands back: it keeps no reference to it) the kernel Adam writes the next state into its arrays instead of fresh
   * memory; the other optimizers ignore it. The bits are the same either way.
   */
  apply(params: readonly Float32Array[], opt: readonly Float32Array[], grads: readonly Float32Array[], into?: Recycled): UpdateResult;
}

/** A state's arrays handed back for the next update to write into (segments.ts: the state two steps back). */
export type Recycled = { readonly params: readonly Float32Array[]; readonly opt: readonly Float32Array[] };

export function createOptimizer(cfg: OptimizerConfig, kernels?: Kernels): Optimizer {
  return cfg.name === "sgd" ? new Sgd(cfg.lr, kernels) : new Adam(cfg.lr, cfg.beta1, cfg.beta2, cfg.epsilon, kernels);
}

class Sgd implements Optimizer {
  readonly name = "sgd";
  readonly lr: number;
  private readonly kernels: Kernels | undefined;
  constructor(lr: number, kernels?: Kernels) {
    this.lr = lr;
    this.kernels = kernels;
  }
  stateSpecs(paramSpecs: readonly TensorSpec[]): TensorSpec[] {
    return optimizerStateSpecs("sgd", paramSpecs);
  }
  initState(): Float32Array[] {
    return [];
  }
  apply(params: readonly Float32Array[], _opt: readonly Float32Array[], grads: readonly Float32Array[]): UpdateResult {
    if (this.kernels) {
      const lr = Math.fround(this.lr);
      return {
        params: params.map((w, i) => {
          const out = new Float32Array(w.length);
          sgdRef(lr, w, grads[i]!, out);
          return out;
        }),
        opt: [],
      };
    }
    return scoped(() => {
      const lr = tf.scalar(this.lr);
      const next = params.map((w, i) => Float32Array.from(tf.sub(tf.tensor1d(w), tf.mul(lr, tf.tensor1d(grads[i]!))).dataSync()));
      return { params: next, opt: [] };
    });
  }
}

class Adam implements Optimizer {
  readonly name = "adam";
  readonly lr: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly epsilon: number;
  private readonly kernels: Kernels | undefined;
  constructor(lr: number, beta1: number, beta2: number, epsilon: number, kernels?: Kernels) {
    this.kernels = kernels;
    this.lr = lr;
    this.beta1 = beta1;
    this.beta2 = beta2;
    this.epsilon = epsilon;
  }
  stateSpecs(paramSpecs: readonly TensorSpec[]): TensorSpec[] {
    return optimizerStateSpecs("adam", paramSpecs);
  }
  initState(paramSpecs: readonly TensorSpec[]): Float32Array[] {
    return this.stateSpecs(paramSpecs).map((s) => (s.name.endsWith("Power") ? Float32Array.of(1) : new Float32Array(s.shape.reduce((a, b) => a * b, 1))));
  }
  apply(params: readonly Float32Array[], opt: readonly Float32Array[], grads: readonly Float32Array[], into?: Recycled): UpdateResult {
    const n = params.length;
    if (this.kernels) return this.applyKernels(this.kernels, params, opt, grads, into);
    return scoped(() => {
      const b1 = tf.scalar(this.beta1);
      const b2 = tf.scalar(this.beta2);
      const oneMinusB1 = tf.scalar(1 - this.beta1);
      const oneMinusB2 = tf.scalar(1 - this.beta2);
      const one = tf.scalar(1);
      const p1 = tf.mul(tf.tensor1d(opt[2 * n]!), b1);
      const p2 = tf.mul(tf.tensor1d(opt[2 * n + 1]!), b2);
      const c1 = tf.sub(one, p1);
      const c2 = tf.sub(one, p2);
      const lr = tf.scalar(this.lr);
      const eps = tf.scalar(this.epsilon);
      const nextParams: Float32Array[] = [];
      const nextM: Float32Array[] = [];
      const nextV: Float32Array[] = [];
      for (let i = 0; i < n; i++) {
        const g = tf.tensor1d(grads[i]!);
        const m = tf.add(tf.mul(b1, tf.tensor1d(opt[i]!)), tf.mul(oneMinusB1, g));
        const v = tf.add(tf.mul(b2, tf.tensor1d(opt[n + i]!)), tf.mul(oneMinusB2, tf.mul(g, g)));
        const update = tf.div(tf.div(m, c1), tf.add(tf.sqrt(tf.div(v, c2)), eps));
        nextParams.push(Float32Array.from(tf.sub(tf.tensor1d(params[i]!), tf.mul(lr, update)).dataSync()));
        nextM.push(Float32Array.from(m.dataSync()));
        nextV.push(Float32Array.from(v.dataSync()));
      }
      return { params: nextParams, opt: [...nextM, ...nextV, Float32Array.from(p1.dataSync()), Float32Array.from(p2.dataSync())] };
    });
  }

  private applyKernels(k: Kernels, params: readonly Float32Array[], opt: readonly Float32Array[], grads: readonly Float32Array[], into?: Recycled): UpdateResult {
    const n = params.length;
    const s = adamScalars(this);
    const { p1, p2, c1, c2 } = adamPowers(s, opt[2 * n]![0]!, opt[2 * n + 1]![0]!);
    const reuse = into ? recyclable(into, params, opt, grads) : undefined;
    // the next state's weights and moments are views of ONE unzeroed allocation (the kernel writes every element):
    // a fresh zeroed Float32Array per tensor cost ~0.1 ms per mnist-mlp step (docs/engine.md "Kernel layer"); with a
    // handed-back state they are its arrays (a fresh 130 MB GPT-class state cost ~440 ms of page faults per step)
    const total = params.reduce((sum, w) => sum + w.length, 0);
    const all = reuse ? undefined : uninitializedFloat32(3 * total);
    const nextParams: Float32Array[] = [];
    const nextM: Float32Array[] = [];
    const nextV: Float32Array[] = [];
    let at = 0;
    for (let i = 0; i < n; i++) {
      const len = params[i]!.length;
      const w = reuse ? reuse.params[i]! : all!.subarray(at, at + len);
      const m = reuse ? reuse.opt[i]! : all!.subarray(total + at, total + at + len);
      const v = reuse ? reuse.opt[n + i]! : all!.subarray(2 * total + at, 2 * total + at + len);
      at += len;
      k.adam(s, c1, c2, params[i]!, opt[i]!, opt[n + i]!, grads[i]!, w, m, v);
      nextParams.push(w);
      nextM.push(m);
      nextV.push(v);
    }
    const powers = reuse ? [reuse.opt[2 * n]!, reuse.opt[2 * n + 1]!] : [new Float32Array(1), new Float32Array(1)];
    powers[0]![0] = p1;
    powers[1]![0] = p2;
    return { params: nextParams, opt: [...nextM, ...nextV, powers[0]!, powers[1]!] };
  }
}

/**
 * `into` when it can take the next Adam state: the same tensor sizes as the state it follows, and no array sharing
 * memory with an input (INVARIANT: an update never writes where it reads another element). A state that does not fit
 * is refused with the reason: a hand-back that silently fell back to fresh memory would hide a caller's bug.
 */
function recyclable(into: Recycled, params: readonly Float32Array[], opt: readonly Float32Array[], grads: readonly Float32Array[]): Recycled {
  const n = params.length;
  if (into.params.length !== n || into.opt.length !== 2 * n + 2) {
    throw new RangeError(`Adam: a handed-back state has ${into.params.length} weight and ${into.opt.length} optimizer tensors, the update ${n} and ${2 * n + 2}`);
  }
  const inputs = new Set<ArrayBufferLike>([...params, ...opt, ...grads].map((a) => a.buffer));
  const outs = [...into.params, ...into.opt];
  for (let i = 0; i < outs.length; i++) {
    const o = outs[i]!;
    const want = i < n ? params[i]!.length : opt[i - n]!.length;
    if (o.length !== want) throw new RangeError(`Adam: handed-back tensor ${i} has ${o.length} elements, the update writes ${want}`);
    if (inputs.has(o.buffer)) throw new RangeError(`Adam: handed-back tensor ${i} shares memory with the update's inputs (a state still in use cannot be recycled)`);
  }
  return into;
}
