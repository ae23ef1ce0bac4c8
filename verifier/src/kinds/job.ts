/**
 * One inference job on the market, kind-agnostic: the provider's segments (leaves h(i), the segment's states file as
 * its checkpoint), the auditor's sampled recompute and the panel member's one-example decision (docs/kinds.md).
 *
 * A "step" of the market is one example: segment k holds examples kK+1 .. (k+1)K and commits states kK .. (k+1)K,
 * exactly the K+1 state hashes a training segment commits, so JobMarket, DisputeGame and the panel rules need no
 * change. A kind supplies only `results(from, to)`: the honest per-example results of examples from+1 .. to (its
 * pinned forward pass, evaluate.ts and generate.ts).
 */
import type { Hex } from "viem";
import type { PanelVote } from "../dispute/ballots.ts";
import type { ChallengeProof } from "../checks/segment.ts";
import type { ContentSource } from "../store/index.ts";
import { SegmentTree, segmentStateRange } from "../trace/index.ts";
import { InputError } from "../errors/index.ts";
import { decodeSegmentStates, encodeSegmentStates, exampleStateHash, INITIAL_STATE, KIND_CODES, nextState, statesOf, type ExampleResult, type ExampleState, type StateContext } from "./state.ts";

/** A kind's forward pass over the job's examples. */
export interface ExampleJob {
  readonly ctx: StateContext;
  /** N: the job's examples (= policy segments x stepsPerSegment). */
  readonly examples: number;
  /** K: examples per committed segment. */
  readonly examplesPerSegment: number;
  /** The honest results of examples from+1 .. to (1-based steps; from < to <= N). */
  results(from: number, to: number): Promise<ExampleResult[]>;
}

/** One committed segment as the chain holds it (SegmentCommitted). */
export type KindCommit = { readonly segment: number; readonly traceRoot: Hex; readonly endStateHash: Hex; readonly checkpointCid: string; readonly stateHashes: readonly Hex[] };

/** What the provider commits for one segment and the file it publishes under checkpointCid. */
export type KindSegment = {
  readonly index: number;
  readonly first: number;
  readonly last: number;
  readonly states: readonly ExampleState[];
  readonly stateHashes: readonly Hex[];
  readonly traceRoot: Hex;
  readonly file: Uint8Array;
  /** The running mean score at the segment's end (informational, SegmentCommitted.lossE6). */
  readonly lossE6: bigint;
};

export class KindJobError extends InputError {
  override name = "KindJobError";
  override readonly code: string = "KIND_JOB";
}

export function checkShape(job: Pick<ExampleJob, "examples" | "examplesPerSegment">): number {
  const { examples: N, examplesPerSegment: K } = job;
  if (!Number.isInteger(K) || K < 1) throw new KindJobError(`examples per segment must be a positive integer, got ${K}`);
  if (!Number.isInteger(N) || N < 1 || N % K !== 0) throw new KindJobError(`the job's ${N} examples are not a whole number of segments of ${K}`);
  return N / K;
}

/** The segments of a job from its per-example results (honest or not: the provider's choice). */
export function kindSegments(job: ExampleJob, results: readonly ExampleResult[]): KindSegment[] {
  const segments = checkShape(job);
  if (results.length !== job.examples) throw new KindJobError(`${results.length} results for a job of ${job.examples} examples`);
  return segmentsOfStates(job, statesOf(results), segments);
}

/** The segments of a job from its states 0..N (a provider that forges states passes them here). */
export function segmentsOfStates(job: ExampleJob, states: readonly ExampleState[], segments = checkShape(job)): KindSegment[] {
  const K = job.examplesPerSegment;
  const out: KindSegment[] = [];
  for (let k = 0; k < segments; k++) {
    const { first, last } = segmentStateRange(k, K);
    const seg = states.slice(first, last + 1);
    const stateHashes = seg.map((s) => exampleStateHash(job.ctx, s));
    const end = seg[seg.length - 1]!;
    out.push({ index: k, first, last, states: seg, stateHashes, traceRoot: new SegmentTree(first, stateHashes).root, file: encodeSegmentStates(job.ctx, seg), lossE6: end.index === 0 ? 0n : end.total / BigInt(end.index) });
  }
  return out;
}

/** The provider's states of a committed segment, checked against its on-chain leaves; a failure says why. */
export async function servedStates(job: ExampleJob, store: ContentSource, c: KindCommit): Promise<{ ok: true; states: ExampleState[] } | { ok: false; served: boolean; reason: string }> {
  let states: ExampleState[];
  try {
    states = decodeSegmentStates(job.ctx, await store.get(c.checkpointCid, { maxBytes: 1 << 26 }));
  } catch (err) {
    return { ok: false, served: false, reason: `segment ${c.segment}'s states file ${c.checkpointCid} is not served or does not decode: ${(err as Error).message}` };
  }
  const { first } = segmentStateRange(c.segment, job.examplesPerSegment);
  if (states.length !== c.stateHashes.length) return { ok: false, served: true, reason: `segment ${c.segment}'s states file holds ${states.length} states, the commitment ${c.stateHashes.length}` };
  for (let j = 0; j < states.length; j++) {
    if (states[j]!.index !== first + j || exampleStateHash(job.ctx, states[j]!) !== c.stateHashes[j]) {
      return { ok: false, served: true, reason: `segment ${c.segment}'s served state ${first + j} does not hash to its committed leaf ${c.stateHashes[j]}` };
    }
  }
  return { ok: true, states };
}

/**
 * The first example of segment `segment` whose panel decision reads the segment's states file (decideExample: state
 * s-1 is served from it, except state 0, the job's fixed initial state): the example a claim of an unserved or
 * inconsistent states file names. Undefined for a first segment of one example (decided from the leaves alone).
 */
export function fileDependentExample(job: Pick<ExampleJob, "examplesPerSegment">, segment: number): number | undefined {
  const { first, last } = segmentStateRange(segment, job.examplesPerSegment);
  const s = first === 0 ? 2 : first + 1;
  return s <= last ? s : undefined;
}

/** The challenge of step s of a committed segment (the leaves are on chain, so the proof is always buildable). */
export function kindChallengeProof(job: ExampleJob, c: KindCommit, s: number, expectedStateHash?: Hex): ChallengeProof {
  const { first, last } = segmentStateRange(c.segment, job.examplesPerSegment);
  if (s <= first || s > last) throw new KindJobError(`example ${s} is not in segment ${c.segment} (${first + 1}..${last})`);
  const tree = new SegmentTree(first, c.stateHashes);
  if (tree.root !== c.traceRoot) throw new KindJobError(`segment ${c.segment}'s leaves give root ${tree.root}, the committed root is ${c.traceRoot}`);
  return {
    segment: c.segment,
    traceRoot: c.traceRoot,
    step: s,
    prevStateHash: c.stateHashes[s - 1 - first]!,
    prevProof: tree.proof(s - 1),
    stateHash: c.stateHashes[s - first]!,
    proof: tree.proof(s),
    ...(expectedStateHash ? { expectedStateHash } : {}),
  };
}

/**
 * Why an audit failed: h(0) is not the job's initial state, the states file is not served or does not decode, its
 * states do not hash to the committed leaves, an aggregate (total, hits, chain) is not its predecessor's plus the
 * example's, or a recomputed example's output or score is not the committed one.
 */
export type KindFailure = "initial-state" | "states-not-served" | "states-mismatch" | "aggregate" | "output";

export type KindAudit = { ok: true; segment: number; checked: number[] } | { ok: false; segment: number; failure: KindFailure; reason: string; proof: ChallengeProof };

/**
 * Audits one committed segment: the states file must hash to the leaves (else the first example whose decision reads
 * it is challenged, fileDependentExample: the provider withheld what it committed to), every aggregate is re-derived from the served states by hashing
 * alone, and the examples in `sample` (1-based steps of this segment; default all) are recomputed. Returns the first
 * wrong example with its challenge proof.
 */
export async function auditKindSegment(job: ExampleJob, store: ContentSource, c: KindCommit, sample?: readonly number[]): Promise<KindAudit> {
  const { first, last } = segmentStateRange(c.segment, job.examplesPerSegment);
  const wrong = (s: number, failure: KindFailure, reason: string, expected?: Hex): KindAudit => ({ ok: false, segment: c.segment, failure, reason, proof: kindChallengeProof(job, c, s, expected) });
  // INVARIANT: h(0) is fixed by the job: a provider cannot start its aggregate anywhere but zero
  if (c.segment === 0 && c.stateHashes[0] !== exampleStateHash(job.ctx, INITIAL_STATE)) return wrong(1, "initial-state", "h(0) is not the job's initial state");
  const served = await servedStates(job, store, c);
  if (!served.ok) {
    const claim = fileDependentExample(job, c.segment);
    if (claim !== undefined) return wrong(claim, served.served ? "states-mismatch" : "states-not-served", served.reason);
    // a one-example first segment needs no states file: example 1 is recomputed from the fixed initial state
    const [r] = await job.results(0, 1);
    const expected = exampleStateHash(job.ctx, nextState(INITIAL_STATE, r!));
    return expected === c.stateHashes[1] ? { ok: true, segment: 0, checked: [1] } : wrong(1, "output", `example 1: recomputed h(1) = ${expected}, the provider committed ${c.stateHashes[1]}`, expected);
  }
  const states = served.states;
  const steps = [...(sample ?? Array.from({ length: last - first }, (_, j) => first + 1 + j))].sort((a, b) => a - b);
  for (const s of steps) if (s <= first || s > last) throw new KindJobError(`sampled example ${s} is not in segment ${c.segment} (${first + 1}..${last})`);
  // the aggregates of every example: free (hashing only), so checked for all, not only the sampled ones
  for (let s = first + 1; s <= last; s++) {
    const prev = states[s - 1 - first]!;
    const mine = states[s - first]!;
    const derived = nextState(prev, { item: mine.item, score: mine.score, hits: mine.hit });
    if (derived.total !== mine.total || derived.hits !== mine.hits || derived.chain !== mine.chain) {
      return wrong(s, "aggregate", `example ${s}: the committed aggregate (total ${mine.total}, hits ${mine.hits}) is not state ${s - 1}'s plus this example's (total ${derived.total}, hits ${derived.hits})`, exampleStateHash(job.ctx, derived));
    }
  }
  // NOTE: a run of consecutive sampled examples is recomputed in one call (results is the same per example in any
  // range: the provider computed all N at once, a panel member recomputes one)
  const unique = [...new Set(steps)];
  for (let a = 0; a < unique.length; ) {
    let b = a + 1;
    while (b < unique.length && unique[b] === unique[b - 1]! + 1) b++;
    const rs = await job.results(unique[a]! - 1, unique[b - 1]!);
    for (let j = a; j < b; j++) {
      const s = unique[j]!;
      const r = rs[j - a]!;
      const expected = nextState(states[s - 1 - first]!, r);
      if (exampleStateHash(job.ctx, expected) !== c.stateHashes[s - first]) {
        const got = states[s - first]!;
        return wrong(s, "output", `example ${s}: recomputed item ${r.item} score ${r.score}, the provider committed item ${got.item} score ${got.score}`, exampleStateHash(job.ctx, expected));
      }
    }
    a = b;
  }
  return { ok: true, segment: c.segment, checked: unique };
}

export type KindDecision = { vote: PanelVote; reason: string };

/**
 * A panel member's vote on step s of an inference job: Valid iff h(s) = hash(nextState(state s-1, recomputed
 * example s)). State s-1 is h(0)'s fixed preimage for s = 1, else the provider's served state s-1 (the states file
 * must hash to the committed leaves: what the provider does not serve, or serves inconsistently, is a Fault).
 */
export async function decideExample(job: ExampleJob, store: ContentSource, c: KindCommit, p: { step: number; hPrev: Hex; hStep: Hex }): Promise<KindDecision> {
  const { first, last } = segmentStateRange(c.segment, job.examplesPerSegment);
  const s = p.step;
  if (s <= first || s > last) throw new KindJobError(`disputed example ${s} is not in segment ${c.segment} (${first + 1}..${last})`);
  if (c.stateHashes[s - 1 - first] !== p.hPrev || c.stateHashes[s - first] !== p.hStep) {
    return { vote: "Fault", reason: `the committed leaves of examples ${s - 1}, ${s} differ from the disputed ones` };
  }
  let prev: ExampleState;
  if (s === 1) {
    // INVARIANT: state 0 is the job's fixed initial state, whatever the provider serves
    if (p.hPrev !== exampleStateHash(job.ctx, INITIAL_STATE)) return { vote: "Fault", reason: "h(0) is not the job's initial state" };
    prev = INITIAL_STATE;
  } else {
    const served = await servedStates(job, store, c);
    if (!served.ok) return { vote: "Fault", reason: served.reason };
    prev = served.states[s - 1 - first]!;
  }
  const [r] = await job.results(s - 1, s);
  const h = exampleStateHash(job.ctx, nextState(prev, r!));
  return h === p.hStep
    ? { vote: "Valid", reason: `recomputed h(${s}) = ${h} from example ${s} matches the committed leaf` }
    : { vote: "Fault", reason: `recomputed h(${s}) = ${h} from example ${s}, the provider committed ${p.hStep}` };
}

/** h(N)'s preimage as KindRecords.recordResult takes it (less jobId, N and the model's CID, which it supplies). */
export function endStateOf(job: Pick<ExampleJob, "ctx">, last: ExampleState): { kind: number; item: Hex; score: bigint; hit: bigint; total: bigint; hits: bigint; chain: Hex } {
  return { kind: KIND_CODES[job.ctx.kind], item: last.item, score: last.score, hit: last.hit, total: last.total, hits: last.hits, chain: last.chain };
}
