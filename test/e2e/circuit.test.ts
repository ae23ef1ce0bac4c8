/**
 * A circuit-class (linear-tile, examples/circuit.json) job end to end on the in-process network, every party through
 * the bot or the CLI: the buyer posts it with its circuit terms bound to the manifest hash (postJob), the provider
 * trains and commits it (runProviderJob, a cheat from ml/strategies.ts), the challenger bots audit it with the one
 * audit pipeline and challenge, and the provider defends with `pouw provider defend` (in process):
 *   - a cheat at a segment's first step (plant:5, K = 4): no proof is allowed there; the panel recomputes the step with
 *     the engine and votes Fault (PanelFault, stake slashed);
 *   - a cheat at a later step (plant:6): the provider has no proof (its h(6) is not the correct step's), the panel votes
 *     Fault (PanelFault, stake slashed);
 *   - an honest later step challenged by a griefer (the attacker, by hand): `provider defend` proves it with Groth16,
 *     the dispute settles Proven and the griefer's bond is credited to the provider;
 *   - a job whose manifest hash commits other terms than its document's: the bot refuses it with an error line, the
 *     provider refuses to train it (CircuitTermsMismatchError).
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEventLogs } from "viem";
import { acceptJob, approveToken, commitSegment, createJob, disputeGameAbi, getFaultAppeal, getHoldings, getJob, getJobDisputes, getSegmentCommits, setCircuitTerms, stakeVaultAbi, writeDeployment } from "../../verifier/src/chain/index.ts";
import { configureLogging, loggingState } from "../../verifier/src/log/index.ts";
import { challengeProof, openSegment, type SegmentCommitment } from "../../verifier/src/checks/segment.ts";
import { circuitManifestHash, circuitTermsOfRun, CircuitTermsMismatchError, openChallenge } from "../../verifier/src/dispute/index.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { circuitTermsFor } from "../../verifier/src/market/circuit-job.ts";
import { CircuitJobIdError, postJob } from "../../verifier/src/market/post-job.ts";
import { publishManifest } from "../../verifier/src/market/manifest-store.ts";
import { createRun, deploymentSalt, parseStrategy } from "../../verifier/src/ml/index.ts";
import { runProviderJob } from "../../verifier/src/provider/run-job.ts";
import type { Bytes32 } from "../../verifier/src/trace/index.ts";
import { botMarketPerFile, postCheatingJob, type CheatingJob } from "../bot/fixture.ts";
import { runPouw } from "../cli/in-process.ts";
import { serveProvider } from "../cli/rpc-over-http.ts";
import { DEV_KEYS } from "./helpers.ts";

const circuit = JSON.parse(readFileSync(new URL("../../examples/circuit.json", import.meta.url), "utf8"));

/** `pouw provider defend JOB --json` as the provider (dev account 2), in process over the job's chain. */
async function defend(job: CheatingJob): Promise<{ code: number; rows: { disputeId: string; step: number; action: string; reason: string }[]; stderr: string }> {
  const rpc = await serveProvider(job.conn.provider);
  try {
    const dir = mkdtempSync(join(tmpdir(), "pouw-circuit-cli-"));
    const { gasUsed: _gas, ...deployment } = job.d as typeof job.d & { gasUsed?: bigint };
    await writeDeployment(join(dir, "deployment.json"), deployment);
    const r = await runPouw(["provider", "defend", job.jobId.toString(), "--json", "--rpc", rpc.url, "--state-dir", dir, "--store", join(job.dir, "store"), "--private-key", DEV_KEYS[2]]);
    return { code: r.code, stderr: r.stderr, rows: r.code === 0 ? (JSON.parse(r.stdout) as { disputes: never[] }).disputes : [] };
  } finally {
    await rpc.close();
  }
}

/** `pouw provider claim JOB --json` as the provider (dev account 2), in process over the job's chain. */
async function claim(job: CheatingJob): Promise<{ code: number; stdout: string; stderr: string }> {
  const rpc = await serveProvider(job.conn.provider);
  try {
    const dir = mkdtempSync(join(tmpdir(), "pouw-circuit-cli-"));
    const { gasUsed: _gas, ...deployment } = job.d as typeof job.d & { gasUsed?: bigint };
    await writeDeployment(join(dir, "deployment.json"), deployment);
    return await runPouw(["provider", "claim", job.jobId.toString(), "--json", "--rpc", rpc.url, "--state-dir", dir, "--store", join(job.dir, "store"), "--private-key", DEV_KEYS[2]]);
  } finally {
    await rpc.close();
  }
}

/** Panel rounds: mine past the seed, every bot ticks (draw, commit, reveal, resolve, claim). */
async function panelRounds(job: CheatingJob, bots: ReturnType<CheatingJob["bot"]>[], rounds = 5): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    await job.conn.networkHelpers.mine(2);
    await passAppealWindows(job);
    for (const b of bots) await b.tick();
  }
}

/** Lets every open provider appeal window of a unanimous first-round Fault pass (the cheat does not appeal), so the bots settle it. */
async function passAppealWindows(job: CheatingJob): Promise<void> {
  const n = await job.admin.public.readContract({ address: job.d.disputeGame!, abi: disputeGameAbi, functionName: "disputeCount" });
  for (let id = 1n; id <= n; ++id) {
    const { deadline } = await getFaultAppeal(job.admin.public, { disputeGame: job.d.disputeGame!, disputeId: id });
    if (deadline !== undefined && deadline >= (await job.admin.public.getBlock()).timestamp) await job.conn.networkHelpers.time.increaseTo(deadline + 1n);
  }
}

async function slashes(job: CheatingJob) {
  const logs = await job.admin.public.getLogs({ address: job.d.stakeVault, fromBlock: BigInt(job.d.startBlock), toBlock: "latest" });
  return parseEventLogs({ abi: stakeVaultAbi, logs, eventName: "StakeSlashed" });
}

describe("circuit-class job end to end: panel for first steps, proofs for the rest, terms bound to the manifest", function () {
  this.timeout(180_000);
  // one deployment for the file; each case reverts to it and posts its own job (job 1 again)
  const market = botMarketPerFile(600);

  for (const [strategy, step, why] of [
    ["plant:5", 5, "a segment's first step: the panel decides"],
    ["plant:6", 6, "a later step the provider cannot prove"],
  ] as const) {
    it(`slashes ${strategy} (${why}) through the bots' challenge and panel`, async () => {
      const job = await postCheatingJob(market(), `circuit-${step}`, { base: circuit, strategy });
      const bots = job.auditors.map((_, i) => job.bot(i));
      for (const b of bots) await b.tick();
      const opened = await job.disputes();
      expect(opened.map((o) => o.step)).to.deep.equal([step]);
      const defended = await defend(job);
      expect(defended.code, defended.stderr).to.equal(0);
      expect(defended.rows.map((r) => r.action)).to.deep.equal([step === 5 ? "panel" : "at-fault"]);
      await panelRounds(job, bots);
      const d = await job.dispute(opened[0]!.disputeId);
      expect(d.outcome).to.equal("PanelFault");
      expect(d.faultVotes).to.equal(3);
      expect((await getJob(job.admin.public, { jobMarket: job.d.jobMarket, jobId: job.jobId })).status).to.equal("Refunded");
      const s = await slashes(job);
      expect(s).to.have.length(1);
      expect(s[0]!.args.provider).to.equal(job.cheat.account.address);
      for (const b of bots) b.close();
    });
  }

  it("defends an honest later step against a griefer with a proof: Proven, the griefer's bond goes to the provider", async () => {
    const job = await postCheatingJob(market(), "circuit-honest", { base: circuit, strategy: "honest" });
    const bots = job.auditors.map((_, i) => job.bot(i));
    for (const b of bots) await b.tick(); // every segment audits clean: nothing to challenge
    expect(await job.disputes()).to.have.length(0);

    // the griefer (auditor 3) challenges the honest step 6 with the provider's own leaves
    const run = await createRun(job.manifest, { jobId: job.jobId, salt: deploymentSalt(job.d, job.jobId) });
    const commitments: SegmentCommitment[] = (await getSegmentCommits(job.admin.public, { jobMarket: job.d.jobMarket, jobId: job.jobId, fromBlock: BigInt(job.d.startBlock) })).map((c) => ({
      index: c.segment,
      traceRoot: c.traceRoot as Bytes32,
      checkpointCid: c.checkpointCid,
      stateHashes: c.stateHashes as Bytes32[],
    }));
    const seg = await openSegment({ run, store: job.store, commitments: commitments.slice(0, 2) }, 1);
    if (!seg.ok) throw new Error(seg.failure.message);
    const griefer = job.auditors[3]!;
    const { terms } = await circuitTermsOfRun(run);
    const before = await getHoldings(job.admin.public, { deployment: job.d, account: job.cheat.account.address });
    const { disputeId } = await openChallenge(griefer, {
      disputeGame: job.d.disputeGame!,
      token: job.d.token,
      jobId: job.jobId,
      audit: challengeProof(seg.value.leaves, 6),
      endStateHash: seg.value.leaves.hashes[4]!,
      circuit: { jobMarket: job.d.jobMarket, manifestBody: run.manifestHash, expected: terms },
    });

    const defended = await defend(job);
    expect(defended.code, defended.stderr).to.equal(0);
    expect(defended.rows).to.have.length(1);
    expect(defended.rows[0]!.action).to.equal("proved");
    const d = await job.dispute(disputeId);
    expect(d.outcome).to.equal("Proven");
    const after = await getHoldings(job.admin.public, { deployment: job.d, account: job.cheat.account.address });
    expect(after.disputeCredit - before.disputeCredit).to.equal(d.bond);
    expect((await getHoldings(job.admin.public, { deployment: job.d, account: griefer.account.address })).disputeCredit < d.bond).to.equal(true);
    expect(await slashes(job)).to.have.length(0);
    // a second pass finds the dispute resolved and proves nothing
    expect((await defend(job)).rows.map((r) => r.action)).to.deep.equal(["resolved"]);

    // past the challenge window the honest provider is paid; a circuit-class job anchors no provenance record yet
    await job.conn.networkHelpers.time.increase(30 * 86_400);
    const paidBefore = await getHoldings(job.admin.public, { deployment: job.d, account: job.cheat.account.address });
    const claimed = await claim(job);
    expect(claimed.code, claimed.stderr).to.equal(0);
    expect(claimed.stdout).to.match(/linear-tile \(circuit-class\) jobs have no provenance record yet/);
    expect((await getJob(job.admin.public, { jobMarket: job.d.jobMarket, jobId: job.jobId })).status).to.equal("Finalized");
    const paidAfter = await getHoldings(job.admin.public, { deployment: job.d, account: job.cheat.account.address });
    expect(paidAfter.tokenBalance > paidBefore.tokenBalance).to.equal(true);
    expect(paidAfter.jobMarketCredit).to.equal(0n);
    for (const b of bots) b.close();
  });

  it("refuses a job whose manifest hash commits other circuit terms than its document gives (bot and provider)", async () => {
    const job = await postCheatingJob(market(), "circuit-terms", { base: circuit, strategy: "honest", cheatSegments: 0 });
    // a colluding buyer: the same document, but the terms of another job's data order (job 99's batch root)
    const other = await circuitTermsOfRun(await createRun(job.manifest, { jobId: 99n, salt: deploymentSalt(job.d, 99n) }));
    const { uri, hash: body } = await publishManifest(job.store, job.manifest);
    const { policy, payment } = await jobPolicyFor(job.manifest, {});
    await approveToken(job.buyer, { token: job.d.token, spender: job.d.jobMarket, amount: payment });
    const { jobId } = await createJob(job.buyer, { jobMarket: job.d.jobMarket, manifestHash: circuitManifestHash(body, other.terms), manifestUri: uri, token: job.d.token, payment, policy });
    await setCircuitTerms(job.buyer, { disputeGame: job.d.disputeGame!, jobId, ...other.terms, manifestBody: body }); // the chain accepts: it cannot see the order
    await acceptJob(job.cheat, { jobMarket: job.d.jobMarket, jobId });
    const ctx = { clients: job.cheat, deployment: job.d, store: job.store, board: job.board, stateDir: join(job.dir, "state2") };
    try {
      await runProviderJob(ctx, jobId, { strategy: parseStrategy("honest") });
      expect.fail("expected CircuitTermsMismatchError");
    } catch (err) {
      expect(err, String(err)).to.be.instanceOf(CircuitTermsMismatchError);
    }
    // the colluding provider commits the job anyway (by hand: its trainer refuses), with its real trajectory
    const run = await createRun(job.manifest, { jobId, salt: deploymentSalt(job.d, jobId) });
    let state = run.initState();
    for (let seg = 0; seg < 3; seg++) {
      const checkpointCid = await job.store.put(run.checkpointBytes(state));
      const stateHashes = [run.stateHashOf(state)];
      for (let t = seg * 4 + 1; t <= seg * 4 + 4; t++) {
        state = run.step(state, t).state;
        stateHashes.push(run.stateHashOf(state));
      }
      await commitSegment(job.cheat, { jobMarket: job.d.jobMarket, jobId, segment: seg, stateHashes, lossE6: 0n, checkpointCid });
    }
    // the bot says why it refuses, in an error line a person sees, and audits (so challenges) nothing of the job
    const lines: string[] = [];
    const logging = loggingState();
    configureLogging({ level: "error", format: "json", stream: { write: (s: string) => void lines.push(s) } });
    const bot = job.bot(0);
    try {
      await bot.tick();
    } finally {
      configureLogging(logging);
    }
    const refused = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.msg.startsWith(`JOB REFUSED: will not audit or challenge job ${jobId}`));
    expect(refused, lines.join("")).to.have.length(1);
    expect(refused[0]!.msg).to.match(/manifest hash does not commit to the terms its document gives/);
    expect(bot.summary().audits.filter((a) => a.jobId === jobId.toString())).to.have.length(0);
    expect(await getJobDisputes(job.admin.public, { disputeGame: job.d.disputeGame!, jobId, fromBlock: BigInt(job.d.startBlock) })).to.have.length(0);
    bot.close();

    // a race: another job is created between the buyer's job-id prediction and its createJob -> CircuitJobIdError, and
    // the terms are not registered (the job stays plain: nobody could prove any step of it)
    await approveToken(job.buyer, { token: job.d.token, spender: job.d.jobMarket, amount: 2n * payment });
    const racer = {
      disputeGame: job.d.disputeGame!,
      termsFor: async (predicted: bigint) => {
        await createJob(job.buyer, { jobMarket: job.d.jobMarket, manifestHash: body, manifestUri: uri, token: job.d.token, payment, policy });
        return circuitTermsFor(job.manifest, job.d, predicted);
      },
    };
    try {
      await postJob(job.buyer, job.d, job.store, job.manifest, policy, payment, { circuit: racer });
      expect.fail("expected CircuitJobIdError");
    } catch (err) {
      expect(err, String(err)).to.be.instanceOf(CircuitJobIdError);
    }
  });
});
