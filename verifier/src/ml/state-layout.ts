/**
 * The tensor layout of a training state: the parameter specs of each model and the optimizer-state specs of
 * each optimizer, in the fixed order the checkpoint file, the state hash and the witnesses use. Pure data, no
 * tfjs and no backend: the models (models/mlp.ts, models/transformer.ts) and optimizers (optimizer.ts) take
 * their specs from here, and so does provenance/weights.ts, which the buyer dApp bundles to check h(t) of the
 * final weights in the browser.
 */
import { MNIST_CLASSES, MNIST_PIXELS } from "./data/mnist.ts";
import { VOCAB_SIZE } from "./data/sotu.ts";
import type { TensorSpec } from "./tensors.ts";

/** `vocab`: the vocabulary size V (absent: the SOTU corpus's fixed VOCAB_SIZE; a text data set by CID: its own). */
export type TransformerShape = { layers: number; dModel: number; heads: number; context: number; ffHidden: number; vocab?: number };

/** mnist-mlp: W1 [784,h], b1 [h], W2 [h,10], b2 [10]. */
export function mlpParamSpecs(hidden: number, inputs: number = MNIST_PIXELS, classes: number = MNIST_CLASSES): TensorSpec[] {
  return [
    { name: "W1", shape: [inputs, hidden] },
    { name: "b1", shape: [hidden] },
    { name: "W2", shape: [hidden, classes] },
    { name: "b2", shape: [classes] },
  ];
}

/**
 * char-transformer: tokEmb [V,d], posEmb [T,d], then per layer l: ln1.g, ln1.b [d], wq, wk, wv, wo [d,d], ln2.g,
 * ln2.b [d], w1 [d,F], b1 [F], w2 [F,d], b2 [d]; then lnf.g, lnf.b [d], head [d,V], headB [V].
 */
export function transformerParamSpecs(cfg: TransformerShape): TensorSpec[] {
  const { layers, dModel: d, context: T, ffHidden: F } = cfg;
  const V = cfg.vocab ?? VOCAB_SIZE;
  const specs: TensorSpec[] = [
    { name: "tokEmb", shape: [V, d] },
    { name: "posEmb", shape: [T, d] },
  ];
  for (let l = 0; l < layers; l++) {
    specs.push(
      { name: `l${l}.ln1.g`, shape: [d] }, { name: `l${l}.ln1.b`, shape: [d] },
      { name: `l${l}.wq`, shape: [d, d] }, { name: `l${l}.wk`, shape: [d, d] },
      { name: `l${l}.wv`, shape: [d, d] }, { name: `l${l}.wo`, shape: [d, d] },
      { name: `l${l}.ln2.g`, shape: [d] }, { name: `l${l}.ln2.b`, shape: [d] },
      { name: `l${l}.w1`, shape: [d, F] }, { name: `l${l}.b1`, shape: [F] },
      { name: `l${l}.w2`, shape: [F, d] }, { name: `l${l}.b2`, shape: [d] },
    );
  }
  specs.push({ name: "lnf.g", shape: [d] }, { name: "lnf.b", shape: [d] }, { name: "head", shape: [d, V] }, { name: "headB", shape: [V] });
  return specs;
}

/**
 * Optimizer state: SGD none; Adam m for every parameter (paramSpecs order), then v for every parameter, then
 * beta1^t and beta2^t as float32 scalars (optimizer.ts explains why the powers are state).
 */
export function optimizerStateSpecs(optimizer: "sgd" | "adam", paramSpecs: readonly TensorSpec[]): TensorSpec[] {
  if (optimizer === "sgd") return [];
  return [
    ...paramSpecs.map((s) => ({ name: `adam.m.${s.name}`, shape: s.shape })),
    ...paramSpecs.map((s) => ({ name: `adam.v.${s.name}`, shape: s.shape })),
    { name: "adam.beta1Power", shape: [1] },
    { name: "adam.beta2Power", shape: [1] },
  ];
}
