/**
 * The evaluate job manifest (kind "pouw/evaluate-job"): scored inference of a committed model (weights
 * CID) on a fixed, content-addressed evaluation set with a pinned harness. Canonical JSON (RFC 8785) ->
 * keccak256 is its manifest hash, exactly as for training manifests. docs/data.md ("Evaluate jobs").
 *
 * The evaluation set is the first `evalSet.examples` examples of the held-out split of `corpus` (the split
 * the training engine uses, fixed by `data`); `evalSet.contentId` is the CID of those examples' canonical
 * bytes (`evalSetBytes` in evaluate/run.ts), so both the whole corpus and the exact examples are content-addressed.
 */
import canonicalizeModule from "canonicalize";
import { keccak256, toBytes, type Hex } from "viem";
import { z } from "zod";
import { ManifestError } from "../ml/errors.ts";
import { Corpus, ModelConfig } from "../ml/manifest.ts";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

const cidString = z.string().regex(/^b[a-z2-7]{58}$/, "must be a CIDv1 base32 string (bafkrei...)");
const uint32 = z.number().int().min(0).max(0xffff_ffff);
const positiveInt = z.number().int().positive();

export const EVALUATE_KIND = "pouw/evaluate-job";

export const EvaluateManifest = z
  .strictObject({
    version: z.literal(1),
    kind: z.literal(EVALUATE_KIND),
    model: ModelConfig,
    /** CID of the committed model: a pouw-checkpoint-1 file (only its param.* tensors are read). */
    weightsCid: cidString,
    corpus: Corpus,
    /** The split, as in a training manifest: the held-out part is the evaluation pool. */
    data: z.strictObject({
      seed: uint32,
      testPerDigit: positiveInt.max(900).optional(),
      years: z.tuple([z.number().int(), z.number().int()]).optional(),
      holdoutFraction: z.number().gt(0).lt(1).optional(),
    }),
    evalSet: z.strictObject({
      split: z.literal("test"),
      /** Number of examples (MNIST images, or SOTU windows of context+1 characters), from the split's start. */
      examples: positiveInt,
      /** CID of the evaluation set's canonical bytes. */
      contentId: cidString,
    }),
    /** The pinned harness: the engine's forward pass on the cpu backend, bitwise, in chunks of `batch`. */
    harness: z.strictObject({
      engine: z.literal("pouw-engine-1"),
      backend: z.literal("cpu"),
      numerics: z.literal("bitwise"),
      batch: positiveInt.max(1024),
    }),
    policy: z.strictObject({ paymentWei: z.string().regex(/^(0|[1-9][0-9]*)$/, "must be a decimal integer string (wei)") }).optional(),
  })
  .superRefine((m, ctx) => {
    if (m.model.arch === "mnist-mlp") {
      if (m.data.testPerDigit === undefined) ctx.addIssue({ code: "custom", path: ["data", "testPerDigit"], message: "is required for mnist-mlp" });
      if (m.data.years !== undefined) ctx.addIssue({ code: "custom", path: ["data", "years"], message: "is not used by mnist-mlp" });
    } else if (m.model.arch === "linear-tile") {
      ctx.addIssue({ code: "custom", path: ["model", "arch"], message: "linear-tile has no per-example outputs to evaluate (use mnist-mlp or char-transformer)" });
    } else if (m.model.arch === "tabular-mlp") {
      ctx.addIssue({ code: "custom", path: ["model", "arch"], message: "evaluate jobs over tabular-mlp (a data set by content id) are not built yet (use mnist-mlp or char-transformer)" });
    } else {
      if (m.model.dModel % m.model.heads !== 0) ctx.addIssue({ code: "custom", path: ["model", "heads"], message: `must divide model.dModel (${m.model.dModel})` });
      if (m.data.years === undefined) ctx.addIssue({ code: "custom", path: ["data", "years"], message: "is required for char-transformer" });
      if (m.data.testPerDigit !== undefined) ctx.addIssue({ code: "custom", path: ["data", "testPerDigit"], message: "is not used by char-transformer" });
    }
  });

export type EvaluateManifest = z.infer<typeof EvaluateManifest>;

export function parseEvaluateManifest(value: unknown): EvaluateManifest {
  const r = EvaluateManifest.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
  const message = issue.code === "unrecognized_keys" ? `unknown key(s) ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}` : issue.message;
  throw new ManifestError(`evaluate manifest field ${field}: ${message}`);
}

export function parseEvaluateManifestJson(text: string): EvaluateManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ManifestError(`evaluate manifest is not valid JSON: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return parseEvaluateManifest(value);
}

export function evaluateManifestHash(m: EvaluateManifest): Hex {
  const text = canonicalize(m);
  if (text === undefined) throw new ManifestError("evaluate manifest cannot be canonicalised");
  return keccak256(toBytes(text));
}
