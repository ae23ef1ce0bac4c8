/**
 * The audit pipeline's decision on one disputed step, what a panel member votes (dispute/panel.ts servePanel, the
 * challenger bot's panel duty): the provider's leaves of the segment must reproduce the committed root and its start
 * checkpoint must match the committed start state (openSegment: the same opening the recompute check does, so every
 * start claim the pipeline makes is a Fault here). The member replays from the start checkpoint to state s-1; if that
 * does not reproduce h(s-1) it takes the provider's served per-step state s-1 (steps.json) when it hashes to h(s-1).
 * Then it runs `Run.step` once: Valid iff the result hashes to h(s). Anything the provider fails to serve, or serves
 * inconsistently, is a Fault: the provider committed to the data.
 *
 * A challenge after a state opening (step sampling, step-sample.ts): when the caller passes the opening of
 * state s-1 (`preStateOpening`, read from StateOpenings), a withheld opening is a Fault (the provider did not open a
 * committed state it was asked for in time), and so is an answered one whose CID does not serve a state hashing to
 * h(s-1); a served one is the pre-state, and step s is recomputed from it.
 *
 * Except on a fine-tuning job whose base checkpoint (the buyer's input) gives no usable h(0) (it does not decode, or a
 * weight is NaN or infinite): every state of the rule's trajectory from such an h(0) is non-finite, so the openings
 * above fail for an honest provider too. Before a Fault vote the member checks h(0) (result.ts countAgainstProvider); when it is
 * unusable the vote is Valid (no step of the job is the provider's fault; a challenger of it is the attacker). A base
 * no source serves now is no vote yet (the store's error is thrown, as for any content that is not the provider's).
 */
import type { Hex } from "viem";
import type { PanelVote } from "../dispute/ballots.ts";
import type { TrainState } from "../ml/run.ts";
import { replaySteps } from "./recompute.ts";
import { countAgainstProvider } from "./result.ts";
import { BaseCheckpointError, fetchState, openSegment, type AuditTarget } from "./segment.ts";
import type { OpenedPreState } from "./step-sample.ts";
import { segmentStates, type StepStateSource } from "./step-states.ts";

export type StepDecision = { vote: PanelVote; reason: string };

export type DecideStepParameters = {
  target: AuditTarget;
  segment: number;
  step: number;
  /** The disputed leaves (from the dispute record). */
  hPrev: Hex;
  hStep: Hex;
  stepStates?: StepStateSource;
  /** The challenger's state opening of state step-1 (StateOpenings), when the challenge follows one. */
  preStateOpening?: OpenedPreState;
};

/** The member's verdict on h(step) = step(h(step-1), batch(step)). */
export async function decideStep(p: DecideStepParameters): Promise<StepDecision> {
  try {
    const decision = await decideOnData(p);
    // INVARIANT: no Fault vote on a job whose h(0), the buyer's base, is unusable
    await countAgainstProvider(p.target, decision.vote === "Fault");
    return decision;
  } catch (err) {
    if (!(err instanceof BaseCheckpointError)) throw err;
    return { vote: "Valid", reason: `not the provider's fault: ${err.shortMessage}` };
  }
}

async function decideOnData(p: DecideStepParameters): Promise<StepDecision> {
  const { target, segment, step } = p;
  const opened = await openSegment(target, segment);
  if (!opened.ok) return { vote: "Fault", reason: `provider data does not match its commitments: ${opened.failure.kind}: ${opened.failure.message}` };
  const { leaves, start } = opened.value;
  if (leaves.hashes[step - 1 - leaves.first] !== p.hPrev || leaves.hashes[step - leaves.first] !== p.hStep) {
    return { vote: "Fault", reason: `the served leaves of steps ${step - 1}, ${step} differ from the disputed ones` };
  }
  const run = target.run;
  const o = p.preStateOpening;
  if (o && "withheld" in o) return { vote: "Fault", reason: `state ${step - 1} was asked by a state opening and withheld: ${o.withheld}` };
  if (o) {
    // INVARIANT: an answered opening binds the provider to its CID: what it serves must be h(step-1)
    const opened = await fetchState(target, o.checkpointCid, step - 1, p.hPrev, `opened state ${step - 1}`);
    if (!opened.ok) return { vote: "Fault", reason: `the opening of state ${step - 1} does not serve it: ${opened.failure.kind}: ${opened.failure.message}` };
    const h = run.stateHashOf(run.step(opened.value, step).state);
    return h === p.hStep
      ? { vote: "Valid", reason: `recomputed h(${step}) = ${h} from the opened state matches the committed leaf` }
      : { vote: "Fault", reason: `recomputed h(${step}) = ${h} from the opened state, the provider committed ${p.hStep}` };
  }
  let prev: TrainState | undefined = replaySteps(run, start, step - 1);
  if (run.stateHashOf(prev) !== p.hPrev) {
    prev = undefined;
    if (p.stepStates) {
      const states = await segmentStates(target, p.stepStates, leaves, start);
      if (states.ok) prev = states.value[step - 1 - leaves.first];
    }
    if (!prev || run.stateHashOf(prev) !== p.hPrev) {
      return { vote: "Fault", reason: `state ${step - 1} with hash ${p.hPrev} is neither reproducible from the segment's start nor served` };
    }
  }
  const next = run.step(prev, step).state;
  const h = run.stateHashOf(next);
  return h === p.hStep
    ? { vote: "Valid", reason: `recomputed h(${step}) = ${h} matches the committed leaf` }
    : { vote: "Fault", reason: `recomputed h(${step}) = ${h}, the provider committed ${p.hStep}` };
}

