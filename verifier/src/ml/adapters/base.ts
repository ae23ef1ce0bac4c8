/**
 * A frozen base for an adapter job: the checkpoint the manifest names by CID (init.checkpointCid: a finalized job's
 * final state, or `pouw adapter merge` output), decoded as a char-transformer of the manifest's shape. The base's own
 * optimizer state (whatever optimizer trained it) is read past and dropped: an adapter job never trains the base.
 */
import { decodeCheckpoint } from "../checkpoint.ts";
import { CheckpointError, ManifestError } from "../errors.ts";
import { optimizerStateSpecs, transformerParamSpecs, type TransformerShape } from "../state-layout.ts";
import type { PouwErrorOptions } from "../../errors/index.ts";

/**
 * The base checkpoint cannot be the frozen base of this manifest's model: it does not decode, it is a checkpoint of
 * another model or shape, or it holds a non-finite weight. The buyer's input: refused at manifest check, job posting
 * and provider accept (provider/check-base.ts builds the run first), before any stake moves.
 */
export class AdapterBaseError extends ManifestError {
  override name = "AdapterBaseError";
  override readonly code: string = "ADAPTER_BASE";
  readonly cid: string;
  constructor(cid: string, message: string, options: PouwErrorOptions = {}) {
    super(message, options);
    this.cid = cid;
  }
}

/** The optimizer named in a checkpoint's metadata ("sgd" or "adam"), read before the full decode. */
function optimizerOf(bytes: Uint8Array): "sgd" | "adam" {
  if (bytes.length < 8) throw new CheckpointError(`checkpoint is truncated: ${bytes.length} bytes, no header length`);
  const n = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(0, true);
  if (n > BigInt(bytes.length - 8)) throw new CheckpointError(`checkpoint is truncated: header length ${n} exceeds the file (${bytes.length} bytes)`);
  let header: { __metadata__?: { optimizer?: unknown } };
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + Number(n))));
  } catch (err) {
    throw new CheckpointError("checkpoint header is not valid UTF-8 JSON", { cause: err });
  }
  const opt = header?.__metadata__?.optimizer;
  if (opt !== "sgd" && opt !== "adam") throw new CheckpointError(`checkpoint metadata optimizer is ${JSON.stringify(opt)}, not sgd or adam`);
  return opt;
}

/**
 * A char-transformer checkpoint of `shape` (weights in transformerParamSpecs order, and the optimizer state its file
 * carries), checked: the bytes decode as that model (every tensor's name and shape, every byte), and every weight is
 * finite. `fail(what)` builds the error for the first problem, `what` completing "<the checkpoint> ...". Shared by an
 * adapter job's base and a distillation job's teacher.
 */
export function decodeCharTransformer(
  bytes: Uint8Array, shape: TransformerShape, fail: (what: string, options: PouwErrorOptions) => Error,
): { params: Float32Array[]; opt: Float32Array[]; optimizer: "sgd" | "adam" } {
  const paramSpecs = transformerParamSpecs(shape);
  let decoded;
  let optimizer: "sgd" | "adam";
  try {
    optimizer = optimizerOf(bytes);
    decoded = decodeCheckpoint(bytes, paramSpecs, optimizerStateSpecs(optimizer, paramSpecs), { model: "char-transformer" });
  } catch (err) {
    if (!(err instanceof CheckpointError)) throw err;
    const dims = `layers ${shape.layers}, dModel ${shape.dModel}, context ${shape.context}, ffHidden ${shape.ffHidden}, vocab ${shape.vocab ?? "96 (sotu)"}`;
    throw fail(`does not match the manifest's char-transformer (${dims}): ${err.shortMessage}`, { cause: err });
  }
  for (let i = 0; i < paramSpecs.length; i++) {
    const j = decoded.params[i]!.findIndex((x) => !Number.isFinite(x));
    if (j >= 0) throw fail(`has a non-finite weight (${paramSpecs[i]!.name}[${j}] = ${decoded.params[i]![j]}); every state trained on it would be non-finite`, {});
  }
  return { params: decoded.params, opt: decoded.opt, optimizer };
}

/**
 * The base's weights (transformerParamSpecs order) and the optimizer its file carries, checked by
 * decodeCharTransformer: AdapterBaseError naming the CID and the first mismatch otherwise.
 */
export function decodeBase(bytes: Uint8Array, shape: TransformerShape, cid: string): { params: Float32Array[]; opt: Float32Array[]; optimizer: "sgd" | "adam" } {
  return decodeCharTransformer(bytes, shape, (what, options) => new AdapterBaseError(cid, `manifest field init.checkpointCid: base ${cid} ${what}`, options));
}
