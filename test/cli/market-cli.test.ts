/**
 * Decoded errors and read-only commands, in-process through main(argv) against the bot tests' market fixture
 * (test/bot/fixture.ts: a stale:2 provider committed job 1, four bonded auditors) served over HTTP: a revert reads with
 * enum names, dates and the time left; an unknown job is the same one line, exit 2, in every command; an unreachable RPC
 * is one line with no retry noise before it; an account without ETH is told so; `buyer status`, `buyer fetch` and
 * `dispute status` need no key (`--address` names whose credit); `pouw jobs`, `provider status` and `auditor status` read
 * the market (EIP-55 addresses, --json), and warn when too few auditors could sit on a panel; Ctrl-C during `provider run`
 * shows the cursor again and exits 130.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { getAddress } from "viem";
import { ContractRevertError, UnknownJobError, acceptJob, cancelJob, describeRevert, getJob, getStakeAccount, formatDuration, revertText, writeDeployment } from "../../verifier/src/chain/index.ts";
import { parseManifest } from "../../verifier/src/ml/index.ts";
import { checkJobBeforeAccept, UntrainableJobError } from "../../verifier/src/provider/check-base.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { ROOT } from "../helpers/cli.ts";
import { configureLogging } from "../../verifier/src/log/index.ts";
import { cheatingJob, type CheatingJob } from "../bot/fixture.ts";
import { postJob } from "../../verifier/src/market/post-job.ts";
import { DEV_KEYS } from "../e2e/helpers.ts";
import { runPouw } from "./in-process.ts";
import { interruptHandler, reporter } from "../../verifier/src/cli/commands/provider-run.ts";
import { serveProvider, type ServedProvider } from "./rpc-over-http.ts";

describe("pouw on a market: errors, read-only commands, listings, Ctrl-C (in-process)", function () {
  this.timeout(120_000);

  describe("revert text (fixed vectors)", () => {
    it("names enum values, writes dates with the time left and amounts with the symbol", () => {
      // JobMarketWrongStatus(1, Finalized=4, Active=2); the JobMarketChallengeWindowOpen(1, 1796116296, 1796112868)
      expect(new ContractRevertError("JobMarketWrongStatus", [1n, 4, 2]).shortMessage).to.equal("job 1 is Finalized, needs Active [JobMarketWrongStatus]");
      expect(new ContractRevertError("JobMarketChallengeWindowOpen", [1n, 1796116296n, 1796112868n]).shortMessage).to.equal(
        "job 1's challenge window is open until 2026-12-01T09:11:36Z, 57 min left [JobMarketChallengeWindowOpen]",
      );
      expect(revertText("StakeVaultInsufficientStake", ["0xA", 10n ** 17n, 3n * 10n ** 17n], { symbol: "PDT" })).to.equal(
        "0xA has 0.1 PDT of free stake, 0.3 PDT needed (short 0.2 PDT; pouw provider stake)",
      );
      expect(revertText("AuditorRegistryNotActive", ["0xB", 3])).to.equal("auditor 0xB is Exiting, needs Active");
      expect(new ContractRevertError("SomethingElse", [1n]).shortMessage).to.equal("reverted: SomethingElse(1)");
      expect(describeRevert(new ContractRevertError("JobMarketWrongStatus", [2n, 7, 1]))).to.equal("job 2 is TimedOut, needs Open [JobMarketWrongStatus]");
      const unknown = new UnknownJobError(9n);
      expect([unknown.shortMessage, unknown.errorName, unknown.code]).to.deep.equal(["job 9 does not exist", "JobMarketUnknownJob", "UNKNOWN_JOB"]);
    });

    it("formats durations as a person reads them", () => {
      expect([59, 119, 120, 3428, 3600, 3660 + 1800, 86_400, 90_000 + 3600].map(formatDuration)).to.deep.equal(["59 s", "119 s", "2 min", "57 min", "1 h", "1 h 31 min", "1 d", "1 d 2 h"]);
    });
  });

  describe("against the market fixture", () => {
    let job: CheatingJob;
    let rpc: ServedProvider;
    let dir: string;
    const as = (key?: number) => ["--rpc", rpc.url, "--state-dir", dir, ...(key === undefined ? [] : ["--private-key", DEV_KEYS[key]!])];

    before(async () => {
      job = await cheatingJob("cli-errors", 600);
      rpc = await serveProvider(job.conn.provider);
      dir = mkdtempSync(join(tmpdir(), "pouw-cli-errors-"));
      const { gasUsed: _gas, ...deployment } = job.d as typeof job.d & { gasUsed?: bigint }; // the fixture keeps deployMarket's gas
      await writeDeployment(join(dir, "deployment.json"), deployment);
    });
    after(async () => {
      configureLogging({ level: "warn", format: "auto" });
      await rpc?.close();
    });

    it("an unknown job: one line, exit 2, in every command that takes a job", async () => {
      for (const args of [
        ["buyer", "status", "9"],
        ["buyer", "fetch", "9", "--out", join(dir, "out")],
        ["buyer", "cancel", "9", ...as(1)],
        ["dispute", "status", "--job", "9"],
        ["provider", "accept", "9", ...as(2)],
        ["provider", "run", "9", ...as(2)],
        ["provider", "claim", "9", ...as(2)],
      ]) {
        const r = await runPouw([...args, ...as()]);
        expect(r.code, args.join(" ")).to.equal(2);
        expect(r.stderr.replace(/^pouw: WARNING: using a raw private key.*\n/, ""), args.join(" ")).to.equal("pouw: job 9 does not exist\n");
        expect(r.stdout, args.join(" ")).to.equal("");
      }
    });

    it("provider run --session-key-file: a missing or malformed key file is one line, exit 2, before any job is read", async () => {
      const bad = join(dir, "session.key");
      writeFileSync(bad, "0x1234\n");
      for (const [file, want] of [
        [join(dir, "absent.key"), /^pouw: --session-key-file .*absent\.key: cannot read it \(ENOENT\)\n$/],
        [bad, /^pouw: --session-key-file .*session\.key: must hold the session key's 32-byte private key in hex\n$/],
      ] as const) {
        const r = await runPouw(["provider", "run", "9", "--session-key-file", file, ...as(2), ...as()]);
        expect(r.code, file).to.equal(2);
        expect(r.stderr.replace(/^pouw: WARNING: using a raw private key.*\n/, ""), file).to.match(want);
      }
    });

    it("a revert reads with the job's status names", async () => {
      const r = await runPouw(["buyer", "cancel", String(job.jobId), ...as(1)]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/^pouw: job 1 is Committed, needs Open \[JobMarketWrongStatus\]\n$/m);
    });

    it("read-only commands need no key; --address names the account, EIP-55", async () => {
      const buyer = job.mk(1).account.address;
      let r = await runPouw(["buyer", "status", "1", "--json", ...as()]);
      expect(r.code, r.stderr).to.equal(0);
      const s = JSON.parse(r.stdout) as { status: string; myCredit?: string; account?: string };
      expect(s.status).to.equal("Committed");
      expect(s).to.not.have.property("myCredit");
      r = await runPouw(["buyer", "status", "1", "--json", "--address", buyer.toLowerCase(), ...as()]);
      expect(r.code, r.stderr).to.equal(0);
      expect(JSON.parse(r.stdout)).to.deep.include({ account: getAddress(buyer), myCredit: "0" });
      r = await runPouw(["buyer", "status", "1", "--address", buyer, ...as()]);
      expect(r.stdout).to.match(new RegExp(`^claimable credit of ${buyer}: 0 \\S+ \\(0 \\S+ refunds and pay, 0 \\S+ slash shares; pouw buyer claim\\)$`, "m"));
      r = await runPouw(["buyer", "status", "1", "--address", "0x123", ...as()]);
      expect([r.code, r.stderr]).to.deep.equal([2, 'pouw: --address must be an address, got "0x123"\n']);
      r = await runPouw(["dispute", "status", "--job", "1", ...as()]);
      expect([r.code, r.stdout], r.stderr).to.deep.equal([0, "job 1: no disputes\n"]);
      // a dispute id, not a job id: the job has none
      r = await runPouw(["dispute", "status", "1", ...as()]);
      expect([r.code, r.stderr]).to.deep.equal([2, "pouw: dispute 1 does not exist\n"]);
      r = await runPouw(["dispute", "status", "1", "--job", "1", ...as()]);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.match(/^pouw: give a dispute id \(pouw dispute status 1\) or a job/);
      r = await runPouw(["buyer", "fetch", "1", "--out", join(dir, "out"), ...as()]);
      expect(r.stderr).to.match(/^pouw: job 1 is Committed: its provenance is anchored by the final provider after finalize/);
    });

    it("pouw jobs lists the job with EIP-55 parties; --status filters; bad input exits 2", async () => {
      const buyer = getAddress(job.mk(1).account.address);
      const provider = getAddress(job.cheat.account.address);
      let r = await runPouw(["jobs", "--json", ...as()]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.equal(""); // four auditors eligible, a panel of 3: enough
      const listed = JSON.parse(r.stdout) as { jobCount: string; jobs: { jobId: string; status: string; buyer: string; provider: string; nextSegment: number; segments: number }[]; panelPool: unknown };
      expect(listed.jobCount).to.equal("1");
      expect(listed.jobs).to.have.length(1);
      expect(listed.jobs[0]).to.deep.include({ jobId: "1", status: "Committed", buyer, provider, nextSegment: 3, segments: 3 });
      expect(listed.panelPool).to.deep.equal({ eligible: 4, panelSize: 3, needed: 4, enough: true });
      r = await runPouw(["jobs", "--status", "open,finalized", "--json", ...as()]);
      expect((JSON.parse(r.stdout) as { jobs: unknown[] }).jobs).to.deep.equal([]);
      r = await runPouw(["jobs", "--status", "committed", "--provider", provider.toLowerCase(), ...as()]);
      expect(r.stdout).to.match(new RegExp(`^1 +Committed +3/3 +\\S+ \\S+ +\\S+ \\S+ +${buyer} +${provider} +\\d{4}-`, "m"));
      r = await runPouw(["jobs", "--status", "pending", ...as()]);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.match(/^pouw: --status must be a comma-separated list of open, active, committed, finalized, cancelled, refunded, timedout, unresolved or all, got "pending"\n$/);
    });

    it("provider status and auditor status: stake, bond, credits and jobs, by --address without a key", async () => {
      const provider = getAddress(job.cheat.account.address);
      let r = await runPouw(["provider", "status", "--json", "--address", provider.toLowerCase(), ...as()]);
      expect(r.code, r.stderr).to.equal(0);
      const p = JSON.parse(r.stdout) as { account: string; stake: { free: string; locked: string }; jobs: { jobId: string; status: string }[] };
      expect(p.account).to.equal(provider);
      expect(BigInt(p.stake.free) + BigInt(p.stake.locked)).to.equal(10n ** 19n); // the fixture staked 10
      expect(BigInt(p.stake.locked)).to.equal(job.policy.requiredStake);
      expect(p.jobs.map((j) => [j.jobId, j.status])).to.deep.equal([["1", "Committed"]]);
      const auditor = getAddress(job.auditors[0]!.account.address);
      r = await runPouw(["auditor", "status", "--json", "--address", auditor, ...as()]);
      expect(r.code, r.stderr).to.equal(0);
      expect(JSON.parse(r.stdout)).to.deep.include({ account: auditor, bond: (5n * 10n ** 18n).toString(), status: "Active", panelPool: { eligible: 4, panelSize: 3, needed: 4, enough: true } });
      // 15 tokens left after the bond: bonded, deposits funded, gas: its bot can act
      expect(JSON.parse(r.stdout)).to.deep.include({ canAct: true, reasons: [] });
      expect(JSON.parse(r.stdout).depositsFunded).to.be.greaterThan(0);
      // the buyer is not bonded: cannot act, with the reason
      r = await runPouw(["auditor", "status", "--json", "--address", getAddress(job.mk(1).account.address), ...as()]);
      expect(JSON.parse(r.stdout).canAct).to.equal(false);
      expect(JSON.parse(r.stdout).reasons.map((x: { kind: string }) => x.kind)).to.include("unbonded");
      r = await runPouw(["auditor", "status", ...as()]);
      expect([r.code, r.stderr]).to.deep.equal([2, "pouw: give the account: --address 0x.. (or a key with --keystore / --hardhat-keystore / --private-key)\n"]);
    });

    let fresh: string;
    const at = (key: number) => ["--rpc", rpc.url, "--state-dir", fresh, "--private-key", DEV_KEYS[key]!];

    it("a market with fewer eligible auditors than panel size + 1: pouw jobs and buyer create warn", async () => {
      fresh = mkdtempSync(join(tmpdir(), "pouw-cli-fresh-"));
      const deployed = await runPouw(["deploy", "--json", ...at(0)]);
      expect(deployed.code, deployed.stderr).to.equal(0);
      expect((JSON.parse(deployed.stdout) as { deployment: { startBlock: string } }).deployment.startBlock).to.match(/^[1-9][0-9]*$/);
      const warning = /^pouw: warning: the market has 0 auditors eligible for a dispute panel \(bonded and past the 3600 s activation delay\); deciding a dispute needs 4 \(a panel of 3 never includes the challenger\), so a challenge now would end NoDecision and no cheater would be slashed; fix: 4 more accounts: pouw auditor bond 100 --mint, then wait 3600 s$/m;
      let r = await runPouw(["jobs", "--rpc", rpc.url, "--state-dir", fresh]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.match(warning);
      expect(r.stdout).to.equal("no jobs (the market has 0)\n");
      r = await runPouw(["buyer", "create", "--manifest", "examples/tiny.json", "--mint", "--json", ...at(1)]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.match(warning);
      const created = JSON.parse(r.stdout) as { tx: string; blockNumber: string; panelPool: unknown };
      expect(created.tx).to.match(/^0x[0-9a-f]{64}$/);
      expect(Number(created.blockNumber)).to.be.greaterThan(0);
      expect(created.panelPool).to.deep.equal({ eligible: 0, panelSize: 3, needed: 4, enough: false });
    });

    it("every write prints its transactions' hash and block, in text and --json, as the chain has them", async () => {
      type Tx = { what: string; hash: string; blockNumber: string };
      const mined = async (txs: Tx[]) => {
        for (const t of txs) {
          const receipt = (await job.conn.provider.request({ method: "eth_getTransactionReceipt", params: [t.hash] })) as { blockNumber: string; status: string };
          expect([BigInt(receipt.blockNumber).toString(), receipt.status], t.what).to.deep.equal([t.blockNumber, "0x1"]);
        }
      };
      const json = async (args: string[]) => {
        const r = await runPouw([...args, "--json"]);
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).to.equal(0);
        return JSON.parse(r.stdout) as { txs: Tx[] } & Record<string, unknown>;
      };
      let j = await json(["provider", "stake", "1", "--mint", ...at(2)]);
      expect(j.txs.map((t) => t.what)).to.deep.equal(["mint", "approve", "stakeDeposit"]);
      await mined(j.txs);
      j = await json(["provider", "unstake", "0.5", ...at(2)]);
      expect(j.txs.map((t) => t.what)).to.deep.equal(["requestWithdrawal"]);
      await mined(j.txs);
      j = await json(["buyer", "cancel", "1", ...at(1)]);
      expect(j.txs.map((t) => t.what)).to.deep.equal(["cancelJob"]);
      await mined(j.txs);
      const claim = await runPouw(["buyer", "claim", ...at(1)]);
      expect(claim.stdout).to.match(/^claimed 0\.1 PDT: 0\.1 PDT refunds \(JobMarket\) \+ 0 PDT slash shares \(StakeVault\)\n  claimPayment tx 0x[0-9a-f]{64} in block \d+\n$/);
      j = await json(["auditor", "bond", "100", "--mint", ...at(4)]);
      expect(j.txs.map((t) => t.what)).to.deep.equal(["mint", "approve", "postBond"]);
      await mined(j.txs);
      j = await json(["auditor", "claim", ...at(4)]);
      expect(j).to.deep.include({ claimed: "0", txs: [] });
      const stake = await runPouw(["provider", "stake", "1", "--mint", ...at(3)]);
      expect(stake.stdout).to.match(/^staked 1 PDT: free 1, locked 0\n(  (mint|approve|stakeDeposit) tx 0x[0-9a-f]{64} in block \d+\n){3}$/);
    });

    it("the token symbol of a command's reverts ends with the command (the bot in the same process reads 'tokens')", async () => {
      const r = await runPouw(["buyer", "cancel", String(job.jobId), ...as(1)]); // reads the symbol, then reverts
      expect(r.code).to.equal(1);
      expect(new ContractRevertError("ERC20InsufficientBalance", ["0xA", 0n, 10n ** 18n]).shortMessage).to.equal("0xA holds 0 tokens, 1 are needed (short 1) [ERC20InsufficientBalance]");
    });

    it("an account without ETH for gas is told so, by address", async () => {
      const key = "0x1111111111111111111111111111111111111111111111111111111111111111";
      const r = await runPouw(["provider", "stake", "1", "--mint", ...as(), "--private-key", key]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/^pouw: not enough ETH for gas: the account 0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A has no ETH\n$/m);
    });

    it("provider accept refuses, before sending, a lock whose challenger share cannot pay the panel (JobMarket's rule)", async () => {
      const policy = { ...job.policy, requiredStake: 1n };
      const { jobId } = await postJob(job.buyer, job.d, job.store, job.manifest, policy, job.payment, {});
      const r = await runPouw(["provider", "accept", String(jobId), ...as(3)]);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr).to.match(
        new RegExp(`pouw: job ${jobId}: your lock of 0\\.000000000000000001 \\w+ \\(tier 4\\) pays a challenger share of 0, below the panel's fees 0\\.15, so JobMarket refuses it`),
      );
      expect(r.stdout).to.equal("");
      // the contract says the same by name when the check is skipped
      expect(revertText("JobMarketLockCannotPayPanel", [jobId, "0xP", 1n, 0n, 15n * 10n ** 16n], { symbol: "PDT" })).to.equal(
        `job ${jobId}: 0xP's lock of 0.000000000000000001 PDT pays a challenger share of 0 PDT, below the panel's fees 0.15 PDT, so nobody could catch a cheat on it without a loss; the job needs a larger requiredStake`,
      );
      const err = await acceptJob(job.mk(3), { jobMarket: job.d.jobMarket, jobId }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(ContractRevertError);
      expect((err as ContractRevertError).errorName).to.equal("JobMarketLockCannotPayPanel");
    });

    it("provider accept reads the job's manifest first: one it cannot find is an error that names the CID and says where to get it, and nothing is sent", async () => {
      const { jobId } = await postJob(job.buyer, job.d, job.store, job.manifest, job.policy, job.payment, {}); // into the fixture's store, not this state dir's
      const before = await job.buyer.public.getTransactionCount({ address: job.mk(3).account.address });
      const r = await runPouw(["provider", "accept", String(jobId), ...as(3)]);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr).to.match(new RegExp(`^pouw: job ${jobId} not accepted \\(no stake locked\\): content a provider reads before accepting .* no content for bafk\\w+ .*Give --ipfs to fetch it from the buyer's announced node, or --source URL\n$`, "m"));
      expect(await job.buyer.public.getTransactionCount({ address: job.mk(3).account.address })).to.equal(before);
      expect((await getJob(job.buyer.public, { jobMarket: job.d.jobMarket, jobId })).status).to.equal("Open");
    });

    /** tiny.json with a corpus package no machine has: a job nobody can train. */
    const noCorpus = () => {
      const tiny = JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8")) as { corpora: object[] };
      return { ...tiny, corpora: [{ ...tiny.corpora[0]!, package: "pouw-no-such-corpus" }] };
    };

    it("buyer create refuses a job nobody can train (its corpus package is not installed): one line naming the cause, exit 2, no transaction", async () => {
      const path = join(dir, "no-corpus.json");
      writeFileSync(path, JSON.stringify(noCorpus()));
      const buyer = job.mk(1).account.address;
      const nonce = await job.buyer.public.getTransactionCount({ address: buyer });
      const r = await runPouw(["buyer", "create", "--manifest", path, "--mint", ...as(1)]);
      expect(r.code, r.stderr).to.equal(2);
      const lines = r.stderr.replace(/^pouw: WARNING: using a raw private key.*\n/, "");
      expect(lines).to.equal(
        `pouw: manifest ${path} cannot be trained: data package 'pouw-no-such-corpus' is not installed (npm install pouw-no-such-corpus); not posted (no transaction sent, nothing escrowed)\n`,
      );
      expect(r.stdout).to.equal("");
      expect(await job.buyer.public.getTransactionCount({ address: buyer })).to.equal(nonce);
    });

    it("the same job forced on chain (postJob, no dry run) is refused at provider accept: no stake locked, the job stays Open, the buyer cancels it", async () => {
      // into this state dir's store, so the provider's accept reads the manifest and gets as far as its data
      const { jobId } = await postJob(job.buyer, job.d, new LocalDirStore(join(dir, "store")), parseManifest(noCorpus()), job.policy, job.payment, {});
      const provider = job.cheat.account.address;
      const stake = async () => getStakeAccount(job.admin.public, { stakeVault: job.d.stakeVault, provider });
      const [before, nonce] = [await stake(), await job.buyer.public.getTransactionCount({ address: provider })];
      const r = await runPouw(["provider", "accept", String(jobId), ...as(2)]);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr.replace(/^pouw: WARNING: using a raw private key.*\n/, "")).to.equal(
        `pouw: job ${jobId} cannot be trained: data package 'pouw-no-such-corpus' is not installed (npm install pouw-no-such-corpus); not accepted (no stake locked): the buyer can cancel the job (JobMarket.cancelJob)\n`,
      );
      expect(await job.buyer.public.getTransactionCount({ address: provider })).to.equal(nonce);
      expect(await stake()).to.deep.equal(before);
      expect((await getJob(job.buyer.public, { jobMarket: job.d.jobMarket, jobId })).status).to.equal("Open");
      // nobody accepted it, so nobody can be timed out on it: the buyer's way out is a full refund
      await cancelJob(job.buyer, { jobMarket: job.d.jobMarket, jobId });
      expect((await getJob(job.buyer.public, { jobMarket: job.d.jobMarket, jobId })).status).to.equal("Cancelled");
      // the typed error a caller (bot, dApp) can act on
      const err = await checkJobBeforeAccept({ clients: job.cheat, deployment: job.d, store: new LocalDirStore(join(dir, "store")) }, jobId).then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(UntrainableJobError);
    });

    it("a job whose on-chain shape is not its manifest's (4 segments of 4 for 12 steps) is refused at provider accept: no stake locked, so no timeout slash for the buyer to collect", async () => {
      const store = new LocalDirStore(join(dir, "store"));
      const { jobId } = await postJob(job.buyer, job.d, store, job.manifest, { ...job.policy, segments: 4, timeoutSlashBps: 10_000 }, job.payment, {});
      const provider = job.cheat.account.address;
      const stake = async () => getStakeAccount(job.admin.public, { stakeVault: job.d.stakeVault, provider });
      const [before, nonce] = [await stake(), await job.buyer.public.getTransactionCount({ address: provider })];
      const r = await runPouw(["provider", "accept", String(jobId), ...as(2)]);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr).to.include(`job ${jobId}: policy (4 x 4 steps) does not match the manifest (12 steps of 4): not accepted (no stake locked)`);
      expect(await job.buyer.public.getTransactionCount({ address: provider })).to.equal(nonce);
      expect(await stake()).to.deep.equal(before);
      const err = await checkJobBeforeAccept({ clients: job.cheat, deployment: job.d, store }, jobId).then(() => undefined, (e: unknown) => e);
      expect(err).to.be.instanceOf(UntrainableJobError);
      await cancelJob(job.buyer, { jobMarket: job.d.jobMarket, jobId });
    });
  });

  it("Ctrl-C during provider run: the bar shows the cursor again, one line says the rerun resumes, exit 130", () => {
    const out = new PassThrough() as PassThrough & { isTTY: boolean; columns: number };
    out.isTTY = true;
    out.columns = 100;
    let written = "";
    out.on("data", (d: Buffer) => (written += d.toString()));
    const progress = reporter(out);
    progress.update({ jobId: 3n, segment: 1, step: 5, steps: 12, loss: 0.5 } as never);
    expect(written).to.contain("\x1b[?25l"); // cursor hidden while the bar runs
    const lines: string[] = [];
    const codes: number[] = [];
    interruptHandler(3n, progress.stop, { write: (l) => lines.push(l), exit: (c) => codes.push(c) })();
    expect(written.slice(written.lastIndexOf("\x1b[?25l"))).to.contain("\x1b[?25h"); // and shown again
    expect(lines).to.deep.equal(["\npouw: interrupted: job 3's committed segments are on chain; `pouw provider run 3` resumes from the next one\n"]);
    expect(codes).to.deep.equal([130]);
  });

  it("an unreachable RPC is one line, exit 2, with no retry warnings before it", async () => {
    configureLogging({ level: "warn", format: "json" });
    const r = await runPouw(["buyer", "status", "1", "--rpc", "http://127.0.0.1:1", "--log-format", "json"]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.equal("pouw: cannot reach the RPC at http://127.0.0.1:1 (start `npx hardhat node` or pass --rpc)\n");
  });
});
