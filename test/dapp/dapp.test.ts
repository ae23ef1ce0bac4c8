/**
 * The buyer dApp in headless Chromium (playwright-core, Debian's /usr/bin/chromium) against Hardhat's in-process
 * network served over HTTP (test/cli/rpc-over-http.ts). The page is the production build (dapp/build.ts) served
 * by the same server `pouw serve --dapp` runs; its wallet is test/dapp/page.ts's injected EIP-1193 provider,
 * whose requests the test answers: it signs eth_sendTransaction with a dev key and forwards everything else to the
 * node (its knobs play a wallet on another chain and a user refusing a signature).
 *
 * The page posts a job (manifest pasted, quote shown, approve + escrow); the test checks on chain that the job
 * holds the page's manifest hash, the CID URI of its canonical bytes and the escrow; a provider accepts and
 * commits a segment from the test (chain actions) and the page shows it live; a second job is cancelled from
 * the page. Also: a malformed manifest, a rejected signature and a wrong chain each show their error in the page.
 * Screenshots go to test-artifacts/dapp/ (gitignored).
 */
import { expect } from "chai";
import { network } from "hardhat";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatEther, getAddress, maxUint256, parseEther } from "viem";
import {
  acceptJob,
  approveToken,
  commitSegment,
  deployMarket,
  devAccount,
  getJob,
  getJobCreated,
  mintTestToken,
  providerClients,
  stakeDeposit,
  testTokenAbi,
  type ChainClients,
  type Deployment,
} from "../../verifier/src/chain/index.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { canonicalManifest, manifestHash, parseManifestJson } from "../../verifier/src/ml/manifest.ts";
import { loadDetectionMatrix, packageDetectionPath } from "../../verifier/src/policy/index.ts";
import { loadDappFiles } from "../../verifier/src/serve/dapp.ts";
import { startContentServer, type ContentServer } from "../../verifier/src/serve/index.ts";
import { cidOf, LocalDirStore } from "../../verifier/src/store/index.ts";
import { segmentHashes } from "../contracts/fixture.ts";
import { serveProvider, type ServedProvider } from "../cli/rpc-over-http.ts";
import { ROOT } from "../e2e/helpers.ts";
import { dappBuildOnce } from "./build-once.ts";
import { chromiumMissing, CHROMIUM, openWalletPage, type TestWallet, type WalletPage } from "./page.ts";

const ARTIFACTS = join(ROOT, "test-artifacts/dapp");
const CID = "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m";

describe("dapp: the buyer page in headless Chromium", function () {
  this.timeout(300_000);
  let ui: WalletPage;
  let page: WalletPage["page"];
  // the wallet's knobs: the chain id it claims, and whether it refuses the next signature (test/dapp/page.ts)
  let wallet: TestWallet;
  let rpc: ServedProvider;
  let server: ContentServer;
  let d: Deployment;
  let admin: ChainClients, buyer: ChainClients, provider: ChainClients;
  const manifestText = readFileSync(join(ROOT, "examples/tiny.json"), "utf8");
  const manifest = parseManifestJson(manifestText);

  before(async function () {
    if (chromiumMissing()) {
      console.log(`    skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
      this.skip();
    }
    const conn = await network.create();
    rpc = await serveProvider(conn.provider);
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 50 });
    [admin, buyer, provider] = [mk(0), mk(1), mk(2)];
    const { gasUsed: _g, ...deployment } = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n });
    d = deployment;
    await mintTestToken(buyer, { token: d.token, to: buyer.account.address, amount: parseEther("10") });
    await mintTestToken(provider, { token: d.token, to: provider.account.address, amount: parseEther("1000") });
    await approveToken(provider, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
    await stakeDeposit(provider, { stakeVault: d.stakeVault, amount: parseEther("1000") });

    const dir = mkdtempSync(join(tmpdir(), "pouw-dapp-"));
    const { outdir } = await dappBuildOnce();
    const deploymentPath = join(dir, "deployment.json");
    writeFileSync(deploymentPath, JSON.stringify(d));
    const dapp = await loadDappFiles(outdir, { deploymentPath });
    server = await startContentServer({ store: new LocalDirStore(join(dir, "store")), dapp });

    // the wallet signs with the buyer's key (a local account: the page never sees it); test/dapp/page.ts
    ui = await openWalletPage(rpc.url, { account: 1, artifacts: ARTIFACTS });
    ({ page, wallet } = ui);
  });

  after(async () => {
    await ui?.close();
    await server?.close();
    await rpc?.close();
  });

  const url = () => `${server.url}/?poll=250`;
  const errorText = async () => (await page.locator("#error").textContent())?.trim() ?? "";
  const idle = () => page.waitForFunction(() => document.body.dataset.busy === "false");
  const shot = (name: string) => ui.shot(name);

  it("refuses a wallet on another chain, then connects once it switches", async () => {
    wallet.chainId = 5;
    await page.goto(url());
    await page.waitForFunction(() => document.body.dataset.ready === "true");
    expect(await page.textContent("#deployment-market")).to.equal(getAddress(d.jobMarket));
    await page.click("#connect");
    await idle();
    expect(await errorText()).to.equal("Wrong chain: the wallet is on chain 5, but this deployment is on chain 31337. Switch the wallet's network.");
    await shot("0-wrong-chain");
    await page.click("#switch-chain");
    await idle();
    expect(await errorText()).to.equal("");
    expect(await page.textContent("#account-address")).to.equal(buyer.account.address);
    expect(await page.textContent("#balance")).to.equal("10");
  });

  it("names the bad field of a malformed manifest (the CLI's schema)", async () => {
    await page.fill("#manifest-text", manifestText.replace('"steps": 12', '"steps": 13'));
    await page.click("#quote-button");
    await idle();
    expect(await errorText()).to.equal("manifest field training.steps: must be a multiple of training.stepsPerSegment (4)");
    expect(await page.isVisible("#quote-section")).to.equal(false);
    await page.fill("#manifest-text", "{ not json");
    await page.click("#quote-button");
    await idle();
    expect(await errorText()).to.match(/^manifest is not valid JSON: /);
  });

  it("quotes the manifest as buyer create does, and reports a rejected signature", async () => {
    await page.fill("#manifest-text", manifestText);
    await page.click("#quote-button");
    await idle();
    expect(await errorText()).to.equal("");
    // the stake `pouw buyer create` would size on Node for this deployment (no DisputeGame, no data terms)
    const expected = await jobPolicyFor(manifest, { detection: { path: "./detection.json", matrix: loadDetectionMatrix(packageDetectionPath()) }, dataShareBps: 0 });
    expect(await page.textContent("#quote-stake")).to.equal(`${formatEther(expected.policy.requiredStake)} PDT`);
    expect(await page.textContent("#quote-payment")).to.equal("0.1 PDT");
    expect(await page.textContent("#quote-audit-rate")).to.contain(`${expected.quote!.cheapestAuditRate.toPrecision(3)} (cheapest contract)`);
    expect(await page.textContent("#manifest-hash")).to.equal(manifestHash(manifest));
    await shot("1-quote");

    wallet.rejectNext = true;
    await page.click("#post");
    await idle();
    expect(await errorText()).to.equal("You rejected the request in your wallet: nothing was signed or sent.");
    expect(wallet.sent).to.deep.equal([]);
  });

  it("posts the job from the page: on chain with the page's manifest hash, URI and escrow", async () => {
    const escrowBefore = await buyer.public.readContract({ address: d.token, abi: testTokenAbi, functionName: "balanceOf", args: [d.jobMarket] });
    await page.click("#post");
    await idle();
    expect(await errorText()).to.equal("");
    expect(await page.textContent("#posted")).to.equal("job 1 created");
    expect(wallet.sent).to.have.length(2); // approve, createJob
    const job = await getJob(buyer.public, { jobMarket: d.jobMarket, jobId: 1n });
    expect(job.status).to.equal("Open");
    expect(job.buyer).to.equal(buyer.account.address);
    expect(job.manifestHash).to.equal(manifestHash(manifest));
    expect(job.payment).to.equal(BigInt(manifest.policy.paymentWei));
    const expected = await jobPolicyFor(manifest, { detection: { path: "x", matrix: loadDetectionMatrix(packageDetectionPath()) }, dataShareBps: 0 });
    expect(job.policy.requiredStake).to.equal(expected.policy.requiredStake);
    expect(job.policy.segments).to.equal(3);
    const escrowAfter = await buyer.public.readContract({ address: d.token, abi: testTokenAbi, functionName: "balanceOf", args: [d.jobMarket] });
    expect(escrowAfter - escrowBefore).to.equal(job.payment);
    // the page's CID (cidOf on the JavaScript sha256) equals the store's (node:crypto) for the canonical bytes
    const created = await getJobCreated(buyer.public, { jobMarket: d.jobMarket, jobId: 1n, fromBlock: BigInt(d.startBlock) });
    const cid = cidOf(new TextEncoder().encode(canonicalManifest(manifest)));
    expect(created.manifestUri).to.equal(`cid:${cid}`);
    // this server takes no uploads: the page says so and offers the bytes under the file name the store holds them by
    expect(await page.textContent("#manifest-unpublished")).to.match(/^Not published: this server takes no uploads \(start it with pouw serve --upload\)\./);
    expect(await page.getAttribute("#manifest-link", "download")).to.equal(cid);
    await page.waitForFunction(() => document.getElementById("job-status")?.textContent === "Open");
    expect(await page.isVisible("#cancel")).to.equal(true);
    await shot("2-posted");
  });

  it("follows the job live: the provider's accept and commit show up", async () => {
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId: 1n });
    await page.waitForFunction(() => document.getElementById("job-status")?.textContent === "Active");
    expect(await page.textContent("#job-provider")).to.equal(getAddress(provider.account.address));
    expect(await page.isVisible("#cancel")).to.equal(false);
    await commitSegment(provider, { jobMarket: d.jobMarket, jobId: 1n, segment: 0, stateHashes: segmentHashes(1n, 0, 4).hashes, lossE6: 2_300_000n, checkpointCid: CID });
    await page.waitForFunction(() => document.getElementById("job-segments")?.textContent === "1/3");
    expect(await page.textContent("#job-receipts")).to.equal("none yet");
    await shot("3-live");
  });

  it("cancels an Open job from the page; the escrow becomes the buyer's credit and is claimed", async () => {
    await page.click("#post");
    await idle();
    expect(await page.textContent("#posted")).to.equal("job 2 created");
    await page.waitForFunction(() => document.getElementById("job-status")?.textContent === "Open");
    await page.click("#cancel");
    await idle();
    expect(await errorText()).to.equal("");
    expect((await getJob(buyer.public, { jobMarket: d.jobMarket, jobId: 2n })).status).to.equal("Cancelled");
    await page.waitForFunction(() => document.getElementById("job-status")?.textContent === "Cancelled");
    expect(await page.textContent("#credit")).to.equal("0.1");
    await shot("4-cancelled");
    await page.click("#claim");
    await idle();
    expect(await errorText()).to.equal("");
    expect(await page.textContent("#credit")).to.equal("0");
    expect(await page.textContent("#balance")).to.equal("9.9");
  });
});
