/**
 * The ONE step function, shared by the provider's trainer and the auditor's recompute.
 *
 * @example
 *   const run = await createRun(manifest, { jobId: 7n, salt: deploymentSalt(deployment, 7n) });
 *   let state = run.initState();                    // or run.loadCheckpoint(bytes, { step })
 *   for (let t = 1; t <= 10; t++) {
 *     const { state: next, loss } = run.step(state, t);
 *     console.log(t, loss, run.stateHashOf(next));  // h(t)
 *     state = next;
 *   }
 *
 * `step` is a pure function of (state, t): the batch is `batchFor(t)`, a pure function of
 * (manifest.data.seed, the job's salt, t) (salt.ts), so no two jobs share a trajectory; the state
 * carries weights and optimizer state as float32 arrays that are never mutated. Tensors live only
 * inside scoped() blocks (backend.ts) and are disposed when they return.
 */
import type { Hex } from "viem";
import { assertBackend, registerGradients, useBackend, type BackendName } from "./backend.ts";
import { defaultBackend, enginesAllowed, isKernelNumerics } from "./engines.ts";
import { fastestTransformerKernelsV3 } from "./kernels/transformer-v3.ts";
import { fastestKernels, fastestTransformerKernels, MAX_THREADS, ThreadedKernels, type Kernels, type TransformerKernels } from "./kernels/index.ts";
import { checkpointSizeBound, decodeCheckpoint, encodeCheckpoint } from "./checkpoint.ts";
import { decodeBase, LoraTransformer } from "./adapters/index.ts";
import { decodeTeacher, DistilledTransformer, teacherShape } from "./distill/index.ts";
import { optimizerStateSpecs, transformerParamSpecs } from "./state-layout.ts";
import { loadMnist, MNIST_PIXELS } from "./data/mnist.ts";
import { loadSotu } from "./data/sotu.ts";
import { DataError, ManifestError } from "./errors.ts";
import { InputError } from "../errors/index.ts";
import { manifestHash as hashManifest, stateDigestOf, tabularOutputs, type Manifest } from "./manifest.ts";
import { MnistMlp } from "./models/mlp.ts";
import { CharTransformer } from "./models/transformer.ts";
import { LinearTile, tileBatchOf, type TileBatch } from "./models/linear-tile.ts";
import { loadCommitter } from "../zk/commit.ts";
import type { Batch, Dataset, Evaluation, Model, StepWitness } from "./models/types.ts";
import { createOptimizer, type Optimizer, type Recycled } from "./optimizer.ts";
import { dataOrderRng, parseSalt } from "./salt.ts";
import { float32Bytes, float32Chunks, sizeOf, type TensorSpec } from "./tensors.ts";
import { canonicalNaNArrays, tensorStateHash, type StateDigest } from "../trace/index.ts";
import type { ContentStore } from "../store/index.ts";
import { checkCorpusBytes } from "./data/corpus.ts";
import { loadTabularCorpus, loadTextCorpus } from "../data/load.ts";

/** Weights and optimizer state after `step` updates (step 0 = initial state). */
export type TrainState = {
  readonly step: number;
  readonly params: readonly Float32Array[];
  readonly opt: readonly Float32Array[];
};

export type StepResult = { state: TrainState; loss: number; witness?: StepWitness };

export type RunOptions = {
  /** The on-chain job id, bound into every state hash. */
  jobId: bigint;
  /**
   * The job's salt (salt.ts: keccak256(abi.encode(chainId, jobMarket, jobId)) for an on-chain job,
   * offlineSalt(jobId) offline); the data order derives from it. Provider, auditor, bot and panel must
   * pass the same value, or their batches differ from step 1.
   */
  salt: Hex;
  /**
   * The engine: 'cpu' (tfjs-cpu), 'pouw' (the kernel layer, kernels/: the same bits as 'cpu' for
   * mnist-mlp and both optimizers, tfjs-cpu for the rest) or 'wasm' (tfjs-wasm, tolerance only).
   * Defaults to `defaultBackend(manifest)`. Bitwise manifests refuse 'wasm'.
   */
  backend?: BackendName;
  /** With backend 'pouw': the kernels to run (default `fastestKernels()`; tests pass the JS reference). */
  kernels?: Kernels;
  /**
   * With numerics 'bitwise-v2' or 'bitwise-v3': the transformer kernels of that numerics (default `fastestTransformerKernels()`,
   * resp. `fastestTransformerKernelsV3()`, threaded with `threads` > 1; tests pass the JS reference).
   */
  transformerKernels?: TransformerKernels;
  /**
   * With backend 'pouw': threads for the large matmuls (kernels/threads.ts, split by output rows; default
   * 1). Changes no bit: an auditor on one thread recomputes the same states. `run.close()` ends the workers.
   */
  threads?: number;
  /**
   * The content store a data set by content id (tabular-mlp) is fetched from; the bytes are checked against the
   * manifest's contentId. Without it such a manifest is refused (DataError).
   */
  store?: ContentStore;
};

export class Run {
  readonly manifest: Manifest;
  readonly manifestHash: Hex;
  readonly jobId: bigint;
  /** The job's salt: the data order is a function of (manifest.data.seed, salt, t). */
  readonly salt: Hex;
  readonly backend: BackendName;
  /** The manifest's state-digest scheme (trace/digest.ts): how stateHashOf hashes a state. */
  readonly stateDigest: StateDigest;
  readonly model: Model;
  readonly optimizer: Optimizer;
  readonly paramSpecs: readonly TensorSpec[];
  readonly optSpecs: readonly TensorSpec[];
  readonly data: Dataset;
  private readonly epochCache = new Map<number, Uint32Array>();
  /** step()'s gradients (models that take `gradsInto`): consumed by the update before step() returns, so reused. */
  private stepGrads: Float32Array[] | undefined;

  /** The kernels of a 'pouw' run ("wasm-simd128" or the "js" reference), undefined otherwise. */
  readonly kernels: Kernels | undefined;

  constructor(manifest: Manifest, job: { jobId: bigint; salt: Hex }, backend: BackendName, model: Model, data: Dataset, kernels?: Kernels) {
    this.manifest = manifest;
    this.manifestHash = hashManifest(manifest);
    this.jobId = job.jobId;
    this.salt = job.salt;
    this.backend = backend;
    this.stateDigest = stateDigestOf(manifest);
    this.model = model;
    this.kernels = kernels;
    this.optimizer = createOptimizer(manifest.optimizer, kernels);
    this.paramSpecs = model.paramSpecs;
    this.optSpecs = this.optimizer.stateSpecs(model.paramSpecs);
    this.data = data;
  }

  get batchSize(): number {
    return this.manifest.training.batchSize;
  }

  /** h(0) state from the init seed. (A base-checkpoint manifest needs `initFromStore`.) */
  initState(): TrainState {
    const init = this.manifest.init;
    // an adapter job's h(0): the adapter from adapter.seed (B zero) over the base the run already holds
    if (this.manifest.adapter) return { step: 0, params: this.model.init(this.manifest.adapter.seed), opt: this.optimizer.initState(this.paramSpecs) };
    if (!("seed" in init)) throw new ManifestError("manifest field init: uses checkpointCid; call initFromStore");
    return { step: 0, params: this.model.init(init.seed), opt: this.optimizer.initState(this.paramSpecs) };
  }

  /**
   * h(0) state from the manifest's base checkpoint (fine-tuning, manifest init.optimizerState "fresh"): the base's
   * weights and a FRESH optimizer state (the one initState gives), step 0. IMPORTANT: never the base's optimizer state:
   * its Adam powers are those of the base's last step and its moments are the buyer's data, while the state screen and
   * the magnitude check derive every bound from a step-0 optimizer state (docs/checks.md "Fine-tuning jobs").
   */
  async initFromStore(store: ContentStore): Promise<TrainState> {
    const init = this.manifest.init;
    if (!("checkpointCid" in init) || this.manifest.adapter) return this.initState();
    const bytes = await store.get(init.checkpointCid);
    const base = decodeCheckpoint(bytes, this.paramSpecs, this.optSpecs, { model: this.model.arch, optimizer: this.optimizer.name });
    return { step: 0, params: base.params, opt: this.optimizer.initState(this.paramSpecs) };
  }

  /** The batch of step t (t >= 1): a pure function of (manifest.data.seed, salt, t). */
  batchFor(t: number): Batch {
    if (!Number.isInteger(t) || t < 1) throw new RangeError(`batchFor(${t}): steps start at 1`);
    const B = this.batchSize;
    const seed = this.manifest.data.seed;
    if (this.data.kind === "images") {
      // epoch permutations: step t takes positions ((t-1) mod E)*B .. +B of permutation(seed, epoch)
      const train = this.data.train;
      const perEpoch = Math.floor(train.count / B);
      const epoch = Math.floor((t - 1) / perEpoch);
      let perm = this.epochCache.get(epoch);
      if (!perm) {
        perm = dataOrderRng(this.salt, seed, "epoch", epoch).permutation(train.count);
        if (this.epochCache.size > 4) this.epochCache.clear();
        this.epochCache.set(epoch, perm);
      }
      const start = ((t - 1) % perEpoch) * B;
      const D = this.data.width ?? MNIST_PIXELS;
      const x = new Float32Array(B * D);
      const y = new Uint8Array(B);
      const targets = train.targets ? new Float32Array(B) : undefined;
      for (let i = 0; i < B; i++) {
        const src = perm[start + i]!;
        x.set(train.images.subarray(src * D, (src + 1) * D), i * D);
        y[i] = train.labels[src]!;
        if (targets) targets[i] = train.targets![src]!;
      }
      return targets ? { kind: "images", size: B, x, y, targets } : { kind: "images", size: B, x, y };
    }
    const T = this.contextLength();
    const text = this.data.train;
    const rng = dataOrderRng(this.salt, seed, "windows", t);
    const tokens = new Uint8Array(B * (T + 1));
    for (let i = 0; i < B; i++) {
      const start = rng.nextInt(text.length - T);
      tokens.set(text.subarray(start, start + T + 1), i * (T + 1));
    }
    return { kind: "tokens", size: B, tokens };
  }

  private contextLength(): number {
    const m = this.manifest.model;
    return m.arch === "char-transformer" ? m.context : 0;
  }

  /**
   * Loss and gradients of `params` on `batch` (the expensive part of a step). With `gradsInto` a model that supports it
   * writes the gradients there instead of fresh arrays.
   */
  gradients(params: readonly Float32Array[], batch: Batch, options: { witness?: boolean; gradsInto?: Float32Array[] } = {}) {
    this.checkBackend();
    return this.model.lossAndGrads(params, batch, options);
  }

  /**
   * The optimizer update with given gradients: state t-1 -> state t. `into`: a state the caller hands back (it keeps
   * no reference to it, and it shares no array with `state`); the update may write state t into its arrays.
   */
  applyUpdate(state: TrainState, grads: readonly Float32Array[], into?: Recycled): TrainState {
    this.checkBackend();
    // the class's step is one fused update (exactStep); a separate optimizer update would be another step
    if (this.model.exactStep) throw new InputError(`${this.model.arch} has no separate optimizer update: its step is the circuit's fused one (Run.step)`);
    const { params, opt } = this.optimizer.apply(state.params, state.opt, grads, into);
    return { step: state.step + 1, params, opt };
  }

  /**
   * Step t: state t-1 -> state t on batchFor(t). With `witness` (mnist-mlp only) also returns
   * every matrix product and elementwise intermediate of the step. With `into` (a state handed back, see applyUpdate)
   * the update may write state t into its arrays: the same bits, without a fresh state's page faults.
   */
  step(state: TrainState, t: number = state.step + 1, options: { witness?: boolean; into?: Recycled } = {}): StepResult {
    if (t !== state.step + 1) throw new RangeError(`step(${t}) needs state ${t - 1}, got state ${state.step}`);
    if (options.witness && !this.model.witnessed) throw new InputError(`step witnesses exist for mnist-mlp and bitwise-v2/bitwise-v3 char-transformer runs, not for this ${this.model.arch} run (numerics ${this.manifest.numerics})`);
    if (this.model.exactStep) {
      const r = this.model.exactStep(state.params, this.batchFor(t));
      return { state: { step: t, params: r.params, opt: state.opt }, loss: r.loss };
    }
    // the gradients never leave step(): the update consumes them, so one set of arrays serves every step
    if (this.model.takesGradsInto && !options.witness) this.stepGrads ??= this.paramSpecs.map((s) => new Float32Array(sizeOf(s.shape)));
    const g = this.gradients(state.params, this.batchFor(t), { witness: options.witness, ...(this.stepGrads && !options.witness ? { gradsInto: this.stepGrads } : {}) });
    const next = this.applyUpdate(state, g.grads, options.into);
    return g.witness ? { state: next, loss: g.loss, witness: g.witness } : { state: next, loss: g.loss };
  }

  weightsBytes(state: TrainState): Uint8Array {
    return float32Bytes(state.params);
  }

  optimizerStateBytes(state: TrainState): Uint8Array {
    return float32Bytes(state.opt);
  }

  /**
   * h(t) of the state (t = state.step unless given) under the manifest's state digest (trace/digest.ts
   * `tensorStateHash`, the one function every state hash goes through).
   */
  stateHashOf(state: TrainState, t: number = state.step): Hex {
    if (this.model.stateHash) return this.model.stateHash(this.jobId, t, state.params, state.opt);
    return tensorStateHash(this.stateDigest, this.jobId, t, float32Chunks(state.params), float32Chunks(state.opt));
  }

  /**
   * The state as a checkpoint file. Under the NaN-canonical digest (sha256-v2) every NaN is stored as 0x7FC00000 too,
   * so a diverged state's checkpoint has one CID on every architecture and loads to bytes that hash to its leaf;
   * under the older digests the bytes are the state's own (their leaves hash the raw NaN bits).
   */
  checkpointBytes(state: TrainState): Uint8Array {
    const canonical = this.stateDigest === "sha256-v2";
    return encodeCheckpoint(this.paramSpecs, this.optSpecs, {
      metadata: { step: state.step, jobId: this.jobId, manifestHash: this.manifestHash, model: this.model.arch, optimizer: this.optimizer.name },
      params: canonical ? canonicalNaNArrays(state.params) : [...state.params],
      opt: canonical ? canonicalNaNArrays(state.opt) : [...state.opt],
    });
  }

  /** Decodes a checkpoint of this run; `step` pins the expected step (e.g. the segment start). */
  loadCheckpoint(bytes: Uint8Array, expect: { step?: number; jobId?: bigint } = {}): TrainState {
    const c = decodeCheckpoint(bytes, this.paramSpecs, this.optSpecs, {
      step: expect.step,
      jobId: expect.jobId ?? this.jobId,
      manifestHash: this.manifestHash,
      model: this.model.arch,
      optimizer: this.optimizer.name,
    });
    this.model.checkState?.(c.params);
    return { step: c.metadata.step, params: c.params, opt: c.opt };
  }

  /**
   * linear-tile: step t's batch as the circuit takes it (X, Y in fixed point), what the batch root of the job's circuit
   * terms commits to and what the provider's proof of step t uses.
   */
  tileBatch(t: number): TileBatch {
    if (!(this.model instanceof LinearTile)) throw new InputError(`tile batches exist for linear-tile only, not ${this.model.arch}`);
    return tileBatchOf(this.batchFor(t));
  }

  /** Loss (and accuracy) on the held-out split; `limit` caps the images (MNIST) or context windows (text). */
  evaluate(state: TrainState, limit = Infinity): Evaluation {
    this.checkBackend();
    return this.model.evaluate(state.params, this.testBatches(limit));
  }

  private *testBatches(limit: number): Iterable<Batch> {
    const chunk = 256;
    if (this.data.kind === "images") {
      const test = this.data.test;
      const D = this.data.width ?? MNIST_PIXELS;
      const n = Math.min(limit, test.count);
      for (let s = 0; s < n; s += chunk) {
        const size = Math.min(chunk, n - s);
        const batch = { kind: "images", size, x: test.images.subarray(s * D, (s + size) * D), y: test.labels.subarray(s, s + size) } as const;
        yield test.targets ? { ...batch, targets: test.targets.subarray(s, s + size) } : batch;
      }
      return;
    }
    const T = this.contextLength();
    const text = this.data.test;
    const windows = Math.min(limit, Math.floor((text.length - 1) / T));
    for (let s = 0; s < windows; s += 16) {
      const size = Math.min(16, windows - s);
      const tokens = new Uint8Array(size * (T + 1));
      for (let i = 0; i < size; i++) tokens.set(text.subarray((s + i) * T, (s + i) * T + T + 1), i * (T + 1));
      yield { kind: "tokens", size, tokens };
    }
  }

  private checkBackend(): void {
    assertBackend(this.backend);
  }

  /** Threads of the kernels (1 unless created with `threads`). */
  get threads(): number {
    return this.kernels instanceof ThreadedKernels ? this.kernels.threads : 1;
  }

  /** Ends the kernel worker threads, if any (they never keep the process alive; this frees them sooner). */
  async close(): Promise<void> {
    if (this.kernels instanceof ThreadedKernels) await this.kernels.close();
  }
}

export { defaultBackend };

/** Loads the corpus, checks its content id, pins the backend and builds the model. */
export async function createRun(manifest: Manifest, options: RunOptions): Promise<Run> {
  const backend = options.backend ?? defaultBackend(manifest);
  const salt = parseSalt(options.salt, "salt");
  if (!enginesAllowed(manifest.numerics).includes(backend)) {
    throw new ManifestError(isKernelNumerics(manifest.numerics)
      ? `manifest field numerics: ${manifest.numerics} runs only on the pouw engine (its own kernels define the bits), not ${backend}`
      : `manifest field numerics: bitwise runs only on the cpu backend (or the pouw kernels, which give its bits), not ${backend}`);
  }
  if (options.kernels && backend !== "pouw") throw new InputError(`kernels are an option of the pouw engine, not of ${backend}`);
  if (backend === "webgpu" && options.transformerKernels?.name !== "webgpu") throw new InputError("the webgpu engine runs on the kernels of webgpu/sync-kernels.ts: pass transformerKernels = webgpuTransformerKernelsV3(await WebGpuMatmulV3.open())");
  if (options.transformerKernels && !isKernelNumerics(manifest.numerics)) throw new InputError(`transformer kernels are an option of numerics bitwise-v2 and bitwise-v3, not ${manifest.numerics}`);
  if (options.transformerKernels && (options.transformerKernels.numerics ?? "bitwise-v2") !== manifest.numerics) {
    throw new InputError(`transformer kernels ${options.transformerKernels.name} give numerics ${options.transformerKernels.numerics ?? "bitwise-v2"}, the manifest has ${manifest.numerics}`);
  }
  const threads = options.threads ?? 1;
  if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) throw new InputError(`threads must be an integer in [1, ${MAX_THREADS}], got ${threads}`);
  if (threads > 1 && backend !== "pouw") throw new InputError(`threads are an option of the pouw engine, not of ${backend}`);
  await useBackend(backend);
  let kernels = backend === "pouw" ? (options.kernels ?? fastestKernels()) : undefined;
  if (kernels && threads > 1) kernels = new ThreadedKernels(threads, kernels);
  const corpus = manifest.corpora[0]!;
  let data: Dataset;
  let model: Model;
  if (manifest.model.arch === "tabular-mlp") {
    if (!options.store) throw new DataError(`corpus '${corpus.name}' is a data set by content id (${corpus.contentId}): the run needs the content store to fetch it from`);
    const d = await loadTabularCorpus(corpus, options.store, manifest.model);
    if (manifest.training.batchSize > d.train.count) throw new ManifestError(`manifest field training.batchSize: ${manifest.training.batchSize} exceeds the ${d.train.count} training rows`);
    data = { kind: "images", ...d };
    const regression = manifest.model.task === "regression";
    model = new MnistMlp(manifest.model.hidden, kernels, { arch: "tabular-mlp", inputs: manifest.model.inputs, classes: tabularOutputs(manifest.model), head: regression ? "mse" : "softmax-ce" });
  } else if (manifest.model.arch === "mnist-mlp" || manifest.model.arch === "linear-tile") {
    const d = loadMnist(corpus.package!, manifest.data.seed, manifest.data.testPerDigit!);
    if (manifest.training.batchSize > d.train.count) throw new ManifestError(`manifest field training.batchSize: ${manifest.training.batchSize} exceeds the ${d.train.count} training images`);
    data = { kind: "images", ...d };
    model =
      manifest.model.arch === "mnist-mlp"
        ? new MnistMlp(manifest.model.hidden, kernels)
        : new LinearTile(BigInt(manifest.optimizer.lr * 65536), (await loadCommitter()).commit);
  } else {
    const m = manifest.model;
    if (corpus.package === undefined) {
      // a text data set by content id (data/text.ts): its own byte vocabulary and split
      if (!options.store) throw new DataError(`corpus '${corpus.name}' is a data set by content id (${corpus.contentId}): the run needs the content store to fetch it from`);
      const d = await loadTextCorpus(corpus, options.store, m);
      if (d.train.length <= m.context + 1 || d.test.length <= m.context + 1) {
        throw new DataError(`data set ${corpus.contentId} (${d.train.length} training and ${d.test.length} held-out tokens) is shorter than one context window of ${m.context + 1} tokens on each side of its split`);
      }
      data = { kind: "tokens", train: d.train, test: d.test, canonicalBytes: d.canonicalBytes };
    } else {
      const d = loadSotu(corpus.package, manifest.data.years!, manifest.data.holdoutFraction ?? 0.05);
      if (d.train.length <= m.context + 1 || d.test.length <= m.context + 1) throw new DataError(`corpus of years ${manifest.data.years!.join("..")} is shorter than one context window`);
      data = { kind: "tokens", train: d.train, test: d.test, canonicalBytes: d.canonicalBytes };
    }
    const shape = { layers: m.layers, dModel: m.dModel, heads: m.heads, context: m.context, ffHidden: m.ffHidden ?? 4 * m.dModel, ...(m.vocab !== undefined ? { vocab: m.vocab } : {}) };
    if (manifest.adapter && "checkpointCid" in manifest.init) {
      // the frozen base, fetched once per machine (the store caches it) and checked against the shape before any step
      const cid = manifest.init.checkpointCid;
      if (!options.store) throw new DataError(`an adapter job's base ${cid} is read from the content store: the run needs one`);
      const baseSpecs = transformerParamSpecs(shape);
      const bytes = await options.store.get(cid, { maxBytes: checkpointSizeBound(baseSpecs, optimizerStateSpecs("adam", baseSpecs)) });
      model = new LoraTransformer(shape, options.transformerKernels ?? fastestTransformerKernels(), manifest.adapter, decodeBase(bytes, shape, cid).params);
    } else if (manifest.distill) {
      // the frozen teacher, fetched by CID (the store caches it) and checked against its declared shape before any step
      const cid = manifest.distill.teacher.cid;
      if (!options.store) throw new DataError(`a distillation job's teacher ${cid} is read from the content store: the run needs one`);
      const tShape = teacherShape(manifest.distill);
      const tSpecs = transformerParamSpecs(tShape);
      const bytes = await options.store.get(cid, { maxBytes: checkpointSizeBound(tSpecs, optimizerStateSpecs("adam", tSpecs)) });
      model = new DistilledTransformer(shape, options.transformerKernels ?? fastestTransformerKernels(), { shape: tShape, params: decodeTeacher(bytes, manifest.distill) }, manifest.distill);
    } else if (manifest.numerics === "bitwise-v2") model = new CharTransformer(shape, options.transformerKernels ?? fastestTransformerKernels());
    else if (manifest.numerics === "bitwise-v3") {
      model = new CharTransformer(shape, options.transformerKernels ?? fastestTransformerKernelsV3(kernels instanceof ThreadedKernels && kernels.threads > 1 ? kernels : undefined));
    }
    else {
      await registerGradients();
      model = new CharTransformer(shape);
    }
  }
  checkCorpusBytes(corpus, data.canonicalBytes, corpus.package === undefined ? "the content store" : `package '${corpus.package}'`);
  return new Run(manifest, { jobId: options.jobId, salt }, backend, model, data, kernels);
}
