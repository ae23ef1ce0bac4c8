/**
 * Checkpoint files in safetensors layout:
 *
 *   8 bytes   little-endian uint64 N = header length
 *   N bytes   JSON header: { "<name>": { "dtype": "F32", "shape": [...], "data_offsets": [begin, end] },
 *                            ..., "__metadata__": { "format": "pouw-checkpoint-1", "step": "..",
 *                            "jobId": "..", "manifestHash": "0x..", "model": "..", "optimizer": ".." } }
 *   data      every tensor's little-endian float32 data, in the fixed order: parameters
 *             (model order, names "param.<name>") then optimizer state ("opt.<name>").
 *
 * So the data section is exactly weightsBytes || optimizerStateBytes of the state hash.
 * Decoding checks every byte: a truncated, extended or tampered file, or one for another model,
 * raises CheckpointError (never a crash, never a silently different state).
 */
import { CheckpointError } from "./errors.ts";
import { float32Bytes, sizeOf, type TensorSpec } from "./tensors.ts";

export const CHECKPOINT_FORMAT = "pouw-checkpoint-1";

export type CheckpointMetadata = {
  step: number;
  jobId: bigint;
  manifestHash: string;
  model: string;
  optimizer: string;
};

export type CheckpointContents = {
  metadata: CheckpointMetadata;
  params: Float32Array[];
  opt: Float32Array[];
};

function tensorNames(paramSpecs: readonly TensorSpec[], optSpecs: readonly TensorSpec[]): { name: string; shape: readonly number[] }[] {
  return [...paramSpecs.map((s) => ({ name: `param.${s.name}`, shape: s.shape })), ...optSpecs.map((s) => ({ name: `opt.${s.name}`, shape: s.shape }))];
}

/**
 * Largest checkpoint file a model's state can have: the tensors' bytes, the length prefix, and a
 * header of at most 4 KiB plus 512 bytes per tensor (names, shapes, offsets, metadata; an encoded
 * header is far smaller). What a reader passes as its size cap (store GetOptions.maxBytes), so a
 * served file cannot make it read more than one state's worth.
 */
export function checkpointSizeBound(paramSpecs: readonly TensorSpec[], optSpecs: readonly TensorSpec[]): number {
  const specs = [...paramSpecs, ...optSpecs];
  return 8 + 4096 + 512 * specs.length + 4 * specs.reduce((n, s) => n + sizeOf(s.shape), 0);
}

export function encodeCheckpoint(
  paramSpecs: readonly TensorSpec[],
  optSpecs: readonly TensorSpec[],
  contents: CheckpointContents,
): Uint8Array {
  const specs = tensorNames(paramSpecs, optSpecs);
  const arrays = [...contents.params, ...contents.opt];
  if (arrays.length !== specs.length) throw new CheckpointError(`state has ${arrays.length} tensors, the model needs ${specs.length}`);
  const header: Record<string, unknown> = {};
  let offset = 0;
  specs.forEach((s, i) => {
    const bytes = sizeOf(s.shape) * 4;
    if (arrays[i]!.length * 4 !== bytes) throw new CheckpointError(`tensor ${s.name} has ${arrays[i]!.length} values, shape needs ${bytes / 4}`);
    header[s.name] = { dtype: "F32", shape: [...s.shape], data_offsets: [offset, offset + bytes] };
    offset += bytes;
  });
  const m = contents.metadata;
  header.__metadata__ = {
    format: CHECKPOINT_FORMAT,
    step: String(m.step),
    jobId: m.jobId.toString(),
    manifestHash: m.manifestHash,
    model: m.model,
    optimizer: m.optimizer,
  };
  let json = JSON.stringify(header);
  // safetensors pads the header with spaces to a multiple of 8 so the data is aligned
  json += " ".repeat((8 - (json.length % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const data = float32Bytes(arrays);
  const out = new Uint8Array(8 + headerBytes.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  out.set(data, 8 + headerBytes.length);
  return out;
}

/**
 * Decodes and validates a checkpoint for a model with these tensor specs. `expect` pins metadata
 * the caller knows (e.g. the manifest hash and the segment's first step).
 */
export function decodeCheckpoint(
  bytes: Uint8Array,
  paramSpecs: readonly TensorSpec[],
  optSpecs: readonly TensorSpec[],
  expect: Partial<Pick<CheckpointMetadata, "step" | "jobId" | "manifestHash" | "model" | "optimizer">> = {},
): CheckpointContents {
  if (bytes.length < 8) throw new CheckpointError(`checkpoint is truncated: ${bytes.length} bytes, no header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getBigUint64(0, true);
  if (headerLength > BigInt(bytes.length - 8)) throw new CheckpointError(`checkpoint is truncated: header length ${headerLength} exceeds the file (${bytes.length} bytes)`);
  const n = Number(headerLength);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + n))) as Record<string, unknown>;
  } catch (err) {
    throw new CheckpointError("checkpoint header is not valid UTF-8 JSON", { cause: err });
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) throw new CheckpointError("checkpoint header is not a JSON object");

  const meta = header.__metadata__ as Record<string, unknown> | undefined;
  if (typeof meta !== "object" || meta === null) throw new CheckpointError("checkpoint has no __metadata__");
  if (meta.format !== CHECKPOINT_FORMAT) throw new CheckpointError(`checkpoint format is ${JSON.stringify(meta.format)}, expected ${CHECKPOINT_FORMAT}`);
  const str = (k: string): string => {
    if (typeof meta[k] !== "string") throw new CheckpointError(`checkpoint metadata ${k} is missing or not a string`);
    return meta[k] as string;
  };
  if (!/^(0|[1-9][0-9]*)$/.test(str("step")) || !/^(0|[1-9][0-9]*)$/.test(str("jobId"))) throw new CheckpointError("checkpoint metadata step/jobId is not a decimal integer");
  const metadata: CheckpointMetadata = {
    step: Number(str("step")),
    jobId: BigInt(str("jobId")),
    manifestHash: str("manifestHash"),
    model: str("model"),
    optimizer: str("optimizer"),
  };
  if (expect.step !== undefined && metadata.step !== expect.step) throw new CheckpointError(`checkpoint is for step ${metadata.step}, expected ${expect.step}`);
  if (expect.jobId !== undefined && metadata.jobId !== expect.jobId) throw new CheckpointError(`checkpoint is for job ${metadata.jobId}, expected ${expect.jobId}`);
  if (expect.manifestHash !== undefined && metadata.manifestHash !== expect.manifestHash) {
    throw new CheckpointError(`checkpoint is for manifest ${metadata.manifestHash}, expected ${expect.manifestHash}`);
  }
  if (expect.model !== undefined && metadata.model !== expect.model) throw new CheckpointError(`checkpoint is for model ${metadata.model}, expected ${expect.model}`);
  if (expect.optimizer !== undefined && metadata.optimizer !== expect.optimizer) {
    throw new CheckpointError(`checkpoint is for optimizer ${metadata.optimizer}, expected ${expect.optimizer}`);
  }

  const specs = tensorNames(paramSpecs, optSpecs);
  const names = Object.keys(header).filter((k) => k !== "__metadata__");
  if (names.length !== specs.length) throw new CheckpointError(`checkpoint has ${names.length} tensors, the model needs ${specs.length}`);
  const dataStart = 8 + n;
  const dataLength = bytes.length - dataStart;
  const arrays: Float32Array[] = [];
  let expectedOffset = 0;
  for (const s of specs) {
    const entry = header[s.name] as { dtype?: unknown; shape?: unknown; data_offsets?: unknown } | undefined;
    if (typeof entry !== "object" || entry === null) throw new CheckpointError(`checkpoint lacks tensor ${s.name}`);
    if (entry.dtype !== "F32") throw new CheckpointError(`tensor ${s.name} has dtype ${JSON.stringify(entry.dtype)}, expected F32`);
    if (!Array.isArray(entry.shape) || entry.shape.length !== s.shape.length || entry.shape.some((d, i) => d !== s.shape[i])) {
      throw new CheckpointError(`tensor ${s.name} has shape ${JSON.stringify(entry.shape)}, the model needs [${s.shape.join(",")}]`);
    }
    const offsets = entry.data_offsets;
    const size = sizeOf(s.shape) * 4;
    if (!Array.isArray(offsets) || offsets.length !== 2 || offsets[0] !== expectedOffset || offsets[1] !== expectedOffset + size) {
      throw new CheckpointError(`tensor ${s.name} has data_offsets ${JSON.stringify(offsets)}, expected [${expectedOffset},${expectedOffset + size}]`);
    }
    if (expectedOffset + size > dataLength) throw new CheckpointError(`checkpoint is truncated: tensor ${s.name} ends at ${expectedOffset + size}, data has ${dataLength} bytes`);
    const values = new Float32Array(size / 4);
    const dv = new DataView(bytes.buffer, bytes.byteOffset + dataStart + expectedOffset, size);
    for (let i = 0; i < values.length; i++) values[i] = dv.getFloat32(4 * i, true);
    arrays.push(values);
    expectedOffset += size;
  }
  if (expectedOffset !== dataLength) throw new CheckpointError(`checkpoint has ${dataLength - expectedOffset} trailing bytes after the last tensor`);
  return { metadata, params: arrays.slice(0, paramSpecs.length), opt: arrays.slice(paramSpecs.length) };
}
