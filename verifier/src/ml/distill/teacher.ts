/**
 * A distillation job's teacher: the checkpoint the manifest names by `distill.teacher.cid`, decoded as a
 * char-transformer of the declared `distill.teacher.arch` and checked before any step (so before any stake moves: the
 * dry run of `pouw buyer create` and `pouw provider accept` builds the run). Its optimizer state is read past and
 * dropped: the teacher is never trained.
 */
import { decodeCharTransformer } from "../adapters/base.ts";
import { ManifestError } from "../errors.ts";
import type { DistillConfig } from "../manifest.ts";
import type { TransformerShape } from "../state-layout.ts";
import type { PouwErrorOptions } from "../../errors/index.ts";

/**
 * The teacher checkpoint cannot be this manifest's teacher: it does not decode, it is a checkpoint of another model or
 * shape than the declared architecture, or it holds a non-finite weight. The buyer's input, refused before any stake
 * moves (provider/check-base.ts builds the run first).
 */
export class DistillTeacherError extends ManifestError {
  override name = "DistillTeacherError";
  override readonly code: string = "DISTILL_TEACHER";
  readonly cid: string;
  constructor(cid: string, message: string, options: PouwErrorOptions = {}) {
    super(message, options);
    this.cid = cid;
  }
}

/** The teacher's declared shape (defaults filled by the manifest parser). */
export function teacherShape(distill: DistillConfig): TransformerShape {
  const t = distill.teacher.arch;
  return { layers: t.layers, dModel: t.dModel, heads: t.heads, context: t.context, ffHidden: t.ffHidden ?? 4 * t.dModel, ...(t.vocab !== undefined ? { vocab: t.vocab } : {}) };
}

/** The teacher's weights (transformerParamSpecs order), checked against the declared shape: DistillTeacherError otherwise. */
export function decodeTeacher(bytes: Uint8Array, distill: DistillConfig): Float32Array[] {
  const cid = distill.teacher.cid;
  return decodeCharTransformer(bytes, teacherShape(distill), (what, options) => new DistillTeacherError(cid, `manifest field distill.teacher.cid: teacher ${cid} ${what}`, options)).params;
}
