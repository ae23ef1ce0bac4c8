/**
 * Serving on a panel: decide the one disputed step by recomputing it with the engine's step function, then commit
 * (ballot persisted first) and later reveal.
 *
 * How a member decides (decideStep): the provider's leaves of the segment must reproduce the committed root and its
 * start checkpoint must match the committed start state (checks/segment.ts openSegment). The member recomputes from
 * the start checkpoint to state s-1; if that does not reproduce h(s-1) it takes the provider's served per-step state
 * s-1 (steps.json) when it hashes to h(s-1). Then it runs `Run.step` once: Valid iff the result hashes to h(s).
 * Anything the provider fails to serve, or serves inconsistently, is a Fault: the provider committed to the data.
 */
import { zeroHash, type Address, type Hex } from "viem";
import { disputeGameAbi } from "../chain/abi/DisputeGame.ts";
import { commitVote } from "../chain/commitVote.ts";
import type { ChainClients } from "../chain/clients.ts";
import { drawPanel } from "../chain/drawPanel.ts";
import { getDispute } from "../chain/getDispute.ts";
import { revealVote } from "../chain/revealVote.ts";
import { withRetry } from "../chain/retry.ts";
import { openSegment, type AuditTarget } from "../checks/segment.ts";
import { segmentStates, type StepStateSource } from "../checks/step-states.ts";
import { logger } from "../log/index.ts";
import type { TrainState } from "../ml/run.ts";
import { BallotMissingError } from "./errors.ts";
import { BallotStore, newSalt, VOTE_VALUE, voteCommitment, type PanelVote } from "./ballots.ts";

const log = logger("dispute.panel");

export type StepDecision = { vote: PanelVote; reason: string };

export type DecideStepParameters = {
  target: AuditTarget;
  segment: number;
  step: number;
  /** The disputed leaves (from the dispute record). */
  hPrev: Hex;
  hStep: Hex;
  stepStates?: StepStateSource;
};

/** The member's verdict on h(step) = step(h(step-1), batch(step)). */
export async function decideStep(p: DecideStepParameters): Promise<StepDecision> {
  const { target, segment, step } = p;
  const opened = await openSegment(target, segment);
  if (!opened.ok) return { vote: "Fault", reason: `provider data does not match its commitments: ${opened.failure.kind}: ${opened.failure.message}` };
  const { leaves, start } = opened.value;
  if (leaves.hashes[step - 1 - leaves.first] !== p.hPrev || leaves.hashes[step - leaves.first] !== p.hStep) {
    return { vote: "Fault", reason: `the served leaves of steps ${step - 1}, ${step} differ from the disputed ones` };
  }
  const run = target.run;
  let prev: TrainState | undefined = start;
  for (let t = leaves.first + 1; t < step && prev; t++) prev = run.step(prev, t).state;
  if (!prev || run.stateHashOf(prev) !== p.hPrev) {
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

export type ServePanelParameters = {
  disputeGame: Address;
  disputeId: bigint;
  ballots: BallotStore;
  /** Decides the step (decideStep with the member's view of the provider's data); called once, before committing. */
  decide: () => Promise<StepDecision>;
};

/** What servePanel did on this call. */
export type ServePanelReturnType =
  | { action: "not-member" | "waiting-seed" | "waiting-reveal" | "done" | "resolved" | "missed-commit"; vote?: PanelVote }
  | { action: "committed" | "revealed"; vote: PanelVote; hash: Hex; gasUsed: bigint };

/**
 * One pass of a panel member's duty on a dispute; call it again on every new block or timer tick. It commits
 * (after persisting the ballot) in the commit phase and reveals in the reveal phase; it never double-sends.
 */
export async function servePanel(clients: ChainClients, p: ServePanelParameters): Promise<ServePanelReturnType> {
  const me = clients.account.address;
  let d = await getDispute(clients.public, { disputeGame: p.disputeGame, disputeId: p.disputeId });
  if (d.phase === "resolved") return { action: "resolved" };
  if (d.panel.length === 0) {
    if (d.phase === "seed") return { action: "waiting-seed" };
    await drawPanel(clients, { disputeGame: p.disputeGame, disputeId: p.disputeId });
    d = await getDispute(clients.public, { disputeGame: p.disputeGame, disputeId: p.disputeId });
    if (d.panel.length === 0) return { action: "waiting-seed" };
  }
  if (!d.panel.some((m) => m.toLowerCase() === me.toLowerCase())) return { action: "not-member" };
  const [commitment, vote] = await withRetry(() => clients.public.readContract({ address: p.disputeGame, abi: disputeGameAbi, functionName: "ballotOf", args: [p.disputeId, me] }), { what: "ballotOf" });
  let ballot = await p.ballots.load(p.disputeGame, p.disputeId, me);
  if (commitment === zeroHash) {
    if (d.phase !== "commit") return { action: "missed-commit" };
    if (!ballot) {
      const decision = await p.decide();
      const salt = newSalt();
      ballot = { disputeGame: p.disputeGame, disputeId: p.disputeId, member: me, vote: decision.vote, salt, commitment: voteCommitment(decision.vote, salt, me), reason: decision.reason };
      // IMPORTANT: the salt is on disk before the commitment leaves the process.
      await p.ballots.save(ballot);
    }
    const r = await commitVote(clients, { disputeGame: p.disputeGame, disputeId: p.disputeId, commitment: ballot.commitment });
    log.info({ disputeId: p.disputeId, vote: ballot.vote }, "vote committed");
    return { action: "committed", vote: ballot.vote, hash: r.hash, gasUsed: r.gasUsed };
  }
  if (vote !== 0) return { action: "done" };
  if (d.phase !== "reveal") return { action: "waiting-reveal" };
  if (!ballot || ballot.commitment !== commitment) {
    throw new BallotMissingError(`dispute ${p.disputeId}: committed ${commitment} but no matching ballot in ${p.ballots.dir}`);
  }
  const r = await revealVote(clients, { disputeGame: p.disputeGame, disputeId: p.disputeId, vote: VOTE_VALUE[ballot.vote], salt: ballot.salt });
  log.info({ disputeId: p.disputeId, vote: ballot.vote }, "vote revealed");
  return { action: "revealed", vote: ballot.vote, hash: r.hash, gasUsed: r.gasUsed };
}
