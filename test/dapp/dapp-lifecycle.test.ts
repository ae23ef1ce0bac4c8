/**
 * The market page through a whole job, in headless Chromium against Hardhat's in-process network served over HTTP,
 * with the CLI (in-process, main(argv)) as the other parties on one state dir: `pouw deploy` (DisputeGame and
 * registries), a provider that stakes, accepts and trains with `pouw provider run`, an auditor bot (`pouw auditor run
 * --once`) that audits every segment and records receipts, and finalize + provenance anchoring by the provider
 * (provider/finalize-anchor.ts, what `pouw provider claim` runs, without its claim so the page can claim).
 *
 * The page, served by the `pouw serve` server over the same store and board: quotes and posts the job; follows it
 * live until the receipts show; once Finalized, fetches the result and verifies its provenance in the browser (the
 * h(T) it computes is compared with the one Node computes on the same weights); verifies a tampered weights file and
 * names the failing checks; shows the provider's and the auditor's standing as `pouw provider status` and `pouw
 * auditor status` print it; claims the provider's payment through the wallet. Screenshots: test-artifacts/dapp/.
 */
import { expect } from "chai";
import { network } from "hardhat";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatEther, parseEther } from "viem";
import { devAccount, getCredits, getJob, getJobCreated, mintTestToken, providerClients, readDeployment, type Deployment } from "../../verifier/src/chain/index.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { canonicalManifest, parseManifestJson } from "../../verifier/src/ml/manifest.ts";
import { weightsStateHash } from "../../verifier/src/provenance/index.ts";
import { finalizeAndAnchor } from "../../verifier/src/provider/finalize-anchor.ts";
import { loadDappFiles } from "../../verifier/src/serve/dapp.ts";
import { startContentServer, type ContentServer } from "../../verifier/src/serve/index.ts";
import { LocalDirBoard } from "../../verifier/src/board/index.ts";
import { cidOf, LocalDirStore } from "../../verifier/src/store/index.ts";
import { runPouw } from "../cli/in-process.ts";
import { serveProvider, type ServedProvider } from "../cli/rpc-over-http.ts";
import { DEV_KEYS, ROOT } from "../e2e/helpers.ts";
import { dappBuildOnce } from "./build-once.ts";
import { chromiumMissing, CHROMIUM, openWalletPage, type WalletPage } from "./page.ts";

const ARTIFACTS = join(ROOT, "test-artifacts/dapp");
const [BUYER, PROVIDER, AUDITOR] = [1, 2, 3];

describe("dapp: a whole job from the page, the provider and auditor from the CLI", function () {
  this.timeout(300_000);
  let rpc: ServedProvider;
  let server: ContentServer;
  let ui: WalletPage;
  let d: Deployment;
  let conn: Awaited<ReturnType<typeof network.create>>;
  const dir = mkdtempSync(join(tmpdir(), "pouw-dapp-life-"));
  const tiny = JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8")) as { policy: Record<string, unknown> };
  // audit rate 1: the bot audits every segment in its one pass
  const manifestText = JSON.stringify({ ...tiny, policy: { ...tiny.policy, auditRate: 1 } }, null, 2);
  const manifest = parseManifestJson(manifestText);
  const as = (key: number) => ["--rpc", rpc.url, "--state-dir", dir, "--private-key", DEV_KEYS[key]!, "--poll-interval", "100"];
  const pouw = async (args: string[]) => {
    const r = await runPouw(args);
    if (r.code !== 0) throw new Error(`pouw ${args.join(" ")} exited ${r.code}: ${r.stderr.slice(-2000)}`);
    return r.stdout;
  };
  const text = async (sel: string) => (await ui.page.textContent(sel))?.trim() ?? "";
  const idle = () => ui.page.waitForFunction(() => document.body.dataset.busy === "false");
  const errorText = () => text("#error");
  const shots: string[] = [];
  const reader = () => providerClients(conn.provider, 31337, { account: devAccount(BUYER) }).public;
  const shot = async (name: string) => shots.push(await ui.shot(name));

  before(async function () {
    if (chromiumMissing()) {
      console.log(`    skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
      this.skip();
    }
    conn = await network.create();
    rpc = await serveProvider(conn.provider);
    await pouw(["deploy", ...as(0), "--unbonding-delay", "60", "--exit-delay", "691272", "--min-bond", "1"]);
    d = await readDeployment(join(dir, "deployment.json"));
    const buyer = providerClients(conn.provider, 31337, { account: devAccount(BUYER), pollingIntervalMs: 50 });
    await mintTestToken(buyer, { token: d.token, to: buyer.account.address, amount: parseEther("10") });
    await pouw(["provider", "stake", "5", "--mint", ...as(PROVIDER)]);
    await pouw(["auditor", "bond", "2", "--mint", ...as(AUDITOR)]);

    const { outdir } = await dappBuildOnce();
    const dapp = await loadDappFiles(outdir, { deploymentPath: join(dir, "deployment.json") });
    // what `pouw serve --dapp` runs over this state dir: the content store, the board, the page
    // with --upload: the page publishes the manifest into this store
    const store = new LocalDirStore(join(dir, "store"));
    server = await startContentServer({ store, board: new LocalDirBoard(join(dir, "board")), dapp, upload: { store, maxBytes: 1 << 20 } });
    ui = await openWalletPage(rpc.url, { account: BUYER, artifacts: ARTIFACTS });
  });

  after(async () => {
    await ui?.close();
    await server?.close();
    await rpc?.close();
  });

  it("quotes and posts the job from the page", async () => {
    await ui.page.goto(`${server.url}/?poll=250`);
    await ui.page.waitForFunction(() => document.body.dataset.ready === "true");
    await ui.page.click("#connect");
    await idle();
    expect(await errorText()).to.equal("");
    await ui.page.fill("#manifest-text", manifestText);
    await ui.page.click("#quote-button");
    await idle();
    expect(await errorText()).to.equal("");
    expect(await text("#quote-payment")).to.equal("0.1 PDT");
    await shot("life-1-quote");
    await ui.page.click("#post");
    await idle();
    expect(await errorText()).to.equal("");
    expect(await text("#posted")).to.equal("job 1 created");
    // the page published the manifest's canonical bytes to the server it came from (PUT /ipfs/<cid>), where the provider reads
    const cid = cidOf(new TextEncoder().encode(canonicalManifest(manifest)));
    expect(await text("#manifest-published")).to.equal("published");
    expect(await new LocalDirStore(join(dir, "store")).has(cid)).to.equal(true);
    const created = await getJobCreated(reader(), { jobMarket: d.jobMarket, jobId: 1n, fromBlock: BigInt(d.startBlock) });
    expect(created.manifestUri).to.equal(`cid:${cid}`);
  });

  it("follows the job live while the CLI provider trains and the CLI bot audits", async () => {
    await pouw(["provider", "accept", "1", ...as(PROVIDER)]);
    expect(await pouw(["provider", "run", "1", ...as(PROVIDER)])).to.match(/committed segments 0\.\.2/);
    // before any auditor looked: the page warns that nothing was checked, and says when the window ends
    await ui.page.waitForFunction(() => document.getElementById("job-status")?.textContent === "Committed");
    expect(await text("#job-coverage-warning")).to.match(/^WARNING: 0 of 3 committed segments audited \(its policy's audit rate 1 promised 3\): nobody independently checked/);
    const { deadline } = await getJob(reader(), { jobMarket: d.jobMarket, jobId: 1n });
    expect(await text("#job-window-end")).to.equal(new Date(Number(deadline) * 1000).toISOString());
    expect(await text("#job-status-means")).to.match(/until the challenge window ends, then the job can be finalized$/);
    expect(await pouw(["auditor", "run", "--once", ...as(AUDITOR)])).to.match(/3 receipts/);
    await ui.page.waitForFunction(() => document.querySelectorAll("#job-receipts li").length === 3);
    expect(await text("#job-status")).to.equal("Committed"); // every segment committed, inside the challenge window
    expect(await text("#job-segments")).to.equal("3/3");
    expect(await text("#job-receipts")).to.contain("segment 0: clean by");
    await ui.page.waitForFunction(() => !document.getElementById("job-coverage-warning"));
    expect(await text("#job-coverage")).to.equal("3 of 3 committed segments audited, each by at least 1 of 1 distinct auditor; 3 receipts; no disputes");
    expect(await ui.page.isDisabled("#fetch-result")).to.equal(true);
    await shot("life-2-live-audited");
  });

  let weightsPath = "";
  let recordPath = "";
  it("fetches the finalized result and verifies its provenance in the browser (h(T) equal to Node's)", async () => {
    await pouw(["dev", "advance", "3601", "--rpc", rpc.url, "--state-dir", dir]);
    const clients = providerClients(conn.provider, 31337, { account: devAccount(PROVIDER), pollingIntervalMs: 50 });
    const store = new LocalDirStore(join(dir, "store"));
    const anchored = await finalizeAndAnchor({ clients, deployment: d, store, board: new SegmentBoard(join(dir, "board"), store), stateDir: dir }, 1n);
    expect(anchored.finalized).to.equal(true);
    weightsPath = anchored.provenance!.weightsPath;
    recordPath = anchored.provenance!.recordPath;
    await ui.page.waitForFunction(() => document.getElementById("job-status")?.textContent === "Finalized");
    await ui.page.click("#fetch-result");
    await idle();
    expect(await errorText()).to.equal("");
    expect(await text("#result-verdict")).to.equal(`provenance of job 1 verified (record ${anchored.provenance!.recordHash})`);
    const node = weightsStateHash(manifest, 1n, new Uint8Array(readFileSync(weightsPath)), manifest.training.steps);
    expect(await text('#result-checks tr[data-item="weights state hash"] td.mono')).to.equal(`h(12) = ${node} = last segment's end state`);
    expect(await ui.page.locator('#result-checks tr[data-status="fail"]').count()).to.equal(0);
    expect(await text('#result-checks tr[data-item="record hash"] td.mono')).to.equal(`anchored ${anchored.provenance!.recordHash}`);
    expect(await text("#download-weights")).to.equal("final.safetensors");
    expect(await text("#result-coverage")).to.equal("audit coverage: 3 of 3 committed segments audited, each by at least 1 of 1 distinct auditor; 3 receipts; no disputes");
    expect(await ui.page.isVisible("#result-coverage-warning")).to.equal(false);
    await shot("life-3-finalized-verified");
  });

  it("names the failing checks for a tampered weights file", async () => {
    const tampered = readFileSync(weightsPath);
    tampered[tampered.length - 3]! ^= 0x01;
    await ui.page.setInputFiles("#verify-weights", { name: "final.safetensors", mimeType: "application/octet-stream", buffer: tampered });
    await ui.page.setInputFiles("#verify-record", { name: "provenance.json", mimeType: "application/json", buffer: readFileSync(recordPath) });
    await ui.page.click("#verify-files");
    await idle();
    expect(await errorText()).to.equal("");
    expect(await text("#files-verdict")).to.equal("provenance of job 1 REJECTED: weights, weights state hash");
    expect(await text('#files-checks tr[data-item="weights"] td.mono')).to.match(/^weights file has CID b\w+, record says b\w+$/);
    await shot("life-4-tampered-rejected");
  });

  it("shows the provider's standing as pouw provider status does, and claims its payment through the wallet", async () => {
    ui.wallet.use(PROVIDER);
    await ui.page.click("#nav-provider");
    await idle(); // the view switch reads the standing of the account still connected; then reconnect as the new one
    await ui.page.click("#connect");
    await idle();
    expect(await errorText()).to.equal("");
    const cli = JSON.parse(await pouw(["provider", "status", "--json", "--rpc", rpc.url, "--state-dir", dir, "--address", devAccount(PROVIDER).address])) as {
      stake: { free: string; locked: string };
      credits: { jobMarket: string; stakeVault: string };
      jobs: { jobId: string; status: string }[];
    };
    expect(await text("#provider-stake")).to.equal(`${formatEther(BigInt(cli.stake.free))} PDT free, ${formatEther(BigInt(cli.stake.locked))} PDT locked`);
    expect(await text("#provider-payment-credit")).to.equal(`${formatEther(BigInt(cli.credits.jobMarket))} PDT`);
    expect(cli.jobs.map((j) => `${j.jobId} ${j.status}`)).to.deep.equal(["1 Finalized"]);
    expect(await text("#provider-jobs")).to.match(/^job 1: Finalized, 3\/3 segments/);
    expect(BigInt(cli.credits.jobMarket)).to.equal(parseEther("0.1"));
    await ui.page.click("#provider-claim");
    await idle();
    expect(await errorText()).to.equal("");
    expect(await text("#provider-claimed-amount")).to.equal("claimed 0.1 PDT");
    expect((await getCredits(reader(), { deployment: d, account: devAccount(PROVIDER).address })).jobMarket).to.equal(0n);
    expect(await text("#provider-payment-credit")).to.equal("0 PDT");
    expect(await ui.page.isVisible("#provider-claim")).to.equal(false);
    await shot("life-5-provider");
  });

  it("shows the auditor's standing as pouw auditor status does", async () => {
    ui.wallet.use(AUDITOR);
    await ui.page.click("#nav-auditor");
    await idle(); // the view switch reads the standing of the account still connected; then reconnect as the new one
    await ui.page.click("#connect");
    await idle();
    expect(await errorText()).to.equal("");
    const cli = JSON.parse(await pouw(["auditor", "status", "--json", "--rpc", rpc.url, "--state-dir", dir, "--address", devAccount(AUDITOR).address])) as {
      bond: string;
      status: string;
      panelPool: { eligible: number; needed: number };
    };
    expect(await text("#auditor-bond")).to.equal(`${formatEther(BigInt(cli.bond))} PDT`);
    expect(await text("#auditor-status")).to.match(new RegExp(`^${cli.status}`));
    expect(await text("#auditor-panel")).to.equal(`${cli.panelPool.eligible} eligible auditors, ${cli.panelPool.needed} needed to decide a dispute (too few)`);
    // nothing owed without a dispute: no claim offered
    expect(await ui.page.isVisible("#auditor-claim")).to.equal(false);
    await shot("life-6-auditor");
  });

  it("left non-trivial screenshots", () => {
    expect(shots).to.have.length(6);
    for (const path of shots) {
      const bytes = readFileSync(path);
      expect(bytes.subarray(1, 4).toString("latin1"), path).to.equal("PNG");
      expect(statSync(path).size, path).to.be.greaterThan(20_000);
    }
    writeFileSync(join(ARTIFACTS, "life-screenshots.txt"), shots.join("\n") + "\n");
  });
});
