/**
 * Provider strategies: `honest` and the cheats the auditor's checks are measured against. Each
 * cheat saves real compute or plants something, and still produces a well-formed trace: the
 * cheater commits the hashes of the states it actually produced, as a real cheater would.
 *
 *   honest           the shared step function.
 *   skip:<f>         skips a share f of the steps (state carried over unchanged): step t is skipped
 *                    iff floor(t*f) > floor((t-1)*f), spreading skips evenly. Saves f of the compute.
 *   quarter-batch    computes the gradient on the first ceil(B/4) examples of each batch. Saves ~3/4.
 *   stale:<k>        computes a fresh gradient only at steps t = 1, 1+k, 1+2k, ... and reuses it
 *                    (up to k-1 steps old) in between. Saves (k-1)/k of the gradient compute.
 *   fp16             honest gradient, but the update (new - old weights) is rounded to IEEE half
 *                    precision. Saves nominally half the arithmetic cost (fp16 at twice fp32
 *                    throughput on accelerators); this CPU engine only emulates the rounding.
 *   copy:<dir>       copies another provider's trace of the same manifest (another jobId): re-keys
 *                    the states it holds (the segment-start checkpoints) to its own jobId and copies
 *                    the peer's other state hashes verbatim. Saves all compute.
 *   full-copy:<dir>  copies a peer's trace with its per-step states (<dir> has steps.json): re-keys
 *                    EVERY state to its own jobId and commits their hashes, so trace, checkpoints and
 *                    per-step states are consistent and every update is a real optimizer step. Only
 *                    the job salt catches it: its batches are the peer's, so the recompute of the first
 *                    step of every segment differs (salt.ts). Saves all compute.
 *   plant:<s>        honest, but adds a planted weight delta (+0.25 on the first 64 entries of the
 *                    first parameter tensor, e.g. the MLP's weights from the always-blank corner
 *                    pixel: a backdoor trigger) after step s. Saves nothing; plants something.
 *   near-zero        computes no gradients: each step adds a tiny pseudo-random delta (|d| < 1e-6)
 *                    and reports the first batch's loss. Saves all but one gradient.
 *   state-poison[:s] Adam only. Step s (default 1) is honest, but writes huge moments (m = 1e12,
 *                    v = 1e34 in every coordinate; weights honest). From then on every gradient
 *                    vanishes in float32 rounding (b1*m + (1-b1)*g rounds to b1*m, b2*v + (1-b2)*g^2 to
 *                    b2*v), so the cheater takes each later step with zero gradients: no forward or
 *                    backward pass, and bit for bit the state an honest step from its committed state
 *                    gives (recompute and Freivalds see only step s). Saves all steps after s.
 *   nan-plant[:s]    step s (default 1) is honest, then one weight is set to NaN. Every later state is
 *                    all NaN (the engine's gradients of a NaN state are all -NaN, 0xffc00000), which the
 *                    cheater predicts by applying the update to -NaN gradients: bit-exact, no compute.
 *   skip-powers[:<f>] Adam only. Skips a share f (default 1: every step) of the steps like skip:<f>, but advances
 *                    the bias-correction powers (b1^t, b2^t) as an honest step does: weights and moments stay as they
 *                    were while the state's step and powers say t. No forward or backward pass after the first
 *                    step's loss. Saves f of the compute.
 *   plant-spread:<n> honest, but plants PLANT_DELTA/n on the plant's entries at n steps spread evenly over the job
 *                    (t_k = 1 + floor(k*steps/n), k < n): each dose is n times smaller than plant's, inside a bound a
 *                    one-step plant breaks. Saves nothing; plants the same total.
 *   plant-bounded    Adam only. Honest, but at the last step of every segment moves the plant's entries up to just
 *                    inside the state screen's weight-continuity allowance (checks/state-screen.ts adamDriftBound):
 *                    each entry ends the segment (1 - 2^-10) * D above its start, D the most Adam can move a weight
 *                    over the segment. A plant that no screen of the segment's end state can tell from training.
 *                    Saves nothing; plants what the bound leaves.
 *   skip-teacher[:s] distillation jobs only. Honest up to step s - 1 (default 1: from the first step); from step s on
 *                    the student steps on the hard labels alone, without the teacher's forward pass or the soft
 *                    term (the step of the same student trained without distillation). Saves the teacher's pass.
 *   steer:<dir>      tolerance-mode cheat: serves a peer's per-step weights (<dir> has steps.json) with
 *                    optimizer moments chosen so that the reference step from each served state lands on
 *                    the peer's next weights (v huge, so gradients vanish; m sets the update). A
 *                    distance over the weights alone passes every step; nothing is computed.
 */
import { StrategyError } from "./errors.ts";

export type Strategy =
  | { kind: "honest" }
  | { kind: "skip"; fraction: number }
  | { kind: "quarter-batch" }
  | { kind: "stale"; k: number }
  | { kind: "fp16" }
  | { kind: "copy"; dir: string }
  | { kind: "full-copy"; dir: string }
  | { kind: "plant"; step: number }
  | { kind: "near-zero" }
  | { kind: "state-poison"; step: number }
  | { kind: "nan-plant"; step: number }
  | { kind: "steer"; dir: string }
  | { kind: "skip-powers"; fraction: number }
  | { kind: "plant-spread"; doses: number }
  | { kind: "plant-bounded" }
  | { kind: "skip-teacher"; step: number };

export const PLANT_DELTA = 0.25;
export const PLANT_COUNT = 64;
export const NEAR_ZERO_SCALE = 1e-6;
/** state-poison's moments: large enough that every later gradient vanishes in float32 rounding. */
export const POISON_M = 1e12;
export const POISON_V = 1e34;
/** The NaN the engine's kernels produce from NaN inputs (sign bit set), as float32 bits. */
export const ENGINE_NAN_BITS = 0xffc00000;

export function parseStrategy(text: string): Strategy {
  const [name, arg, ...rest] = text.split(":");
  const bad = (why: string) => new StrategyError(`--strategy ${JSON.stringify(text)}: ${why}`);
  const noArg = (): void => {
    if (arg !== undefined) throw bad(`${name} takes no argument`);
  };
  if (rest.length > 0 && name !== "copy" && name !== "full-copy" && name !== "steer") throw bad("too many ':'");
  const injectionStep = (): number => {
    if (arg === undefined) return 1;
    const s = Number(arg);
    if (arg === "" || !Number.isInteger(s) || s < 1) throw bad(`${name}[:<step>] needs a step >= 1`);
    return s;
  };
  switch (name) {
    case "honest":
      noArg();
      return { kind: "honest" };
    case "quarter-batch":
      noArg();
      return { kind: "quarter-batch" };
    case "fp16":
      noArg();
      return { kind: "fp16" };
    case "near-zero":
      noArg();
      return { kind: "near-zero" };
    case "plant-bounded":
      noArg();
      return { kind: "plant-bounded" };
    case "skip": {
      const f = Number(arg);
      if (arg === undefined || arg === "" || !(f > 0 && f < 1)) throw bad("skip:<fraction> needs a fraction strictly between 0 and 1");
      return { kind: "skip", fraction: f };
    }
    case "stale": {
      const k = Number(arg);
      if (arg === undefined || !Number.isInteger(k) || k < 2) throw bad("stale:<k> needs an integer k >= 2");
      return { kind: "stale", k };
    }
    case "plant": {
      const s = Number(arg);
      if (arg === undefined || !Number.isInteger(s) || s < 1) throw bad("plant:<step> needs a step >= 1");
      return { kind: "plant", step: s };
    }
    case "copy": {
      const dir = [arg, ...rest].join(":");
      if (arg === undefined || dir === "") throw bad("copy:<dir> needs the directory of the trace to copy");
      return { kind: "copy", dir };
    }
    case "full-copy": {
      const dir = [arg, ...rest].join(":");
      if (arg === undefined || dir === "") throw bad("full-copy:<dir> needs the directory of a peer's trace with its per-step states (steps.json)");
      return { kind: "full-copy", dir };
    }
    case "steer": {
      const dir = [arg, ...rest].join(":");
      if (arg === undefined || dir === "") throw bad("steer:<dir> needs the directory of a peer's trace with its per-step states (steps.json)");
      return { kind: "steer", dir };
    }
    case "skip-powers": {
      const f = arg === undefined ? 1 : Number(arg);
      if (arg === "" || !(f > 0 && f <= 1)) throw bad("skip-powers[:<fraction>] needs a fraction in (0, 1]");
      return { kind: "skip-powers", fraction: f };
    }
    case "plant-spread": {
      const n = Number(arg);
      if (arg === undefined || !Number.isInteger(n) || n < 1) throw bad("plant-spread:<n> needs a whole number of doses n >= 1");
      return { kind: "plant-spread", doses: n };
    }
    case "state-poison":
      return { kind: "state-poison", step: injectionStep() };
    case "nan-plant":
      return { kind: "nan-plant", step: injectionStep() };
    case "skip-teacher":
      return { kind: "skip-teacher", step: injectionStep() };
    default:
      throw bad("unknown strategy (honest, skip:<f>, quarter-batch, stale:<k>, fp16, copy:<dir>, full-copy:<dir>, plant:<step>, near-zero, state-poison[:<step>], nan-plant[:<step>], steer:<dir>, skip-powers[:<f>], plant-spread:<n>, plant-bounded, skip-teacher[:<step>])");
  }
}

export function formatStrategy(s: Strategy): string {
  switch (s.kind) {
    case "skip":
      return `skip:${s.fraction}`;
    case "stale":
      return `stale:${s.k}`;
    case "plant":
      return `plant:${s.step}`;
    case "copy":
      return `copy:${s.dir}`;
    case "full-copy":
      return `full-copy:${s.dir}`;
    case "steer":
      return `steer:${s.dir}`;
    case "state-poison":
    case "nan-plant":
    case "skip-teacher":
      return s.step === 1 ? s.kind : `${s.kind}:${s.step}`;
    case "skip-powers":
      return s.fraction === 1 ? s.kind : `skip-powers:${s.fraction}`;
    case "plant-spread":
      return `plant-spread:${s.doses}`;
    default:
      return s.kind;
  }
}

/** The steps plant-spread:<n> doses in a job of `steps` steps: 1 + floor(k*steps/n) for k < n (distinct for n <= steps). */
export function plantSpreadSteps(doses: number, steps: number): number[] {
  return [...new Set(Array.from({ length: doses }, (_, k) => 1 + Math.floor((k * steps) / doses)))];
}

/** Whether skip:<fraction> skips step t. */
export function isSkipped(fraction: number, t: number): boolean {
  return Math.floor(t * fraction) > Math.floor((t - 1) * fraction);
}

/** First step whose state differs from the honest run (Infinity if none within `steps`). */
export function firstAffectedStep(s: Strategy, steps: number): number {
  switch (s.kind) {
    case "honest":
      return Infinity;
    case "skip":
    case "skip-powers": {
      for (let t = 1; t <= steps; t++) if (isSkipped(s.fraction, t)) return t;
      return Infinity;
    }
    case "plant-spread":
      return plantSpreadSteps(s.doses, steps)[0] ?? Infinity;
    case "stale":
      return 2;
    case "plant":
    case "state-poison":
    case "nan-plant":
    case "skip-teacher":
      return s.step <= steps ? s.step : Infinity;
    default:
      return 1; // quarter-batch, fp16, near-zero change step 1; copy changes h(1) (peer's jobId); full-copy's state 1 is the peer's (its batch); steer changes state 1's moments
  }
}
