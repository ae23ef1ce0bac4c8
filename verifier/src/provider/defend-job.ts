/**
 * The provider's defence of a circuit-class (linear-tile) job (`pouw provider defend JOB`): for every open dispute on
 * one of its own non-first steps s, it rebuilds W_{s-1} with the audit pipeline (openSegment over the on-chain
 * commitments, replaySteps from the committed start checkpoint: the state the challenge names, h(s-1)), takes step s's
 * batch from the job's data order (Run.tileBatch) with its Merkle proof against the registered batch root, and proves the
 * step (dispute/defend.ts defendDispute: Groth16, DisputeGame.prove; the dispute settles Proven at once and the
 * challenger's bond is the provider's).
 *
 * Nothing to prove, with the reason: the first step of a segment (the panel decides it: DisputeGame refuses a proof,
 * since only the panel checks the segment's link to the previous one), a dispute on someone else's job or already
 * resolved, and a step the provider got wrong (its committed h(s) is not the correct step's: "at-fault"; the panel
 * decides it, and votes Fault).
 */
import { getAddress, type Hex } from "viem";
import { getDispute, getJob, getJobCreated, getJobDisputes, getSegmentCommits, type ChainClients, type Deployment } from "../chain/index.ts";
import { replaySteps } from "../checks/recompute.ts";
import { openSegment, type SegmentCommitment } from "../checks/segment.ts";
import { circuitTermsOfRun } from "../dispute/circuit.ts";
import { defendDispute, StepNotProvableError } from "../dispute/defend.ts";
import { InputError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { circuitJobCheck } from "../market/circuit-job.ts";
import { fetchManifest } from "../market/manifest-store.ts";
import { tileWeightsOf, type LinearTile } from "../ml/models/linear-tile.ts";
import { createRun, deploymentSalt } from "../ml/index.ts";
import type { ContentStore } from "../store/index.ts";
import type { Bytes32 } from "../trace/index.ts";

const log = logger("provider.defend");

export type DefendJobContext = { clients: ChainClients; deployment: Deployment; store: ContentStore };

export type DisputeDefence = {
  disputeId: bigint;
  step: number;
  action: "proved" | "panel" | "at-fault" | "resolved" | "not-mine";
  reason: string;
  gasUsed?: bigint;
  provingMs?: number;
  txHash?: Hex;
};

export async function defendProviderJob(ctx: DefendJobContext, jobId: bigint): Promise<DisputeDefence[]> {
  const { clients, deployment: d, store } = ctx;
  const game = d.disputeGame;
  if (!game) throw new InputError("the deployment has no DisputeGame: there is nothing to defend");
  const me = getAddress(clients.account.address);
  const fromBlock = BigInt(d.startBlock);
  const job = await getJob(clients.public, { jobMarket: d.jobMarket, jobId });
  if (job.status === "None") throw new InputError(`job ${jobId} does not exist`);
  const created = await getJobCreated(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock });
  const manifest = await fetchManifest(store, created.manifestUri, job.manifestHash, { circuitHash: circuitJobCheck(clients.public, d, jobId, { requireRegistered: true }) });
  if (manifest.model.arch !== "linear-tile") throw new InputError(`job ${jobId} is ${manifest.model.arch}: only linear-tile (circuit-class) steps can be proven; the panel decides the others`);
  const run = await createRun(manifest, { jobId, salt: deploymentSalt(d, jobId) });
  const { tree } = await circuitTermsOfRun(run);
  const K = manifest.training.stepsPerSegment;
  // the latest commit of each segment (a re-opened job is committed again by its next provider), in segment order
  const bySegment = new Map<number, SegmentCommitment>();
  for (const c of await getSegmentCommits(clients.public, { jobMarket: d.jobMarket, jobId, fromBlock })) {
    bySegment.set(c.segment, { index: c.segment, traceRoot: c.traceRoot as Bytes32, checkpointCid: c.checkpointCid, stateHashes: c.stateHashes as Bytes32[] });
  }
  const commitments = [...bySegment.values()].sort((a, b) => a.index - b.index);
  const out: DisputeDefence[] = [];
  for (const opened of await getJobDisputes(clients.public, { disputeGame: game, jobId, fromBlock })) {
    const disputeId = opened.disputeId;
    const dispute = await getDispute(clients.public, { disputeGame: game, disputeId });
    const step = Number(dispute.step);
    const row = (action: DisputeDefence["action"], reason: string): DisputeDefence => ({ disputeId, step, action, reason });
    if (dispute.phase === "resolved") {
      out.push(row("resolved", `resolved: ${dispute.outcome}`));
      continue;
    }
    if (getAddress(dispute.provider) !== me) {
      out.push(row("not-mine", `the disputed provider is ${dispute.provider}`));
      continue;
    }
    if ((step - 1) % K === 0) {
      out.push(row("panel", `step ${step} is the first of segment ${dispute.segment}: the panel decides it (no proof is allowed)`));
      continue;
    }
    const seg = await openSegment({ run, store, commitments: commitments.slice(0, Number(dispute.segment) + 1) }, Number(dispute.segment));
    if (!seg.ok) {
      out.push(row("at-fault", `segment ${dispute.segment} does not open from its commitments: ${seg.failure.kind}: ${seg.failure.message}`));
      continue;
    }
    const prev = replaySteps(run, seg.value.start, step - 1);
    if (run.stateHashOf(prev) !== dispute.hPrev) {
      out.push(row("at-fault", `state ${step - 1} replayed from the segment's start is not the committed h(${step - 1})`));
      continue;
    }
    const batch = run.tileBatch(step);
    const lr = (run.model as LinearTile).lr; // linear-tile: checked above
    try {
      const r = await defendDispute(clients, { disputeGame: game, disputeId, circuit: { input: { w: tileWeightsOf(prev.params), x: batch.x, y: batch.y, lr }, batchProof: tree.proof(step) } });
      if (r.action !== "proved") {
        out.push(row(r.action, r.action === "resolved" ? "resolved meanwhile" : "the job is not registered as circuit class"));
        continue;
      }
      log.info({ jobId: jobId.toString(), disputeId: disputeId.toString(), step, provingMs: Math.round(r.provingMs) }, "step proved");
      out.push({ ...row("proved", `step ${step} proved (Groth16) and settled Proven`), gasUsed: r.gasUsed, provingMs: r.provingMs, txHash: r.hash });
    } catch (err) {
      // defendDispute checks the correct step against the committed h(s) before proving: a mismatch is the provider's fault
      if (err instanceof StepNotProvableError) {
        out.push(row("at-fault", err.shortMessage));
        continue;
      }
      throw err;
    }
  }
  return out;
}
