/**
 * The state screen: cheap checks on one served state (weights AND optimizer state) that need no
 * forward or backward pass, so that an auditor can run them on EVERY committed state, not only on
 * the sampled segments. A cheat whose effect persists in the state (huge Adam moments that make
 * later gradients vanish, a planted NaN, a skipped step) is caught at the next committed state even
 * when the segment that injected it is never sampled. docs/checks.md derives every bound.
 *
 * `screenState(config, state, previous?)` is a pure function (data in, verdict out): the bot and
 * the CLI call it on every segment's start checkpoint, the magnitude, tolerance and progress checks
 * on every state they read. `screenConfigOf(run)` derives the config from a Run; `screenSegment`
 * (screen-segment.ts) is the I/O wrapper that fetches and verifies a segment's checkpoint first.
 *
 * Checks, in order (the first failure is the verdict):
 *   1. every value of every tensor is finite                               state-non-finite
 *   2. Adam's bias-correction powers are b1^t and b2^t exactly as the engine computes them (t float32
 *      multiplications from 1)                                             optimizer-state-invalid
 *   3. v >= 0, and the Cauchy-Schwarz relation m^2 <= C_t * v, which holds for ANY gradient sequence
 *      from m_0 = v_0 = 0 (C_t = (1-b1)^2/(1-b2) * sum_{j<t} (b1^2/b2)^j, with rounding)
 *                                                                          moment-bound-exceeded
 *   4. given a per-element gradient bound G over the window since the previous state a (K steps;
 *      a = 0 with zero moments when no previous state is given):
 *        |m_b - b1^K m_a| <= (1 - b1^K) G,   b2^K v_a <= v_b <= b2^K v_a + (1 - b2^K) G^2
 *      (with rounding)                                                     moment-bound-exceeded
 *   5. with a previous state: every weight moved at most the sum of Adam's largest updates over the
 *      window (magnitude.ts adamRatioBound)                                magnitude-exceeded
 *
 * G comes from the model and the data alone (no forward pass): the model's analytic bound where it has one
 * (Model.gradientBound; mnist-mlp: ml/models/mlp-bounds.ts, per element from the weight norms over the window's end
 * states and the weights' largest drift). Other models take a calibrated ceiling per tensor or none (checks 4
 * skipped, reported in the details).
 *
 * IMPORTANT: every bound starts from a step-0 optimizer state (m = v = 0, powers 1). Fine-tuning jobs have one too:
 * their h(0) is the base's weights with a fresh optimizer state (Run.initFromStore, manifest init.optimizerState
 * "fresh"), never the base's moments and powers (docs/checks.md "Fine-tuning jobs").
 *
 * IMPORTANT: honest runs must never fail: every bound holds for any gradient sequence an honest run
 * can produce, float32 rounding included (gamma factors, underflow terms, a 2^-8 slack on G for the
 * rounding of the gradient itself). test/checks/state-screen.test.ts runs honest runs of several seeds
 * through it; bench/detection.ts counts false alarms over 100 runs.
 */
import type { OptimizerConfig } from "../ml/manifest.ts";
import type { FactoredBound, ModelGradientBound } from "../ml/models/types.ts";
import type { Run, TrainState } from "../ml/run.ts";
import { sizeOf, type TensorSpec } from "../ml/tensors.ts";
import { adamRatioBound } from "./adam-bound.ts";
import type { AuditFailure } from "./segment.ts";

/** A per-element bound on every gradient the model can produce, as a function of the weights. */
export type GradientBound =
  /** The model's analytic bound on the run's data (Model.gradientBound; its kind names the model). */
  | ModelGradientBound
  /** A fixed ceiling per tensor (e.g. calibrated on honest runs with a margin). */
  | { readonly kind: "ceiling"; readonly perTensor: readonly number[] }
  /** No bound known: the gradient-bound checks (4) are skipped. */
  | { readonly kind: "none" };

export type ScreenConfig = {
  readonly optimizer: OptimizerConfig;
  readonly paramSpecs: readonly TensorSpec[];
  readonly optSpecs: readonly TensorSpec[];
  readonly gradients: GradientBound;
};

/** Worst value/bound ratios seen (<= 1 passes); null where the check did not run. */
export type ScreenDetails = {
  readonly step: number;
  /** Steps since the previous state (the window of checks 4 and 5); null without one. */
  readonly window: number | null;
  readonly relation: number | null;
  readonly firstMoment: number | null;
  readonly secondMoment: number | null;
  readonly weights: number | null;
  /** The bound's kind: "ceiling", "none", or the model whose analytic bound it is. */
  readonly gradientBound: string;
};

export type ScreenResult =
  | { readonly ok: true; readonly details: ScreenDetails }
  | { readonly ok: false; readonly failure: AuditFailure; readonly tensor: string; readonly index: number; readonly details: ScreenDetails };

const U = 2 ** -24;
/**
 * Relative slack on the gradient bound for the float32 rounding of the gradient itself: each bound
 * above is a sum of absolute values, which the computed sums exceed by at most gamma(terms) (batch
 * sums of up to 2^17 examples, the softmax's few roundings): below 2^-6.
 */
const G_SLACK = 1 + 2 ** -6;
/** Relative slack for the float64 arithmetic of the check itself. */
const CHECK_SLACK = 1 + 2 ** -40;
/** Adam's per-step update bound: the magnitude check's slack (2^-10) and one float32 ulp of the weight. */
const STEP_SLACK = 1 + 2 ** -10;
const WEIGHT_ULP = 2 ** -23;
const f = Math.fround;
const gamma = (k: number): number => (k * U < 0.5 ? (k * U) / (1 - k * U) : Infinity);

/**
 * The float32 constants and per-step schedules of one Adam configuration, extended lazily: the
 * bias-correction powers as the engine computes them, prefix sums of the per-step weight drift, and
 * the rounding-inclusive sums of the moment bounds.
 */
class AdamSchedule {
  readonly b1: number;
  readonly b2: number;
  readonly w1: number;
  readonly w2: number;
  readonly lr: number;
  readonly cfg: { beta1: number; beta2: number };
  /** p1[t], p2[t]: the engine's b1^t and b2^t (t float32 multiplications from 1). */
  private readonly p1: number[] = [1];
  private readonly p2: number[] = [1];
  /** drift[t] = sum_{u<=t} of the largest |w_u - w_{u-1}| per coordinate, without the ulp term. */
  private readonly drift: number[] = [0];
  /** relation[t] = C_t; mSum[K], vSum[K]: sum_{j<K} b^j (1 + gamma) of the window bounds. */
  private readonly relation: number[] = [0];
  private readonly mSum: number[] = [0];
  private readonly vSum: number[] = [0];

  constructor(cfg: Extract<OptimizerConfig, { name: "adam" }>) {
    this.b1 = f(cfg.beta1);
    this.b2 = f(cfg.beta2);
    this.w1 = f(1 - cfg.beta1);
    this.w2 = f(1 - cfg.beta2);
    this.lr = f(cfg.lr);
    this.cfg = { beta1: cfg.beta1, beta2: cfg.beta2 };
  }

  powers(t: number): [number, number] {
    for (let u = this.p1.length; u <= t; u++) {
      this.p1.push(f(this.p1[u - 1]! * this.b1));
      this.p2.push(f(this.p2[u - 1]! * this.b2));
    }
    return [this.p1[t]!, this.p2[t]!];
  }

  /** Largest per-coordinate weight change over steps a+1..b (without the per-step ulp term). */
  driftBetween(a: number, b: number): number {
    for (let u = this.drift.length; u <= b; u++) {
      const [q1, q2] = this.powers(u);
      this.drift.push(this.drift[u - 1]! + this.lr * adamRatioBound(this.cfg.beta1, this.cfg.beta2, q1, q2, u) * STEP_SLACK);
    }
    return this.drift[b]! - this.drift[a]!;
  }

  /**
   * C_t with m^2 <= C_t v for the computed moments of any gradient sequence: the Cauchy-Schwarz
   * constant sum_j a_j^2 / w_j with a_j = w1 b1^j (1 + gamma_{2j+2}) (the computed m's weights) and
   * w_j = w2 b2^j (1 - gamma_{2j+3}) (the computed v's). Infinity when b2 = 0 (no relation).
   */
  relationConstant(t: number): number {
    if (this.b2 === 0) return Infinity;
    const rho = (this.b1 * this.b1) / this.b2;
    const cap = rho < 1 ? Math.ceil(-60 / Math.log2(rho)) : 1e7;
    if (t > cap) {
      if (rho >= 1) return Infinity;
      t = cap; // later terms are below 2^-60 of the first; the tail is covered by CHECK_SLACK's order
    }
    for (let j = this.relation.length - 1; j < t; j++) {
      const term = ((this.w1 * this.w1) / this.w2) * rho ** j * ((1 + gamma(2 * j + 2)) ** 2 / (1 - gamma(2 * j + 3)));
      this.relation.push(this.relation[j]! + term);
    }
    return this.relation[t]! * (1 + 2 ** -50);
  }

  /** [w1 sum_{j<K} b1^j (1 + gamma_{2j+2}), w2 sum_{j<K} b2^j (1 + gamma_{2j+3})]: the window bounds' G and G^2 factors. */
  windowSums(K: number): [number, number] {
    // terms beyond b^j < 2^-80 (and always beyond 2^22, where gamma stops being finite) are bounded
    // by the geometric tail with a factor 2 for the rounding
    const bmax = Math.max(this.b1, this.b2);
    const cap = bmax === 0 ? 1 : Math.min(1 << 22, Math.ceil(80 / -Math.log2(bmax)));
    const k = Math.min(K, cap);
    for (let j = this.mSum.length - 1; j < k; j++) {
      this.mSum.push(this.mSum[j]! + this.w1 * this.b1 ** j * (1 + gamma(2 * j + 2)));
      this.vSum.push(this.vSum[j]! + this.w2 * this.b2 ** j * (1 + gamma(2 * j + 3)));
    }
    const tail = (w: number, b: number) => (K > cap ? (2 * w * b ** cap) / (1 - b) : 0);
    return [this.mSum[k]! + tail(this.w1, this.b1), this.vSum[k]! + tail(this.w2, this.b2)];
  }
}

const schedules = new Map<string, AdamSchedule>();
function scheduleOf(cfg: Extract<OptimizerConfig, { name: "adam" }>): AdamSchedule {
  const key = `${cfg.lr}/${cfg.beta1}/${cfg.beta2}`;
  let s = schedules.get(key);
  if (!s) {
    s = new AdamSchedule(cfg);
    if (schedules.size > 32) schedules.clear();
    schedules.set(key, s);
  }
  return s;
}

/** The engine's b1^t and b2^t for an Adam configuration (what a state of step t must hold). */
export function adamPowers(cfg: Extract<OptimizerConfig, { name: "adam" }>, t: number): [number, number] {
  return scheduleOf(cfg).powers(t);
}

/**
 * Check 5's per-coordinate allowance without the ulp term: the sum of Adam's largest per-step weight changes over steps
 * from+1..to. A weight that moved more than this (plus the rounding terms) fails the screen; anything less passes it.
 */
export function adamDriftBound(cfg: Extract<OptimizerConfig, { name: "adam" }>, from: number, to: number): number {
  return scheduleOf(cfg).driftBetween(from, to);
}

type Factored = FactoredBound;

/**
 * Per-element gradient bounds for every tensor over the window whose end states are `ends` (each with
 * the per-coordinate drift bound from it to any state of the window), or null without a model bound.
 */
function gradientBounds(g: GradientBound, specs: readonly TensorSpec[], ends: readonly { params: readonly Float32Array[]; drift: number }[], growth: number): Factored[] | null {
  if ("perElement" in g) {
    const bounds = g.perElement(ends, growth, G_SLACK);
    if (bounds.length !== specs.length) throw new RangeError(`the ${g.kind} gradient bound has ${bounds.length} tensors, the model ${specs.length}`);
    return bounds;
  }
  if (g.kind === "none") return null;
  if (g.perTensor.length !== specs.length) throw new RangeError(`gradient ceiling has ${g.perTensor.length} tensors, the model ${specs.length}`);
  return specs.map((s, i) => ({ row: [g.perTensor[i]! * G_SLACK], col: new Float64Array(sizeOf(s.shape)).fill(1), cols: sizeOf(s.shape) }));
}

function firstNonFinite(arrays: readonly Float32Array[]): { tensor: number; index: number; value: number } | null {
  for (let i = 0; i < arrays.length; i++) {
    const a = arrays[i]!;
    for (let j = 0; j < a.length; j++) {
      const x = a[j]!;
      // x - x is 0 for every finite x and NaN for NaN and +-Infinity: one comparison per element
      if (x - x !== 0) return { tensor: i, index: j, value: x };
    }
  }
  return null;
}

/**
 * Screens `state` (weights and optimizer state of step state.step); `previous`, when given, is an
 * earlier verified state of the same run (the previous segment's start, or step t-1), which enables
 * the window bounds and weight continuity. Pure: no I/O, no randomness; O(parameters).
 */
export function screenState(config: ScreenConfig, state: TrainState, previous?: TrainState): ScreenResult {
  const { paramSpecs, optSpecs } = config;
  const t = state.step;
  const names = [...paramSpecs.map((s) => s.name), ...optSpecs.map((s) => `opt.${s.name}`)];
  if (state.params.length !== paramSpecs.length || state.opt.length !== optSpecs.length) throw new RangeError(`screenState: state has ${state.params.length}+${state.opt.length} tensors, the model ${paramSpecs.length}+${optSpecs.length}`);
  if (previous && !(previous.step < t)) throw new RangeError(`screenState: previous state ${previous.step} is not before state ${t}`);
  const K = previous ? t - previous.step : null;
  const details: { -readonly [k in keyof ScreenDetails]: ScreenDetails[k] } = { step: t, window: K, relation: null, firstMoment: null, secondMoment: null, weights: null, gradientBound: config.gradients.kind };
  const fail = (kind: AuditFailure["kind"], tensor: number, index: number, message: string): ScreenResult => ({
    ok: false,
    failure: { kind, message: `state ${t}: ${message}` },
    tensor: names[tensor] ?? "",
    index,
    details,
  });

  // 1. finiteness, first and cheapest (a NaN makes every later comparison false)
  for (const [label, s] of [["", state], [`the previous state ${previous?.step}: `, previous]] as const) {
    if (!s) continue;
    const bad = firstNonFinite([...s.params, ...s.opt]);
    if (bad) return fail("state-non-finite", bad.tensor, bad.index, `${label}${names[bad.tensor]}[${bad.index}] is ${bad.value}`);
  }
  const opt = config.optimizer;
  if (opt.name !== "adam") return { ok: true, details }; // plain SGD has no optimizer state to bound
  const n = paramSpecs.length;
  const sched = scheduleOf(opt);
  // indices into `names` of the optimizer tensors: m of parameter i, v of parameter i, the powers
  const M = (i: number) => n + i;
  const V = (i: number) => 2 * n + i;

  // 2. the bias-correction powers are the step's exact value, not merely advancing
  for (const s of previous ? [state, previous] : [state]) {
    const [e1, e2] = sched.powers(s.step);
    const p1 = s.opt[2 * n]![0]!;
    const p2 = s.opt[2 * n + 1]![0]!;
    if (p1 !== e1 || p2 !== e2) {
      return fail("optimizer-state-invalid", p1 !== e1 ? 3 * n : 3 * n + 1, 0, `state ${s.step}'s bias-correction powers are (${p1}, ${p2}), step ${s.step} has (${e1}, ${e2})`);
    }
  }

  // 3 and 4, per element over the moment tensors. Check 4 runs over two windows when a previous
  // state is given: since it (tight) and since step 0 (so that a poisoned previous state, which the
  // window since it would take as its baseline, is still caught here)
  const C = sched.relationConstant(t);
  const etaM = 2 ** -140 / (1 - sched.b1 || 1);
  const etaV = 2 ** -140 / (1 - sched.b2 || 1);
  type Window = { from: number; base?: TrainState; G: Factored[] | null; mSum: number; vSum: number; decay1: number; decay2: number; roundDecay: number };
  const windows: Window[] = [];
  for (const base of previous ? [previous, undefined] : [undefined]) {
    const from = base?.step ?? 0;
    const K = t - from;
    const [mSum, vSum] = sched.windowSums(K);
    const ends = [{ params: state.params, drift: sched.driftBetween(from, t) }];
    if (base) ends.push({ params: base.params, drift: sched.driftBetween(from, t - 1) });
    const G = gradientBounds(config.gradients, paramSpecs, ends, 1 + (K + 1) * 2 ** -22);
    windows.push({ from, ...(base ? { base } : {}), G, mSum, vSum, decay1: sched.b1 ** K, decay2: sched.b2 ** K, roundDecay: gamma(2 * K) });
  }
  let worstRel = 0;
  let worstM = 0;
  let worstV = 0;
  for (let i = 0; i < n; i++) {
    const m = state.opt[i]!;
    const v = state.opt[n + i]!;
    for (let j = 0; j < m.length; j++) {
      const mj = m[j]!;
      const vj = v[j]!;
      if (vj < 0) return fail("moment-bound-exceeded", V(i), j, `${names[V(i)]}[${j}] = ${vj} < 0: a second moment is a sum of squares`);
      const am = Math.abs(mj) - etaM;
      if (am > 0) {
        const r = (am * am) / (C * (vj + etaV) * CHECK_SLACK);
        if (r > worstRel) {
          worstRel = r;
          if (r > 1) return fail("moment-bound-exceeded", M(i), j, `|m| = ${Math.abs(mj)} exceeds sqrt(C_t v) = ${Math.sqrt(C * vj)} (m^2 <= C_t v holds for every gradient sequence; C_t = ${C.toPrecision(6)})`);
        }
      }
    }
    for (const w of windows) {
      const g = w.G?.[i];
      if (!g) continue;
      const K = t - w.from;
      const m0 = w.base?.opt[i];
      const v0 = w.base?.opt[n + i];
      const { row, col, cols } = g;
      const rows = m.length / cols;
      const { decay1, decay2 } = w;
      // per element: |m - d1 m0| <= (rd d1 |m0| + mSum G + etaM) s,  v - d2 v0 <= (rd d2 v0 + vSum G^2 (1+u) + etaV) s,
      // v >= d2 v0 (1 - rd) - etaV; with s = CHECK_SLACK and rd the rounding of the decay
      const rdm = w.roundDecay * decay1 * CHECK_SLACK;
      const rdv = w.roundDecay * decay2 * CHECK_SLACK;
      const mS = w.mSum * CHECK_SLACK;
      const vS = w.vSum * (1 + U) * CHECK_SLACK;
      const eM = etaM * CHECK_SLACK;
      const eV = etaV * CHECK_SLACK;
      const low = decay2 * (1 - w.roundDecay);
      for (let r = 0, j = 0; r < rows; r++) {
        const gr = row[r]!;
        for (let c = 0; c < cols; c++, j++) {
          const gj = gr * col[c]!;
          const ma = m0 ? m0[j]! : 0;
          const va = v0 ? v0[j]! : 0;
          const rm = Math.abs(m[j]! - decay1 * ma) / (rdm * Math.abs(ma) + mS * gj + eM);
          const rv = (v[j]! - decay2 * va) / (rdv * va + vS * gj * gj + eV);
          if (rm > worstM) {
            worstM = rm;
            if (rm > 1) return fail("moment-bound-exceeded", M(i), j, `|m - b1^${K} m_${w.from}| = ${Math.abs(m[j]! - decay1 * ma)} exceeds ${(rdm * Math.abs(ma) + mS * gj + eM)} (gradient bound ${gj} over ${K} step(s))`);
          }
          if (rv > worstV) {
            worstV = rv;
            if (rv > 1) return fail("moment-bound-exceeded", V(i), j, `v - b2^${K} v_${w.from} = ${v[j]! - decay2 * va} exceeds ${rdv * va + vS * gj * gj + eV} (gradient bound ${gj} over ${K} step(s))`);
          }
          if (v[j]! < low * va - etaV) return fail("moment-bound-exceeded", V(i), j, `v = ${v[j]} fell below b2^${K} v_${w.from} = ${decay2 * va}: a second moment only decays by b2 per step`);
        }
      }
    }
  }
  details.relation = worstRel;
  if (windows[0]!.G) {
    details.firstMoment = worstM;
    details.secondMoment = worstV;
  }

  // 5. weight continuity over the window
  if (previous) {
    const D = sched.driftBetween(previous.step, t);
    let worstW = 0;
    const window = t - previous.step;
    for (let i = 0; i < n; i++) {
      const w1 = state.params[i]!;
      const w0 = previous.params[i]!;
      for (let j = 0; j < w1.length; j++) {
        const bound = (D + window * WEIGHT_ULP * (Math.max(Math.abs(w0[j]!), Math.abs(w1[j]!)) + D)) * CHECK_SLACK;
        const r = Math.abs(w1[j]! - w0[j]!) / bound;
        if (r > worstW) worstW = r;
        if (r > 1) return fail("magnitude-exceeded", i, j, `${names[i]}[${j}] moved ${Math.abs(w1[j]! - w0[j]!)} in ${window} step(s), Adam moves a weight at most ${bound}`);
      }
    }
    details.weights = worstW;
  }
  return { ok: true, details };
}

/** The screen's configuration for a run: its optimizer and tensors, and the model's gradient bound on the run's data. */
export function screenConfigOf(run: Run, gradients?: GradientBound): ScreenConfig {
  return { optimizer: run.manifest.optimizer, paramSpecs: run.paramSpecs, optSpecs: run.optSpecs, gradients: gradients ?? run.model.gradientBound?.(run.data) ?? { kind: "none" } };
}
