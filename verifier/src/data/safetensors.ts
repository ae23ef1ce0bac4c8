/**
 * A base model from outside the market: a safetensors file (the format Hugging Face and torch's `safetensors` write)
 * checked against a declared char-transformer and rewritten as the canonical checkpoint an adapter job's or a
 * distillation job's manifest names by CID (`init.checkpointCid`, `distill.teacher.cid`).
 *
 * The file:
 *   8 bytes   little-endian uint64 N = header length
 *   N bytes   UTF-8 JSON object: { "<tensor>": { "dtype": "F32"|"F16"|"BF16", "shape": [...], "data_offsets": [b, e] },
 *             ..., "__metadata__"?: { string: string } }
 *   data      the tensors' little-endian bytes; [b, e) is relative to the start of the data section
 *
 * Rules (each broken rule is one SafetensorsError naming the tensor or the byte count):
 *   - the tensors are exactly the model's parameters (transformerParamSpecs names: tokEmb, posEmb, l0.wq, ...,
 *     head, headB), each with the model's shape; a missing, an extra or a misshapen tensor is refused by name.
 *   - dtype F32, F16 or BF16. Every F16 and every BF16 value is a float32 value (F16: 5 exponent and 10 mantissa
 *     bits, BF16: float32's upper half), so the conversion is exact: the canonical weights are bit for bit the
 *     file's values. Any other dtype (F64, I8, ...) is refused: its float32 rounding would be a choice.
 *   - every tensor's byte range has exactly shape * dtype size bytes, lies inside the data section and overlaps no
 *     other tensor's; together they cover the data section (no hole, no trailing bytes); every weight is finite.
 *
 * The canonical bytes: a pouw-checkpoint-1 (ml/checkpoint.ts) of model char-transformer, optimizer sgd (no
 * optimizer state), step 0, job 0, manifest hash zero: the same kind of file as a finalized job's final checkpoint
 * or `pouw adapter merge` output, so ml/adapters/base.ts decodes it as a base and ml/distill/teacher.ts as a teacher.
 * INVARIANT: the same tensors give the same bytes and CID whatever the file's tensor order, dtype or metadata.
 */
import { readFileSync } from "node:fs";
import { encodeCheckpoint } from "../ml/checkpoint.ts";
import { TransformerConfig } from "../ml/manifest.ts";
import { transformerParamSpecs, type TransformerShape } from "../ml/state-layout.ts";
import { sizeOf } from "../ml/tensors.ts";
import { InputError } from "../errors/index.ts";
import type { ContentStore } from "../store/index.ts";
import { cidOf } from "../store/index.ts";

/** The dtypes a base may carry, and their sizes in bytes. */
export const SAFETENSORS_DTYPES = { F32: 4, F16: 2, BF16: 2 } as const;
export type SafetensorsDtype = keyof typeof SAFETENSORS_DTYPES;

/** Largest header accepted (safetensors' own readers cap it at 100 MB). */
export const SAFETENSORS_MAX_HEADER_BYTES = 100_000_000;

/** The manifest hash a base from outside the market carries in its checkpoint metadata: no manifest trained it. */
export const IMPORTED_BASE_MANIFEST_HASH = `0x${"0".repeat(64)}`;

/** A safetensors file breaks a format rule or does not match the declared model; `tensor` names the tensor at fault. */
export class SafetensorsError extends InputError {
  override name = "SafetensorsError";
  override readonly code: string = "SAFETENSORS";
  readonly tensor: string | undefined;
  constructor(message: string, tensor?: string) {
    super(tensor === undefined ? message : `tensor ${JSON.stringify(tensor)}: ${message}`);
    this.tensor = tensor;
  }
}

export type SafetensorsTensor = { dtype: SafetensorsDtype; shape: number[]; values: Float32Array };

/** Float32 value of an IEEE binary16 bit pattern (exact: every binary16 value is a binary32 value). */
export function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24; // zero and subnormals
  if (exp === 0x1f) return frac === 0 ? sign * Infinity : NaN;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** Float32 value of a bfloat16 bit pattern: the upper 16 bits of a float32. */
export function bf16ToF32(b: number): number {
  const dv = new DataView(new ArrayBuffer(4));
  dv.setUint32(0, (b & 0xffff) << 16, false);
  return dv.getFloat32(0, false);
}

/** The tensors of a safetensors file, every value converted to float32 (exactly), in the file's header order. */
export function parseSafetensors(bytes: Uint8Array): Map<string, SafetensorsTensor> {
  if (bytes.length < 8) throw new SafetensorsError(`file is truncated: ${bytes.length} bytes, no 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getBigUint64(0, true);
  if (headerLength > BigInt(bytes.length - 8)) throw new SafetensorsError(`header length ${headerLength} runs past the end of the file (${bytes.length - 8} bytes after the length)`);
  if (headerLength > BigInt(SAFETENSORS_MAX_HEADER_BYTES)) throw new SafetensorsError(`header length ${headerLength} is over the ${SAFETENSORS_MAX_HEADER_BYTES}-byte cap`);
  const n = Number(headerLength);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (err) {
    throw new SafetensorsError(`header (${n} bytes) is not valid UTF-8 JSON: ${(err as Error).message}`);
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) throw new SafetensorsError("header is not a JSON object");
  const dataStart = 8 + n;
  const dataLength = bytes.length - dataStart;
  const ranges: { name: string; begin: number; end: number }[] = [];
  const out = new Map<string, SafetensorsTensor>();
  for (const [name, entry] of Object.entries(header as Record<string, unknown>)) {
    if (name === "__metadata__") continue;
    if (typeof entry !== "object" || entry === null) throw new SafetensorsError("entry is not an object with dtype, shape and data_offsets", name);
    const { dtype, shape, data_offsets: offsets } = entry as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof dtype !== "string" || !Object.hasOwn(SAFETENSORS_DTYPES, dtype)) {
      throw new SafetensorsError(`dtype ${JSON.stringify(dtype)} is not one of ${Object.keys(SAFETENSORS_DTYPES).join(", ")} (a base is float32, or float16/bfloat16 converted exactly)`, name);
    }
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) throw new SafetensorsError(`shape ${JSON.stringify(shape)} is not a list of whole numbers`, name);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) || offsets[0] > offsets[1]) {
      throw new SafetensorsError(`data_offsets ${JSON.stringify(offsets)} is not [begin, end] with 0 <= begin <= end`, name);
    }
    const [begin, end] = offsets as [number, number];
    const size = SAFETENSORS_DTYPES[dtype as SafetensorsDtype];
    if (end - begin !== sizeOf(shape) * size) throw new SafetensorsError(`data_offsets [${begin},${end}] hold ${end - begin} bytes, shape [${shape.join(",")}] of ${dtype} needs ${sizeOf(shape) * size}`, name);
    if (end > dataLength) throw new SafetensorsError(`data_offsets [${begin},${end}] run past the end of the data (${dataLength} bytes): the file is truncated`, name);
    ranges.push({ name, begin, end });
    const dv = new DataView(bytes.buffer, bytes.byteOffset + dataStart + begin, end - begin);
    const values = new Float32Array(sizeOf(shape));
    for (let i = 0; i < values.length; i++) {
      values[i] = dtype === "F32" ? dv.getFloat32(4 * i, true) : dtype === "F16" ? f16ToF32(dv.getUint16(2 * i, true)) : bf16ToF32(dv.getUint16(2 * i, true));
    }
    out.set(name, { dtype: dtype as SafetensorsDtype, shape: shape as number[], values });
  }
  // INVARIANT: no two tensors share a byte (safetensors' own rule): a file cannot alias one weight as two
  ranges.sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < ranges.length; i++) {
    const [p, c] = [ranges[i - 1]!, ranges[i]!];
    if (c.begin < p.end) throw new SafetensorsError(`data_offsets [${c.begin},${c.end}] overlap tensor ${JSON.stringify(p.name)}'s [${p.begin},${p.end}]`, c.name);
  }
  // the data section is exactly the tensors' bytes (safetensors' own rule): no hole, no tail a reader would ignore
  let covered = 0;
  for (const r of ranges) {
    if (r.begin > covered) throw new SafetensorsError(`data bytes [${covered},${r.begin}) belong to no tensor (the next is ${JSON.stringify(r.name)})`);
    covered = r.end;
  }
  if (covered !== dataLength) throw new SafetensorsError(`data has ${dataLength - covered} trailing bytes after the last tensor`);
  return out;
}

/** The char-transformer shape of a model block (a manifest's `model`): TransformerConfig's rules and defaults. */
export function baseShapeOf(model: unknown, what: string): TransformerShape {
  const parsed = TransformerConfig.safeParse(model);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InputError(`${what}: not a char-transformer model block (${issue.path.join(".") || "model"}: ${issue.message})`);
  }
  const m = parsed.data;
  return { layers: m.layers, dModel: m.dModel, heads: m.heads, context: m.context, ffHidden: m.ffHidden ?? 4 * m.dModel, ...(m.vocab !== undefined ? { vocab: m.vocab } : {}) };
}

/**
 * The canonical base checkpoint of a safetensors file checked against `shape`: SafetensorsError for the first
 * format break or mismatch (missing, extra or misshapen tensor, non-finite weight), each naming the tensor.
 */
export function safetensorsBase(bytes: Uint8Array, shape: TransformerShape): { bytes: Uint8Array; cid: string; weights: number; sourceDtypes: SafetensorsDtype[] } {
  const tensors = parseSafetensors(bytes);
  const specs = transformerParamSpecs(shape);
  const dims = `layers ${shape.layers}, dModel ${shape.dModel}, context ${shape.context}, ffHidden ${shape.ffHidden}, vocab ${shape.vocab ?? "96 (sotu)"}`;
  const known = new Set(specs.map((s) => s.name));
  for (const name of tensors.keys()) if (!known.has(name)) throw new SafetensorsError(`is not a parameter of the declared char-transformer (${dims})`, name);
  const params = specs.map((s) => {
    const t = tensors.get(s.name);
    if (t === undefined) throw new SafetensorsError(`is missing: the declared char-transformer (${dims}) needs it with shape [${s.shape.join(",")}]`, s.name);
    if (t.shape.length !== s.shape.length || t.shape.some((d, i) => d !== s.shape[i])) {
      throw new SafetensorsError(`has shape [${t.shape.join(",")}], the declared char-transformer (${dims}) needs [${s.shape.join(",")}]`, s.name);
    }
    const j = t.values.findIndex((x) => !Number.isFinite(x));
    if (j >= 0) throw new SafetensorsError(`has a non-finite weight at [${j}] (${t.values[j]}): every state trained on it would be non-finite`, s.name);
    return t.values;
  });
  const out = encodeCheckpoint(specs, [], {
    metadata: { step: 0, jobId: 0n, manifestHash: IMPORTED_BASE_MANIFEST_HASH, model: "char-transformer", optimizer: "sgd" },
    params,
    opt: [],
  });
  return { bytes: out, cid: cidOf(out), weights: params.reduce((a, p) => a + p.length, 0), sourceDtypes: [...new Set([...tensors.values()].map((t) => t.dtype))] };
}

/** The manifest parts an imported base fixes: its model block and the base by CID (an adapter job's init). */
export type BaseManifestFragment = {
  model: { arch: "char-transformer"; layers: number; dModel: number; heads: number; context: number; ffHidden: number; vocab?: number };
  init: { checkpointCid: string; optimizerState: "fresh" };
};

export type AddedBase = { cid: string; bytes: number; weights: number; tensors: number; sourceDtypes: SafetensorsDtype[]; fragment: BaseManifestFragment };

/** Checks a safetensors file against `shape`, puts its canonical checkpoint into `store` and returns what a manifest needs to name it. */
export async function addSafetensorsBase(file: Uint8Array, shape: TransformerShape, store: ContentStore): Promise<AddedBase> {
  const base = safetensorsBase(file, shape);
  const stored = await store.put(base.bytes);
  if (stored !== base.cid) throw new Error(`content store returned ${stored} for bytes whose CID is ${base.cid}`);
  const { layers, dModel, heads, context, ffHidden } = shape;
  return {
    cid: base.cid,
    bytes: base.bytes.length,
    weights: base.weights,
    tensors: transformerParamSpecs(shape).length,
    sourceDtypes: base.sourceDtypes,
    fragment: {
      model: { arch: "char-transformer", layers, dModel, heads, context, ffHidden, ...(shape.vocab !== undefined ? { vocab: shape.vocab } : {}) },
      init: { checkpointCid: base.cid, optimizerState: "fresh" },
    },
  };
}

/**
 * `pouw data add PATH --format safetensors`: the declared shape from `arch` (a model block as JSON) or the model block
 * of the manifest file `manifest` (exactly one), then addSafetensorsBase on the file's bytes.
 */
export async function addSafetensorsFile(path: string, declared: { arch?: string; manifest?: string }, store: ContentStore): Promise<AddedBase> {
  if ((declared.arch === undefined) === (declared.manifest === undefined)) throw new InputError("--format safetensors needs the declared architecture: give --arch JSON or --manifest FILE (one of them)");
  let model: unknown;
  let what: string;
  if (declared.arch !== undefined) {
    what = "--arch";
    try {
      model = JSON.parse(declared.arch);
    } catch {
      throw new InputError(`--arch must be a manifest model block as JSON (e.g. {"arch":"char-transformer","layers":1,"dModel":16,"heads":2,"context":16}), got ${JSON.stringify(declared.arch)}`);
    }
  } else {
    what = `--manifest ${declared.manifest}`;
    let text: string;
    try {
      text = readFileSync(declared.manifest!, "utf8");
    } catch (err) {
      throw new InputError(`cannot read the manifest ${declared.manifest}`, { cause: err });
    }
    try {
      model = (JSON.parse(text) as { model?: unknown }).model;
    } catch {
      throw new InputError(`${what} is not JSON`);
    }
    what += " model";
  }
  const shape = baseShapeOf(model, what);
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new InputError(`cannot read the safetensors file ${path}`, { cause: err });
  }
  return addSafetensorsBase(bytes, shape, store);
}
