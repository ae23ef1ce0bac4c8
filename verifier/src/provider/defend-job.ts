/**
 * The provider's defence of one job's disputes (`pouw provider defend JOB`, and each pass of `pouw provider serve`,
 * serve.ts): for every open dispute on one of its own steps s it does what an honest provider must before the dispute
 * can slash it.
 *
 * - Circuit class (linear-tile), a non-first step: it rebuilds W_{s-1} with the audit pipeline (openSegment over the
 *   on-chain commitments, replaySteps from the committed start checkpoint: the state the challenge names, h(s-1)),
 *   takes step s's batch from the job's data order (Run.tileBatch) with its Merkle proof against the registered batch
 *   root, and proves the step (dispute/defend.ts defendDispute: Groth16, DisputeGame.prove; the dispute settles Proven
 *   at once and the challenger's bond is the provider's).
 * - Any class, a unanimous first-round Fault whose appeal window is open (DisputeGame.faultAppealOf): it decides the
 *   step itself as a panel member does (checks/ decideStep over the on-chain commitments, with the challenger's state
 *   opening of s-1 when there is one) and, when the step is Valid, approves the bond (the challenger's) and calls
 *   appealFault: round 2 draws 7 fresh seats. A step that is really faulty is not appealed (an appeal would only lose
 *   the bond to the challenger and delay the slash by a round): the row says so, with the recomputed hash.
 * - Otherwise the panel decides (the row says which phase the dispute is in); nothing for the provider to send.
 *
 * Nothing to do, with the reason: a dispute already resolved, one on someone else's step, and a circuit-class step
 * the provider got wrong ("at-fault": its committed h(s) is not the correct step's).
 */
import { getAddress, type Address, type Hex } from "viem";
import {
  appealFault,
  approveToken,
  ContractRevertError,
  getDispute,
  getFaultAppeal,
  getJob,
  getJobCreated,
  getJobDisputes,
  getOpening,
  getOpeningRequests,
  getSegmentCommits,
  getTokenAllowance,
  getTokenBalance,
  type ChainClients,
  type Deployment,
  type GetDisputeReturnType,
} from "../chain/index.ts";
import { decideStep, isCircuitClass, replaySteps, type OpenedPreState, type StepDecision } from "../checks/index.ts";
import { openSegment, type SegmentCommitment } from "../checks/segment.ts";
import { circuitTermsOfRun } from "../dispute/circuit.ts";
import { defendDispute, StepNotProvableError } from "../dispute/defend.ts";
import { InputError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { circuitJobCheck } from "../market/circuit-job.ts";
import { fetchManifest } from "../market/manifest-store.ts";
import { tileWeightsOf, type LinearTile } from "../ml/models/linear-tile.ts";
import { createRun, deploymentSalt, type Run } from "../ml/index.ts";
import type { ContentStore } from "../store/index.ts";
import type { Bytes32 } from "../trace/index.ts";

const log = logger("provider.defend");

export type DefendJobContext = { clients: ChainClients; deployment: Deployment; store: ContentStore };

export type DisputeDefence = {
  disputeId: bigint;
  step: number;
  /**
   * proved: settled Proven by a Groth16 proof; appealed: a unanimous Fault on a valid step sent to round 2;
   * not-appealed: a unanimous Fault on a step the provider recomputed as faulty; panel: the panel decides, nothing to
   * send now; at-fault: a circuit-class step the provider got wrong; missed: the appeal window closed or the appeal
   * reverted; resolved, not-mine: nothing to do.
   */
  action: "proved" | "appealed" | "not-appealed" | "panel" | "at-fault" | "missed" | "resolved" | "not-mine";
  reason: string;
  /** Whether the dispute is still open after this pass (the service keeps watching it). */
  open: boolean;
  gasUsed?: bigint;
  provingMs?: number;
  txHash?: Hex;
  /** The appeal bond posted (the challenger's bond), when appealed. */
  bond?: bigint;
};

/** Decisions on disputed steps already recomputed, kept across the service's passes (a step is decided once). */
export type DecisionMemo = Map<string, StepDecision>;

type JobRun = { run: Run; commitments: SegmentCommitment[]; circuit: boolean };

export async function defendProviderJob(ctx: DefendJobContext, jobId: bigint, opts: { memo?: DecisionMemo } = {}): Promise<DisputeDefence[]> {
  const { clients, deployment: d } = ctx;
  const game = d.disputeGame;
  if (!game) throw new InputError("the deployment has no DisputeGame: there is nothing to defend");
  const me = getAddress(clients.account.address);
  const fromBlock = BigInt(d.startBlock);
  const job = await getJob(clients.public, { jobMarket: d.jobMarket, jobId });
  if (job.status === "None") throw new InputError(`job ${jobId} does not exist`);
  const memo = opts.memo ?? new Map<string, StepDecision>();
  // the run loads (manifest, engine) only for a job with a dispute to act on
  let loaded: JobRun | undefined;
  const jobRun = async (): Promise<JobRun> => (loaded ??= await loadJobRun(ctx, jobId, job.manifestHash));
  const out: DisputeDefence[] = [];
  try {
    for (const opened of await getJobDisputes(clients.public, { disputeGame: game, jobId, fromBlock })) {
      const disputeId = opened.disputeId;
      const dispute = await getDispute(clients.public, { disputeGame: game, disputeId });
      const step = Number(dispute.step);
      const row = (action: DisputeDefence["action"], reason: string, open = true): DisputeDefence => ({ disputeId, step, action, reason, open });
      if (dispute.phase === "resolved") {
        out.push(row("resolved", `resolved: ${dispute.outcome}`, false));
        continue;
      }
      if (getAddress(dispute.provider) !== me) {
        out.push(row("not-mine", `the disputed provider is ${dispute.provider}`, false));
        continue;
      }
      const K = job.policy.stepsPerSegment;
      const jr = await jobRun();
      if (jr.circuit && (step - 1) % K !== 0) {
        out.push(await proveStep(ctx, game, jr, dispute));
        continue;
      }
      const appeal = await getFaultAppeal(clients.public, { disputeGame: game, disputeId });
      if (appeal.deadline === undefined) {
        const why = appeal.providerBond > 0n ? `appealed (bond ${appeal.providerBond}); round ${dispute.round} is ${dispute.phase}` : `round ${dispute.round} is ${dispute.phase}`;
        out.push(row("panel", `the panel decides: ${why}`));
        continue;
      }
      out.push(await appealIfValid(ctx, game, jr, dispute, appeal.deadline, memo));
    }
  } finally {
    await loaded?.run.close();
  }
  return out;
}

async function loadJobRun(ctx: DefendJobContext, jobId: bigint, manifestHash: Hex): Promise<JobRun> {
  const { clients, deployment: d, store } = ctx;
  const fromBlock = BigInt(d.startBlock);
  const created = await getJobCreated(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock });
  const manifest = await fetchManifest(store, created.manifestUri, manifestHash, { circuitHash: circuitJobCheck(clients.public, d, jobId, { requireRegistered: true }) });
  const run = await createRun(manifest, { jobId, salt: deploymentSalt(d, jobId), store });
  // the latest commit of each segment (a re-opened job is committed again by its next provider), in segment order
  const bySegment = new Map<number, SegmentCommitment>();
  for (const c of await getSegmentCommits(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock })) {
    bySegment.set(c.segment, { index: c.segment, traceRoot: c.traceRoot as Bytes32, checkpointCid: c.checkpointCid, stateHashes: c.stateHashes as Bytes32[] });
  }
  return { run, commitments: [...bySegment.values()].sort((a, b) => a.index - b.index), circuit: isCircuitClass(run) };
}

/** A circuit-class non-first step: proven with Groth16 (settles Proven), or at-fault when the committed h(s) is wrong. */
async function proveStep(ctx: DefendJobContext, game: Address, jr: JobRun, dispute: GetDisputeReturnType): Promise<DisputeDefence> {
  const { disputeId } = dispute;
  const step = Number(dispute.step);
  const row = (action: DisputeDefence["action"], reason: string, open = true): DisputeDefence => ({ disputeId, step, action, reason, open });
  const { run } = jr;
  const seg = await openSegment({ run, store: ctx.store, commitments: jr.commitments.slice(0, Number(dispute.segment) + 1) }, Number(dispute.segment));
  if (!seg.ok) return row("at-fault", `segment ${dispute.segment} does not open from its commitments: ${seg.failure.kind}: ${seg.failure.message}`);
  const prev = replaySteps(run, seg.value.start, step - 1);
  if (run.stateHashOf(prev) !== dispute.hPrev) return row("at-fault", `state ${step - 1} replayed from the segment's start is not the committed h(${step - 1})`);
  const { tree } = await circuitTermsOfRun(run);
  const batch = run.tileBatch(step);
  const lr = (run.model as LinearTile).lr; // circuit class: a linear tile
  try {
    const r = await defendDispute(ctx.clients, { disputeGame: game, disputeId, circuit: { input: { w: tileWeightsOf(prev.params), x: batch.x, y: batch.y, lr }, batchProof: tree.proof(step) } });
    if (r.action !== "proved") return row(r.action, r.action === "resolved" ? "resolved meanwhile" : "the job is not registered as circuit class", r.action !== "resolved");
    log.info({ jobId: dispute.jobId.toString(), disputeId: disputeId.toString(), step, provingMs: Math.round(r.provingMs) }, "step proved");
    return { ...row("proved", `step ${step} proved (Groth16) and settled Proven`, false), gasUsed: r.gasUsed, provingMs: r.provingMs, txHash: r.hash };
  } catch (err) {
    // defendDispute checks the correct step against the committed h(s) before proving: a mismatch is the provider's fault
    if (err instanceof StepNotProvableError) return row("at-fault", err.shortMessage);
    throw err;
  }
}

/**
 * A unanimous first-round Fault with the appeal window open until `deadline`: decide the step as a member does; appeal
 * only a Valid step.
 * INVARIANT: the provider appeals exactly the Faults that an honest appeal round overturns (its decision is the
 * members' rule on the same on-chain data), so an honest provider never pays the appeal bond to a challenger.
 */
async function appealIfValid(ctx: DefendJobContext, game: Address, jr: JobRun, dispute: GetDisputeReturnType, deadline: bigint, memo: DecisionMemo): Promise<DisputeDefence> {
  const { clients, deployment: d } = ctx;
  const { disputeId } = dispute;
  const step = Number(dispute.step);
  const row = (action: DisputeDefence["action"], reason: string, open = true): DisputeDefence => ({ disputeId, step, action, reason, open });
  const now = (await clients.public.getBlock()).timestamp;
  if (now > deadline) return row("missed", `the appeal window of round 1's unanimous Fault closed at ${deadline} (now ${now}): the Fault settles on resolve`);
  const key = `${game}:${disputeId}`;
  let decision = memo.get(key);
  if (!decision) {
    const preStateOpening = await challengerOpening(ctx, dispute);
    decision = await decideStep({
      target: { run: jr.run, store: ctx.store, commitments: jr.commitments.slice(0, Number(dispute.segment) + 1) },
      segment: Number(dispute.segment),
      step,
      hPrev: dispute.hPrev,
      hStep: dispute.hStep,
      ...(preStateOpening ? { preStateOpening } : {}),
    });
    memo.set(key, decision);
  }
  if (decision.vote === "Fault") {
    return row("not-appealed", `round 1 voted Fault unanimously and the step is faulty by the members' rule (${decision.reason}): not appealed, an appeal would lose the bond to the challenger`);
  }
  const me = clients.account.address;
  const bond = dispute.bond;
  const balance = await getTokenBalance(clients.public, { token: d.token, account: me });
  if (balance < bond) {
    return row("missed", `step ${step} is valid (${decision.reason}) but the appeal bond is ${bond} and ${me} holds ${balance} of the bond token; fund it before ${deadline}`);
  }
  try {
    const allowed = await getTokenAllowance(clients.public, { token: d.token, owner: me, spender: game });
    if (allowed < bond) await approveToken(clients, { token: d.token, spender: game, amount: bond });
    const r = await appealFault(clients, { disputeGame: game, disputeId });
    log.info({ jobId: dispute.jobId.toString(), disputeId: disputeId.toString(), step, bond: bond.toString() }, "unanimous Fault on a valid step appealed");
    return { ...row("appealed", `round 1 voted Fault unanimously but step ${step} is valid (${decision.reason}): appealed to round 2, bond ${bond}`), gasUsed: r.gasUsed, txHash: r.hash, bond };
  } catch (err) {
    // the window closed or another pass appealed first between the read and the send: reported, re-read next pass
    if (err instanceof ContractRevertError) return row("missed", `appealFault reverted ${err.errorName}: ${err.shortMessage}`);
    throw err;
  }
}

/** The opening of state s-1 on StateOpenings (one per state, whoever asked), as the members read it (a pending one is no opening). */
async function challengerOpening(ctx: DefendJobContext, dispute: GetDisputeReturnType): Promise<OpenedPreState | undefined> {
  const so = ctx.deployment.stateOpenings;
  if (!so) return undefined;
  const pub = ctx.clients.public;
  const state = Number(dispute.step) - 1;
  const o = await getOpening(pub, { stateOpenings: so, jobId: dispute.jobId, step: state });
  if (!o.requested) return undefined;
  if (o.withheld) return { withheld: `unanswered past its deadline ${o.deadline}` };
  if (!o.answered) return undefined;
  const answered = (await getOpeningRequests(pub, { stateOpenings: so, jobId: dispute.jobId, fromBlock: BigInt(ctx.deployment.startBlock) })).find(
    (r) => r.step === state && r.answered !== null,
  );
  return answered?.answered ? { checkpointCid: answered.answered.checkpointCid } : undefined;
}
