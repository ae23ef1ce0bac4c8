/**
 * The per-example state of an inference job (evaluate, generate): what a "step" of the market is when the work is
 * one example, not one training update (docs/kinds.md "Leaves").
 *
 *   state(i) = { i, item_i, score_i, hit_i, total_i, hits_i, chain_i }   i = examples done (0 = before the first)
 *   item_i   = keccak256(the output bytes of example i)               (evaluate: its float32 logits; generate: the sample)
 *   total_i  = total_{i-1} + score_i,  hits_i = hits_{i-1} + hit_i,  chain_i = keccak256(chain_{i-1} || item_i)
 *   h(i)     = keccak256(abi.encode(uint256 jobId, uint256 i, uint8 kind, bytes32 subject, bytes32 item_i,
 *                                   uint256 score_i, uint256 hit_i, uint256 total_i, uint256 hits_i, bytes32 chain_i))
 *   subject  = keccak256(utf8 bytes of the model's CID)
 *
 * h(i) is the leaf the provider commits through JobMarket.commitSegment exactly as a training state hash, so the
 * existing root, challenge and panel rules apply unchanged. A wrong output, a skipped example or an aggregate that is
 * not the sum of the scores is a wrong h(i) at some example i, and a panel decides it by recomputing example i alone
 * from state i-1. The last leaf h(N) carries the aggregate: KindRecords.recordResult accepts a score only with the
 * preimage of the committed h(N), so no score other than the leaves' can be recorded.
 *
 * INVARIANT: every field is an integer or a hash, so the hash is the same on every machine and in Solidity
 * (KindRecords._endStateHash); the float per-example loss enters as round(1e6 * loss) computed in float64 from the
 * float32 value, an IEEE-exact operation in JavaScript.
 */
import canonicalizeModule from "canonicalize";
import { concat, encodeAbiParameters, keccak256, toBytes, type Hex } from "viem";
import { z } from "zod";
import { InputError } from "../errors/index.ts";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

export const SEGMENT_STATES_FORMAT = "pouw-example-states-1";

/** The job kinds whose step is one example; the numbers are the `kind` byte of h(i) and of KindRecords. */
export const KIND_CODES = { evaluate: 1, generate: 2 } as const;
export type InferenceKind = keyof typeof KIND_CODES;

export const ZERO32: Hex = `0x${"00".repeat(32)}`;
const UINT64_MAX = (1n << 64n) - 1n;

/** One example's contribution: the hash of its output bytes, its integer score and its hit count. */
export type ExampleResult = { readonly item: Hex; readonly score: bigint; readonly hits: bigint };

export type ExampleState = {
  readonly index: number;
  readonly item: Hex;
  readonly score: bigint;
  /** This example's hits (evaluate: correct predictions; generate: 0). */
  readonly hit: bigint;
  readonly total: bigint;
  readonly hits: bigint;
  readonly chain: Hex;
};

/** What every state hash of one job binds: the job, its kind and the model's CID. */
export type StateContext = { readonly jobId: bigint; readonly kind: InferenceKind; readonly modelCid: string };

export class ExampleStateError extends InputError {
  override name = "ExampleStateError";
  override readonly code: string = "EXAMPLE_STATE";
}

export const INITIAL_STATE: ExampleState = { index: 0, item: ZERO32, score: 0n, hit: 0n, total: 0n, hits: 0n, chain: ZERO32 };

export function subjectOf(modelCid: string): Hex {
  return keccak256(toBytes(modelCid));
}

/** state(i) from state(i-1) and example i's result (pure). */
export function nextState(prev: ExampleState, r: ExampleResult): ExampleState {
  if (r.score < 0n || r.score > UINT64_MAX) throw new ExampleStateError(`example ${prev.index + 1}: score ${r.score} is outside 0..2^64-1`);
  if (r.hits < 0n) throw new ExampleStateError(`example ${prev.index + 1}: hits ${r.hits} is negative`);
  return { index: prev.index + 1, item: r.item, score: r.score, hit: r.hits, total: prev.total + r.score, hits: prev.hits + r.hits, chain: keccak256(concat([prev.chain, r.item])) };
}

/** h(i) of a state (the same bits as KindRecords._endStateHash). */
export function exampleStateHash(ctx: StateContext, s: ExampleState): Hex {
  return keccak256(
    encodeAbiParameters(
      [{ type: "uint256" }, { type: "uint256" }, { type: "uint8" }, { type: "bytes32" }, { type: "bytes32" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }, { type: "bytes32" }],
      [ctx.jobId, BigInt(s.index), KIND_CODES[ctx.kind], subjectOf(ctx.modelCid), s.item, s.score, s.hit, s.total, s.hits, s.chain],
    ),
  );
}

/** Every state 0..N of a job from its per-example results (states[i] = state(i)). */
export function statesOf(results: readonly ExampleResult[]): ExampleState[] {
  const states: ExampleState[] = [INITIAL_STATE];
  for (const r of results) states.push(nextState(states[states.length - 1]!, r));
  return states;
}

/**
 * A segment's states first..last as a file (its CID is the segment's checkpointCid): canonical JSON, integers as
 * strings. With it an auditor checks every aggregate of the segment by hashing alone and recomputes only the examples
 * it samples; a panel member takes state s-1 from it and recomputes example s.
 */
export function encodeSegmentStates(ctx: StateContext, states: readonly ExampleState[]): Uint8Array {
  if (states.length < 2) throw new ExampleStateError(`a segment file needs at least 2 states, got ${states.length}`);
  states.forEach((s, j) => {
    if (s.index !== states[0]!.index + j) throw new ExampleStateError(`segment file state ${j} has index ${s.index}, expected ${states[0]!.index + j}`);
  });
  const body = {
    format: SEGMENT_STATES_FORMAT,
    jobId: ctx.jobId.toString(),
    kind: ctx.kind,
    modelCid: ctx.modelCid,
    states: states.map((s) => ({ index: s.index, item: s.item, score: s.score.toString(), hit: s.hit.toString(), total: s.total.toString(), hits: s.hits.toString(), chain: s.chain })),
  };
  return new TextEncoder().encode(canonicalize(body)!);
}

const hex32 = z.string().regex(/^0x[0-9a-f]{64}$/, "must be 0x and 64 lower-case hex digits");
const uintString = z.string().regex(/^(0|[1-9][0-9]*)$/, "must be a decimal integer string");
const StateEntry = z.strictObject({ index: z.number().int().min(0), item: hex32, score: uintString, hit: uintString, total: uintString, hits: uintString, chain: hex32 });
const SegmentFile = z.strictObject({
  format: z.literal(SEGMENT_STATES_FORMAT),
  jobId: uintString,
  kind: z.enum(["evaluate", "generate"]),
  modelCid: z.string(),
  states: z.array(StateEntry).min(2),
});

/** Decodes a segment file; ExampleStateError naming the field when it is not one of `ctx`'s job. */
export function decodeSegmentStates(ctx: StateContext, bytes: Uint8Array): ExampleState[] {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    throw new ExampleStateError("segment states file is not UTF-8 JSON", { cause: err });
  }
  const parsed = SegmentFile.safeParse(json);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new ExampleStateError(`segment states file field ${i.path.join(".") || "(root)"}: ${i.message}`);
  }
  const f = parsed.data;
  if (BigInt(f.jobId) !== ctx.jobId) throw new ExampleStateError(`segment states file is for job ${f.jobId}, not job ${ctx.jobId}`);
  if (f.kind !== ctx.kind) throw new ExampleStateError(`segment states file is of kind ${f.kind}, not ${ctx.kind}`);
  if (f.modelCid !== ctx.modelCid) throw new ExampleStateError(`segment states file names model ${f.modelCid}, not ${ctx.modelCid}`);
  return f.states.map((s) => ({ index: s.index, item: s.item as Hex, score: BigInt(s.score), hit: BigInt(s.hit), total: BigInt(s.total), hits: BigInt(s.hits), chain: s.chain as Hex }));
}
