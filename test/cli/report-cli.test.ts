/**
 * `pouw report JOB` in-process through main(argv) for the slashed job of the bot fixture (test/bot/fixture.ts: a
 * stale:2 provider, four bonded auditors, a panel of 3): the bots challenge step 2, the panel votes Fault, the lock is
 * slashed. The HTML names every stage of the timeline with the tx hashes and blocks the chain has, the slash's split
 * (challengers, buyer, burn) as the policy's shares give it, EIP-55 addresses, amounts with the token symbol and the
 * challenged step on the loss chart; headless Chromium (as test/e2e/report.test.ts) draws both charts offline, and a
 * screenshot is saved under test-artifacts/ (POUW_TEST_ARTIFACTS overrides).
 */
import { expect } from "chai";
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { formatUnits, getAddress } from "viem";
import { disputeGameAbi, getFaultAppeal, getStakeSlashes, writeDeployment } from "../../verifier/src/chain/index.ts";
import type { JobReport } from "../../verifier/src/report/job.ts";
import { cheatingJob, type CheatingJob } from "../bot/fixture.ts";
import { runPouw } from "./in-process.ts";
import { serveProvider, type ServedProvider } from "./rpc-over-http.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = resolve(process.env.POUW_TEST_ARTIFACTS ?? "test-artifacts");

describe("pouw report JOB: a slashed job's HTML report (in-process, headless Chromium)", function () {
  this.timeout(120_000);
  let job: CheatingJob;
  let rpc: ServedProvider;
  let dir: string;
  const as = () => ["--rpc", rpc.url, "--state-dir", dir, "--store", join(job.dir, "store")];

  before(async () => {
    job = await cheatingJob("report", 600);
    const bots = job.auditors.map((_, i) => job.bot(i));
    for (const b of bots) await b.tick(); // A1 challenges step 2
    for (let round = 0; round < 4; round++) {
      await job.conn.networkHelpers.mine(2); // past the seed block: panel, commits, reveals, resolve
      await passAppealWindows(job);
      for (const b of bots) await b.tick();
    }
    for (const b of bots) b.close();
    rpc = await serveProvider(job.conn.provider);
    dir = mkdtempSync(join(tmpdir(), "pouw-cli-report-"));
    const { gasUsed: _gas, ...deployment } = job.d as typeof job.d & { gasUsed?: bigint };
    await writeDeployment(join(dir, "deployment.json"), deployment);
  });
  after(async () => {
    await rpc?.close();
  });

  it("renders the timeline, the slash's flows, the detected step and the provenance state from the chain", async () => {
    const out = join(dir, "job-1.html");
    const r = await runPouw(["report", "1", "--out", out, "--json", ...as()]);
    expect(r.code, r.stderr).to.equal(0);
    const rep = JSON.parse(r.stdout) as JobReport & { path: string };
    expect(rep.path).to.equal(out);
    expect(rep.job.status).to.equal("Refunded");

    // independent expectations: the chain's own events and the policy's shares
    const [opened] = await job.disputes();
    const [slash] = await getStakeSlashes(job.admin.public, { stakeVault: job.d.stakeVault, jobId: 1n, fromBlock: BigInt(job.d.startBlock) });
    const stake = job.policy.requiredStake;
    const toChallengers = (stake * BigInt(job.policy.challengerBps)) / 10_000n;
    const toBuyer = (stake * BigInt(job.policy.buyerBps)) / 10_000n;
    const pdt = (wei: bigint) => `${formatUnits(wei, 18)} PDT`;
    expect(rep.detectedStep).to.equal(2);
    expect(rep.disputes).to.have.length(1);
    const d0 = rep.disputes[0]!;
    expect(d0).to.deep.include({ step: 2, outcome: "PanelFault", challenger: getAddress(job.auditors[0]!.account.address) });
    expect(d0.challengedIn).to.deep.equal({ blockNumber: opened!.blockNumber.toString(), tx: opened!.transactionHash });
    expect(d0.votes.map((v) => v.vote)).to.deep.equal(["Fault", "Fault", "Fault"]);
    expect(rep.flows.slash).to.deep.include({
      provider: getAddress(job.cheat.account.address),
      slashed: pdt(stake),
      toChallengers: pdt(toChallengers),
      toBuyer: pdt(toBuyer),
      burned: pdt(slash!.burned),
      paymentRefund: pdt(job.payment),
    });
    expect(stake - toChallengers - toBuyer).to.equal(slash!.burned);
    // the stages in chain order: commits, challenge, votes, resolve, settle; each row with its block and tx
    const stages = rep.timeline.map((t) => t.stage);
    const first = (s: string) => stages.indexOf(s as never);
    expect(first("commit")).to.be.lessThan(first("challenge"));
    expect(first("challenge")).to.be.lessThan(first("vote"));
    expect(first("vote")).to.be.lessThan(first("resolve"));
    expect(first("resolve")).to.be.lessThanOrEqual(first("settle"));
    const events = rep.timeline.map((t) => t.event);
    for (const e of ["JobCreated", "JobAccepted", "SegmentCommitted", "Challenged", "PanelDrawn", "VoteCommitted", "VoteRevealed", "DisputeResolved", "ProviderFaultSettled", "StakeSlashed"]) expect(events, e).to.include(e);
    expect(rep.timeline.find((t) => t.event === "StakeSlashed")).to.deep.include({ tx: slash!.transactionHash, blockNumber: slash!.blockNumber.toString() });
    expect(rep.loss.map((l) => l.step)).to.deep.equal([4, 8, 12]);
    expect(rep.provenance.status).to.equal("none");

    // the HTML: the same facts, addresses in EIP-55, amounts with the symbol, user text escaped
    const html = readFileSync(out, "utf8");
    for (const s of [opened!.transactionHash, slash!.transactionHash, getAddress(job.cheat.account.address), getAddress(job.auditors[0]!.account.address), `${pdt(stake)} slashed`, "PanelFault", 'id="detected">2<'])
      expect(html, s).to.contain(s);
    expect(html).to.not.contain(job.cheat.account.address.toLowerCase());

    // text mode: one summary line and the path
    const text = await runPouw(["report", "1", "--out", out, ...as()]);
    expect(text.stdout).to.match(new RegExp(`^job 1: Refunded, \\d+ events, 1 dispute \\(first challenged step 2\\), ${pdt(stake).replace(".", "\\.")} slashed, 0 receipts, provenance none\\nwrote ${out}\\n$`));
    // an unknown job: the one line every command prints
    const unknown = await runPouw(["report", "9", ...as()]);
    expect([unknown.code, unknown.stderr]).to.deep.equal([2, "pouw: job 9 does not exist\n"]);
  });

  it("draws the loss curve (with the challenged step) and the flows offline in headless Chromium; screenshot saved", async function () {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
    const path = join(dir, "job-1.html");
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-component-update", "--disable-sync"],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const requests: string[] = [];
      page.on("request", (q) => requests.push(q.url()));
      const errors: string[] = [];
      page.on("pageerror", (e) => errors.push(e.message));
      await page.goto(pathToFileURL(path).href);
      await page.waitForFunction(() => typeof (globalThis as { Chart?: unknown }).Chart === "function");
      const charts = await page.evaluate(() => {
        const C = (globalThis as unknown as { Chart: { getChart: (c: HTMLCanvasElement) => { data: { datasets: { label: string }[] } } | undefined } }).Chart;
        return Array.from(document.querySelectorAll("canvas")).map((c) => {
          const { data } = (c as HTMLCanvasElement).getContext("2d")!.getImageData(0, 0, c.width, c.height);
          let painted = 0;
          for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) painted++;
          return { id: c.id, painted, labels: C.getChart(c as HTMLCanvasElement)?.data.datasets.map((s) => s.label) ?? [] };
        });
      });
      expect(errors).to.deep.equal([]);
      expect(charts.map((c) => c.id)).to.deep.equal(["loss", "flows"]);
      for (const c of charts) expect(c.painted, c.id).to.be.greaterThan(500);
      expect(charts[0]!.labels).to.deep.equal(["committed loss (segment ends)", "challenged step 2"]);
      expect(charts[1]!.labels).to.deep.equal(["challengers", "buyer", "burned"]);
      expect(requests.filter((u) => !u.startsWith("file:"))).to.deep.equal([]);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "report-slashed-job.png"), fullPage: true });
      expect(existsSync(join(ARTIFACTS, "report-slashed-job.png"))).to.equal(true);
    } finally {
      await browser.close();
    }
  });
});

/** Lets every open provider appeal window of a unanimous first-round Fault pass (the cheat does not appeal), so the bots settle it. */
async function passAppealWindows(job: CheatingJob): Promise<void> {
  const n = await job.admin.public.readContract({ address: job.d.disputeGame!, abi: disputeGameAbi, functionName: "disputeCount" });
  for (let id = 1n; id <= n; ++id) {
    const { deadline } = await getFaultAppeal(job.admin.public, { disputeGame: job.d.disputeGame!, disputeId: id });
    if (deadline !== undefined && deadline >= (await job.admin.public.getBlock()).timestamp) await job.conn.networkHelpers.time.increaseTo(deadline + 1n);
  }
}
