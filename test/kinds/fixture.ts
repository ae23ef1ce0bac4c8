/**
 * The market side of the inference-kind tests: post an inference job, commit the provider's (possibly forged)
 * segments, find the first wrong example by a full audit, and run a dispute of one example to its end with every
 * panel member deciding by kinds/job.ts decideExample (commit, reveal, resolve, the unappealed-Fault wait).
 */
import { join } from "node:path";
import { parseEther, type Hex } from "viem";
import { acceptJob, createJob, getDispute, getSegmentCommits, resolveDispute, stakeVaultAbi } from "../../verifier/src/chain/index.ts";
import { BallotStore, openChallenge, servePanel } from "../../verifier/src/dispute/index.ts";
import { auditKindSegment, commitKindSegments, decideExample, type ExampleJob, type KindCommit, type KindSegment, type kindChallengeProof } from "../../verifier/src/kinds/index.ts";
import type { LocalDirStore } from "../../verifier/src/store/index.ts";
import { PARAMS, policy, type DisputeEnv } from "../dispute/helpers.ts";

export const MANIFEST_CID = "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m";

export type KindMarket = { env: DisputeEnv; store: LocalDirStore; dir: string };

/** Posts an inference job (createKindJob: `kind`) of `examples` examples, K a segment, accepts it and commits the segments `forge` builds. */
export async function postedJob<J extends ExampleJob>(m: KindMarket, p: { manifestHash: Hex; examples: number; K: number; open: (jobId: bigint) => Promise<J>; forge: (job: J) => KindSegment[]; kind: { kind: number; modelCidHash: Hex } }): Promise<{ jobId: bigint; job: J; commits: KindCommit[] }> {
  const { env } = m;
  const { jobId } = await createJob(env.buyer, { jobMarket: env.d.jobMarket, manifestHash: p.manifestHash, manifestUri: `cid:${MANIFEST_CID}`, token: env.d.token, payment: parseEther("2"), policy: policy(p.examples / p.K, p.K), kind: p.kind });
  const job = await p.open(jobId);
  await acceptJob(env.provider, { jobMarket: env.d.jobMarket, jobId });
  await commitKindSegments(env.provider, { jobMarket: env.d.jobMarket, jobId, store: m.store, segments: p.forge(job) });
  const commits = (await getSegmentCommits(env.provider.public, { jobMarket: env.d.jobMarket, jobId, fromBlock: 0n })).map((c) => ({ segment: c.segment, traceRoot: c.traceRoot, endStateHash: c.endStateHash, checkpointCid: c.checkpointCid, stateHashes: c.stateHashes }));
  return { jobId, job, commits };
}

/** The first segment whose full audit fails, with its challenge. */
export async function firstWrong(m: KindMarket, job: ExampleJob, commits: readonly KindCommit[]) {
  for (const c of commits) {
    const a = await auditKindSegment(job, m.store, c);
    if (!a.ok) return a;
  }
  return undefined;
}

/** Opens a challenge of `proof` and runs the panel (each member recomputes the one example) to the end. */
export async function disputed(m: KindMarket, jobId: bigint, job: ExampleJob, commits: readonly KindCommit[], proof: ReturnType<typeof kindChallengeProof>, label: string) {
  const { env } = m;
  const c = commits[proof.segment]!;
  const { disputeId, bond } = await openChallenge(env.challenger, { disputeGame: env.d.disputeGame, token: env.d.token, jobId, audit: proof, endStateHash: c.endStateHash });
  await env.mine(3);
  const ballots = new BallotStore(join(m.dir, `ballots-${label}`));
  const reasons: string[] = [];
  const pass = async () => {
    for (const a of env.auditors) {
      await servePanel(a, {
        disputeGame: env.d.disputeGame,
        disputeId,
        ballots,
        decide: async () => {
          const d = await getDispute(a.public, { disputeGame: env.d.disputeGame, disputeId });
          const r = await decideExample(job, m.store, commits[d.segment]!, { step: Number(d.step), hPrev: d.hPrev, hStep: d.hStep });
          reasons.push(r.reason);
          return r;
        },
      });
    }
  };
  await pass(); // commits
  await env.increaseTime(PARAMS.commitWindowSeconds + 1);
  await pass(); // reveals
  await env.increaseTime(PARAMS.revealWindowSeconds + 1);
  await resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId });
  let d = await getDispute(env.challenger.public, { disputeGame: env.d.disputeGame, disputeId });
  if (d.phase !== "resolved") {
    // a unanimous first-round Fault waits one commit window for the provider's appeal; unappealed, it settles
    await env.increaseTime(PARAMS.commitWindowSeconds + 1);
    await resolveDispute(env.challenger, { disputeGame: env.d.disputeGame, disputeId });
    d = await getDispute(env.challenger.public, { disputeGame: env.d.disputeGame, disputeId });
  }
  return { outcome: d.outcome, bond, reasons };
}

export const lockedStake = (m: KindMarket, jobId: bigint) =>
  m.env.provider.public.readContract({ address: m.env.d.stakeVault, abi: stakeVaultAbi, functionName: "lockedFor", args: [m.env.provider.account.address, jobId] });
