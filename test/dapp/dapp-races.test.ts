/**
 * The market page under a slow RPC, and the auditor's claim with money owed, in headless Chromium against Hardhat's
 * in-process network over HTTP (test/dapp/page.ts's injected wallet).
 *
 * The races: the wallet holds the node's answers to the page's read of one account, job or manifest
 * (`wallet.hold`), the test changes what the page shows (Connect as another account, an account switched in the
 * wallet, another job followed, the manifest edited), then releases the old answer. The page must show the new one:
 * the clean-clone CI at be82f8d showed the previous account's bond after a view switch and a Connect (the Connect
 * clicked while the view's read was in flight was dropped, not run).
 *
 * The claim: a bonded auditor challenges a step of a committed job (made-up leaves, test/contracts/fixture.ts) and
 * the provider concedes, so the auditor is owed its bond, the panel's fees and the challenger's share; it claims
 * them from the auditor page through the wallet: its token balance moves by what the chain said it was owed, and
 * the page then shows 0 owed. Deployment and actors: test/dispute/helpers.ts (market + DisputeGame, five bonded
 * auditors). Screenshot: test-artifacts/dapp/races-auditor-claimed.png.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeFunctionData, formatEther, parseEther, type Address, type Hex } from "viem";
import { acceptJob, commitSegment, concede, createJob, devAccount, finalize, getCredits, getDispute, getJob, getTokenBalance, jobMarketAbi, type ChainClients } from "../../verifier/src/chain/index.ts";
import { openChallenge } from "../../verifier/src/dispute/index.ts";
import { manifestHash, parseManifestJson } from "../../verifier/src/ml/manifest.ts";
import { loadDappFiles } from "../../verifier/src/serve/dapp.ts";
import { startContentServer, type ContentServer } from "../../verifier/src/serve/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { SegmentTree } from "../../verifier/src/trace/index.ts";
import { serveProvider, type ServedProvider } from "../cli/rpc-over-http.ts";
import { segmentHashes } from "../contracts/fixture.ts";
import { disputeEnv, policy, type DisputeEnv } from "../dispute/helpers.ts";
import { ROOT } from "../e2e/helpers.ts";
import { dappBuildOnce } from "./build-once.ts";
import { chromiumMissing, CHROMIUM, openWalletPage, type WalletPage } from "./page.ts";

const ARTIFACTS = join(ROOT, "test-artifacts/dapp");
const CID = "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m";
// disputeEnv's accounts: 1 buyer, 2 provider, 3 challenger, 4..8 bonded auditors (20 each)
const [BUYER, PROVIDER, AUDITOR] = [1, 2, 4];

describe("dapp: stale answers under a slow RPC, and the auditor's claim with money owed", function () {
  this.timeout(300_000);
  let env: DisputeEnv;
  let rpc: ServedProvider;
  let server: ContentServer;
  let ui: WalletPage;
  const manifestText = readFileSync(join(ROOT, "examples/tiny.json"), "utf8");
  const otherManifest = manifestText.replace('"steps": 12', '"steps": 16');

  const page = () => ui.page;
  const text = async (sel: string) => (await page().textContent(sel))?.trim() ?? "";
  const idle = () => page().waitForFunction(() => document.body.dataset.busy === "false");
  const errorText = () => text("#error");
  const lower = (a: Address) => a.slice(2).toLowerCase();
  /** An eth_call whose calldata names `account` (every read of getAccountStatus does: accountOf, auditorOf, balanceOf...). */
  const readsOf = (account: Address) => (method: string, params: unknown[]) => method === "eth_call" && String((params[0] as { data?: Hex }).data ?? "").includes(lower(account));
  const getJobCall = (jobId: bigint) => encodeFunctionData({ abi: jobMarketAbi, functionName: "getJob", args: [jobId] });
  const readsJob = (jobId: bigint) => (method: string, params: unknown[]) =>
    method === "eth_call" && (params[0] as { to?: string; data?: Hex }).to?.toLowerCase() === env.d.jobMarket.toLowerCase() && (params[0] as { data?: Hex }).data === getJobCall(jobId);

  async function connectAs(i: number): Promise<void> {
    ui.wallet.use(i);
    await page().click("#connect");
    await idle();
    expect(await errorText()).to.equal("");
    expect(await text("#account-address")).to.equal(devAccount(i).address);
  }

  async function committedJob(): Promise<bigint> {
    const manifest = parseManifestJson(manifestText);
    const { jobId } = await createJob(env.buyer, { jobMarket: env.d.jobMarket, manifestHash: manifestHash(manifest), manifestUri: `cid:${CID}`, token: env.d.token, payment: parseEther("2"), policy: policy(3, 4) });
    await acceptJob(env.provider, { jobMarket: env.d.jobMarket, jobId });
    for (let s = 0; s < 3; s++) {
      await commitSegment(env.provider, { jobMarket: env.d.jobMarket, jobId, segment: s, stateHashes: segmentHashes(jobId, s, 4).hashes, lossE6: 2_000_000n, checkpointCid: CID });
    }
    return jobId;
  }

  before(async function () {
    if (chromiumMissing()) {
      console.log(`    skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
      this.skip();
    }
    env = await disputeEnv();
    // job 1: committed, challenged at step 1 by auditor 4, conceded by the provider (Refunded); job 2: Open
    const jobId = await committedJob();
    const seg0 = segmentHashes(jobId, 0, 4);
    const tree = new SegmentTree(0, seg0.hashes);
    const auditor = env.auditors[0]!;
    expect(auditor.account.address).to.equal(devAccount(AUDITOR).address);
    const { disputeId } = await openChallenge(auditor, {
      disputeGame: env.d.disputeGame,
      token: env.d.token,
      jobId,
      endStateHash: seg0.end,
      audit: { segment: 0, traceRoot: seg0.root, step: 1, prevStateHash: seg0.hashes[0]!, prevProof: tree.proof(0), stateHash: seg0.hashes[1]!, proof: tree.proof(1) },
    });
    await concede(env.provider, { disputeGame: env.d.disputeGame, disputeId });
    expect((await getDispute(auditor.public, { disputeGame: env.d.disputeGame, disputeId })).outcome).to.equal("Conceded");
    expect((await getJob(auditor.public, { jobMarket: env.d.jobMarket, jobId })).status).to.equal("Refunded");
    await createJob(env.buyer, { jobMarket: env.d.jobMarket, manifestHash: manifestHash(parseManifestJson(manifestText)), manifestUri: `cid:${CID}`, token: env.d.token, payment: parseEther("1"), policy: policy(3, 4) });
    // job 3: committed, nobody audits it, finalized after its window: paid with zero independent checks
    const unaudited = await committedJob();
    await env.increaseTime(86_401);
    await finalize(env.buyer, { jobMarket: env.d.jobMarket, jobId: unaudited });

    rpc = await serveProvider(env.provider1193);
    const dir = mkdtempSync(join(tmpdir(), "pouw-dapp-races-"));
    const { outdir } = await dappBuildOnce();
    const deploymentPath = join(dir, "deployment.json");
    const { gasUsed: _g, ...deployment } = env.d as typeof env.d & { gasUsed?: bigint };
    writeFileSync(deploymentPath, JSON.stringify(deployment));
    server = await startContentServer({ store: new LocalDirStore(join(dir, "store")), dapp: await loadDappFiles(outdir, { deploymentPath }) });
    ui = await openWalletPage(rpc.url, { account: BUYER, artifacts: ARTIFACTS });
    await page().goto(`${server.url}/?poll=250#buyer`);
    await page().waitForFunction(() => document.body.dataset.ready === "true");
    await page().click("#connect");
    await idle();
    expect(await errorText()).to.equal("");
  });

  afterEach(() => ui?.wallet.releaseAll());
  after(async () => {
    await ui?.close();
    await server?.close();
    await rpc?.close();
  });

  it("drops a quote that lands after the manifest was edited, and an edit hides the quote it no longer matches", async () => {
    await page().fill("#manifest-text", manifestText);
    const gate = ui.wallet.hold((method, params) => method === "eth_call" && (params[0] as { to?: string }).to?.toLowerCase() === env.d.disputeGame.toLowerCase());
    await page().click("#quote-button");
    await gate.waitHeld(); // the quote is reading the deployed panel
    await page().fill("#manifest-text", otherManifest);
    gate.release();
    await idle();
    expect(await errorText()).to.equal("");
    expect(await page().isVisible("#quote-section")).to.equal(false);
    expect(await page().isDisabled("#post")).to.equal(true);
    expect(await text("#manifest-status")).to.equal("The manifest changed while it was being quoted: check and quote it again.");

    await page().click("#quote-button");
    await idle();
    expect(await errorText()).to.equal("");
    expect(await page().isVisible("#quote-section")).to.equal(true);
    expect(await page().isDisabled("#post")).to.equal(false);
    await page().fill("#manifest-text", manifestText); // an edit after the quote: the quote is for other text now
    expect(await page().isVisible("#quote-section")).to.equal(false);
    expect(await page().isDisabled("#post")).to.equal(true);
    expect(await text("#manifest-status")).to.equal("The manifest changed since its quote: check and quote it again.");
  });

  it("never shows the previous job's answer after another job is followed", async () => {
    await page().fill("#job-id", "1");
    await page().click("#follow");
    await idle();
    await page().waitForFunction(() => document.getElementById("job-status")?.textContent === "Refunded");
    // the refunded job names its outcome: slashed how much, why, to whom; the buyer's share and refund
    const lock = parseEther("10");
    const share = (bps: number) => formatEther((lock * BigInt(bps)) / 10_000n);
    const p = policy(3, 4);
    expect(await text("#job-status-means")).to.match(/^ended: a dispute found the provider at fault/);
    expect(await text("#job-outcome")).to.include(`the provider was slashed 10 PDT of its stake because a dispute proved a wrong training step: ${share(p.challengerBps)} PDT to the challengers, ${share(p.buyerBps)} PDT to the buyer`);
    expect(await text("#job-outcome")).to.include("the buyer was refunded 2 PDT of the 2 PDT escrowed");
    expect(await text("#job-buyer-slash-share")).to.equal(`${share(p.buyerBps)} PDT (a StakeVault credit; Claim collects it)`);
    expect(await text("#job-coverage")).to.match(/; 1 dispute \(\d+ on step 1: Conceded\)$/);
    expect(await page().isVisible("#job-coverage-warning")).to.equal(false);
    expect(await text("#slash-credit")).to.equal(share(p.buyerBps));
    const stale = ui.wallet.hold(readsJob(1n));
    await stale.waitHeld(); // the poll's next read of job 1 is in flight
    await page().fill("#job-id", "2");
    await page().click("#follow");
    await idle();
    expect(await text("#job-status")).to.equal("Open");
    // every status the job view shows from now on
    await page().evaluate(() => {
      const seen: string[] = ((window as unknown as { __statuses: string[] }).__statuses = []);
      new MutationObserver(() => seen.push(document.getElementById("job-status")?.textContent ?? "")).observe(document.getElementById("job")!, { subtree: true, childList: true, characterData: true });
    });
    stale.release();
    // the poll reads sequentially: its next read of job 2 starts only after the stale read of job 1 has finished
    const next = ui.wallet.hold(readsJob(2n));
    await next.waitHeld();
    next.release();
    const seen = await page().evaluate(() => (window as unknown as { __statuses: string[] }).__statuses);
    expect(seen, "statuses shown after following job 2").to.not.include("Refunded");
    expect(await text("#job-status")).to.equal("Open");
    expect(await page().isVisible("#cancel")).to.equal(true); // job 2 is the buyer's and Open
  });

  it("runs a Connect clicked while the view switch is still reading the previous account (not dropped)", async () => {
    await connectAs(PROVIDER);
    // the user picks the auditor in the wallet, opens the auditor view and clicks Connect while its read is in flight
    ui.wallet.use(AUDITOR);
    const gate = ui.wallet.hold(readsOf(devAccount(PROVIDER).address));
    await page().click("#nav-auditor");
    await gate.waitHeld();
    await page().click("#connect");
    gate.release();
    await idle();
    expect(await errorText()).to.equal("");
    expect(await text("#account-address")).to.equal(devAccount(AUDITOR).address);
    expect(await text("#auditor-bond")).to.equal("20 PDT");
  });

  it("shows an account switched in the wallet while the standing is still being read (not dropped)", async () => {
    await connectAs(AUDITOR);
    await page().click("#nav-auditor");
    await idle();
    const gate = ui.wallet.hold(readsOf(devAccount(AUDITOR).address));
    await page().click("#auditor-refresh");
    await gate.waitHeld();
    await ui.switchAccount(BUYER); // EIP-1193 accountsChanged, as a wallet emits when the user picks another account
    gate.release();
    await idle();
    expect(await errorText()).to.equal("");
    expect(await text("#account-address")).to.equal(devAccount(BUYER).address);
    expect(await text("#auditor-bond")).to.equal("0 PDT");
    // the buyer's own credits: its share of the conceded job's slash
    const c = await getCredits(env.buyer.public, { deployment: env.d, account: devAccount(BUYER).address });
    expect(c.stakeVault > 0n).to.equal(true);
    expect(await text("#auditor-credits")).to.equal(`${formatEther(c.disputeGame)} PDT disputes (deposits, rewards, panel fees), ${formatEther(c.stakeVault)} PDT slash shares, ${formatEther(c.auditorRegistry)} PDT forfeited bonds`);
  });

  it("claims the auditor's challenge reward through the wallet: the balance moves by what was owed, then 0 owed", async () => {
    await ui.switchAccount(AUDITOR);
    await idle();
    expect(await text("#account-address")).to.equal(devAccount(AUDITOR).address);
    const me = devAccount(AUDITOR).address;
    const reader: ChainClients["public"] = env.buyer.public;
    const owed = await getCredits(reader, { deployment: env.d, account: me });
    const total = owed.disputeGame + owed.stakeVault + owed.auditorRegistry;
    expect(owed.disputeGame > 0n, "the challenger's bond, fees and share are owed in DisputeGame").to.equal(true);
    const tok = (w: bigint) => `${formatEther(w)} PDT`;
    expect(await text("#auditor-credits")).to.equal(`${tok(owed.disputeGame)} disputes (deposits, rewards, panel fees), ${tok(owed.stakeVault)} slash shares, ${tok(owed.auditorRegistry)} forfeited bonds`);
    expect(await page().isVisible("#auditor-claim")).to.equal(true);
    const before = await getTokenBalance(reader, { token: env.d.token, account: me });
    const sent = ui.wallet.sent.length;
    await page().click("#auditor-claim");
    await idle();
    expect(await errorText()).to.equal("");
    const after = await getTokenBalance(reader, { token: env.d.token, account: me });
    expect(after - before).to.equal(total);
    expect(ui.wallet.sent.length - sent).to.equal([owed.disputeGame, owed.stakeVault, owed.auditorRegistry].filter((x) => x > 0n).length);
    expect(await text("#auditor-claimed-amount")).to.equal(`claimed ${tok(total)}`);
    expect(await text("#auditor-credits")).to.equal("0 PDT disputes (deposits, rewards, panel fees), 0 PDT slash shares, 0 PDT forfeited bonds");
    expect(await text("#auditor-balance")).to.equal(tok(after));
    expect(await page().isVisible("#auditor-claim")).to.equal(false);
    const left = await getCredits(reader, { deployment: env.d, account: me });
    expect(left.disputeGame + left.stakeVault + left.auditorRegistry).to.equal(0n);
    await ui.shot("races-auditor-claimed");
  });

  it("a job finalized with nobody auditing it shows a plain warning, not just a status", async () => {
    await connectAs(BUYER);
    await page().click("#nav-buyer");
    await idle();
    await page().fill("#job-id", "3");
    await page().click("#follow");
    await idle();
    await page().waitForFunction(() => document.getElementById("job-status")?.textContent === "Finalized");
    expect(await text("#job-status-means")).to.match(/^ended: the challenge window passed with no successful challenge and the provider was paid/);
    expect(await text("#job-coverage")).to.equal("0 of 3 committed segments audited; 0 receipts; no disputes");
    expect(await text("#job-coverage-warning")).to.match(/^WARNING: 0 of 3 committed segments audited: nobody independently checked this result/);
  });

  it("the buyer claims its refund and its slash share with one click", async () => {
    await connectAs(BUYER);
    await page().click("#nav-buyer");
    await idle();
    const before = await getCredits(env.buyer.public, { deployment: env.d, account: devAccount(BUYER).address });
    expect(before.jobMarket > 0n && before.stakeVault > 0n, "a refund and a slash share are owed").to.equal(true);
    await page().click("#claim");
    await idle();
    expect(await errorText()).to.equal("");
    const after = await getCredits(env.buyer.public, { deployment: env.d, account: devAccount(BUYER).address });
    expect([after.jobMarket, after.stakeVault]).to.deep.equal([0n, 0n]);
    expect(await text("#credit")).to.equal("0");
    expect(await text("#slash-credit")).to.equal("0");
    expect(await page().isVisible("#claim")).to.equal(false);
  });
});
