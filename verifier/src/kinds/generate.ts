/**
 * The generate kind on the market: a generate manifest (kind "pouw/generate-job") as an ExampleJob. Example i
 * (1-based) is sample i-1: `sampling.tokens` tokens drawn from the char-transformer whose weights are `weightsCid`,
 * continuing prompt i-1, with the exact sampler (sampler.ts) on the PRNG stream (sampling.seed, "generate", i-1), so
 * any one sample is recomputed alone.
 *
 *   prompt j  = the first prompts.promptChars tokens of held-out window j (the windows an evaluate job of the same
 *               corpus and split scores; prompts.contentId is the CID of those windows' bytes, as evalSet.contentId)
 *   step      = the model's logits at the last of T positions for the context's last T tokens, left-padded with
 *               token 0 (the forward pass of `pouw evaluate`, cpu backend, bitwise)
 *   item_i    = keccak256(the sample's generated token bytes); score_i = its token count; hit_i = 0
 *
 * The generated dataset (datasetOf) names the model, the prompts and the job's manifest hash (its provenance) and
 * lists every sample; its chain of item hashes is the one the last leaf h(N) binds (KindRecords).
 */
import canonicalizeModule from "canonicalize";
import { concat, keccak256, toBytes, toHex, type Hex } from "viem";
import { z } from "zod";
import { EVALUATE_KIND, openHarness, paramsOf, parseEvaluateManifest, type Harness } from "../evaluate/index.ts";
import { ManifestError } from "../ml/errors.ts";
import { Corpus, ModelConfig } from "../ml/manifest.ts";
import { Rng } from "../ml/prng.ts";
import { InputError } from "../errors/index.ts";
import type { ExampleJob } from "./job.ts";
import { sampleToken } from "./sampler.ts";
import { ZERO32, type ExampleResult, type StateContext } from "./state.ts";
import { decodeGenerated, GENERATED_FORMAT, type GeneratedFile } from "../data/generated.ts";
import { DataFormatError } from "../data/tabular.ts";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

export const GENERATE_KIND = "pouw/generate-job";
/** The generated dataset's format (data/generated.ts decodes it, for verification and as training data). */
export const DATASET_FORMAT = GENERATED_FORMAT;

const cidString = z.string().regex(/^b[a-z2-7]{58}$/, "must be a CIDv1 base32 string (bafkrei...)");
const uint32 = z.number().int().min(0).max(0xffff_ffff);
const positiveInt = z.number().int().positive();

export const GenerateManifest = z
  .strictObject({
    version: z.literal(1),
    kind: z.literal(GENERATE_KIND),
    model: ModelConfig,
    /** CID of the model: a pouw-checkpoint-1 file (only its param.* tensors are read). */
    weightsCid: cidString,
    corpus: Corpus,
    data: z.strictObject({ seed: uint32, years: z.tuple([z.number().int(), z.number().int()]), holdoutFraction: z.number().gt(0).lt(1).optional() }),
    prompts: z.strictObject({
      split: z.literal("test"),
      /** Number of samples (one per prompt). */
      examples: positiveInt,
      /** Tokens of each held-out window used as its prompt (1 .. model.context). */
      promptChars: positiveInt,
      /** CID of the held-out windows' canonical bytes (evaluate's evalSet bytes for the same corpus and count). */
      contentId: cidString,
    }),
    sampling: z.strictObject({ tokens: positiveInt.max(4096), temperatureMilli: z.number().int().min(0).max(100_000), topK: z.number().int().min(0).max(1024), seed: uint32 }),
    harness: z.strictObject({ engine: z.literal("pouw-engine-1"), backend: z.literal("cpu"), numerics: z.literal("bitwise"), batch: positiveInt.max(1024) }),
  })
  .superRefine((m, ctx) => {
    if (m.model.arch !== "char-transformer") ctx.addIssue({ code: "custom", path: ["model", "arch"], message: `generate jobs sample from a char-transformer, not ${m.model.arch}` });
    else if (m.prompts.promptChars > m.model.context) ctx.addIssue({ code: "custom", path: ["prompts", "promptChars"], message: `must be at most model.context (${m.model.context})` });
  });

export type GenerateManifest = z.infer<typeof GenerateManifest>;

export function parseGenerateManifest(value: unknown): GenerateManifest {
  const r = GenerateManifest.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
  const message = issue.code === "unrecognized_keys" ? `unknown key(s) ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}` : issue.message;
  throw new ManifestError(`generate manifest field ${field}: ${message}`);
}

export function generateManifestHash(m: GenerateManifest): Hex {
  return keccak256(toBytes(canonicalize(m)!));
}

/** The evaluate-manifest view of a generate manifest: the same corpus, split and windows (what openHarness loads). */
function harnessManifest(m: GenerateManifest) {
  return parseEvaluateManifest({ version: 1, kind: EVALUATE_KIND, model: m.model, weightsCid: m.weightsCid, corpus: m.corpus, data: m.data, evalSet: { split: "test", examples: m.prompts.examples, contentId: m.prompts.contentId }, harness: m.harness });
}

/** Loads the corpus and the prompt windows; EvalSetMismatchError unless they hash to prompts.contentId. */
export async function openGenerateHarness(m: GenerateManifest): Promise<Harness> {
  return openHarness(harnessManifest(m));
}

/** Sample j (0-based): the generated tokens after prompt j. */
export function generateSample(m: GenerateManifest, h: Harness, params: readonly Float32Array[], j: number): Uint8Array {
  if (m.model.arch !== "char-transformer") throw new InputError(`generate jobs sample from a char-transformer, not ${m.model.arch}`);
  const T = m.model.context;
  const window = h.evalSetBytes.subarray(j * (T + 1), j * (T + 1) + m.prompts.promptChars);
  const context = [...new Array<number>(T).fill(0), ...window];
  const rng = new Rng(m.sampling.seed, "generate", j);
  const out = new Uint8Array(m.sampling.tokens);
  const tokens = new Uint8Array(T + 1);
  for (let n = 0; n < out.length; n++) {
    tokens.set(context.slice(context.length - T), 0);
    tokens[T] = 0; // NOTE: a target the forward pass needs for its loss; the logits do not depend on it
    const o = h.run.model.outputs(params, { kind: "tokens", size: 1, tokens });
    const V = o.logitsPerExample / T;
    const next = sampleToken(o.logits.subarray((T - 1) * V, T * V), m.sampling, rng);
    out[n] = next;
    context.push(next);
  }
  return out;
}

export type GenerateJob = ExampleJob & { readonly harness: Harness; readonly manifest: GenerateManifest; sample(j: number): Uint8Array };

export async function generateJob(manifest: GenerateManifest, weights: Uint8Array, p: { jobId: bigint; examplesPerSegment: number; harness?: Harness }): Promise<GenerateJob> {
  const harness = p.harness ?? (await openGenerateHarness(manifest));
  const params = paramsOf(harness, weights);
  const ctx: StateContext = { jobId: p.jobId, kind: "generate", modelCid: manifest.weightsCid };
  const sample = (j: number) => generateSample(manifest, harness, params, j);
  return {
    ctx,
    manifest,
    harness,
    examples: manifest.prompts.examples,
    examplesPerSegment: p.examplesPerSegment,
    sample,
    async results(from: number, to: number): Promise<ExampleResult[]> {
      const out: ExampleResult[] = [];
      for (let j = from; j < to; j++) out.push(sampleResult(sample(j)));
      return out;
    },
  };
}

export function sampleResult(sample: Uint8Array): ExampleResult {
  return { item: keccak256(sample), score: BigInt(sample.length), hits: 0n };
}

/** The generated dataset's bytes: provenance (model, prompts, manifest) and every sample, canonical JSON. */
export function datasetOf(m: GenerateManifest, samples: readonly Uint8Array[]): Uint8Array {
  const body = { format: DATASET_FORMAT, model: m.weightsCid, prompts: m.prompts.contentId, manifestHash: generateManifestHash(m), samples: samples.map((s) => toHex(s)) };
  return new TextEncoder().encode(canonicalize(body)!);
}

export class DatasetError extends InputError {
  override name = "DatasetError";
  override readonly code: string = "GENERATED_DATASET";
}

/**
 * Checks a generated dataset against a recorded result: its samples' item chain must equal `chain` (the one h(N)
 * binds) and its provenance must name `modelCid`. Returns the samples.
 */
export function verifyDataset(bytes: Uint8Array, expect: { chain: Hex; modelCid: string }): GeneratedFile {
  let f: GeneratedFile;
  try {
    f = decodeGenerated(bytes);
  } catch (err) {
    if (err instanceof DataFormatError) throw new DatasetError(err.message, { cause: err });
    throw err;
  }
  if (f.model !== expect.modelCid) throw new DatasetError(`generated dataset names model ${JSON.stringify(f.model)}, the record ${expect.modelCid}`);
  let chain: Hex = ZERO32;
  for (const s of f.samples) chain = keccak256(concat([chain, keccak256(s)]));
  if (chain !== expect.chain) throw new DatasetError(`generated dataset's samples chain to ${chain}, the recorded result to ${expect.chain}`);
  return f;
}
