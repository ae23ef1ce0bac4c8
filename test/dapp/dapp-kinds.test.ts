/**
 * An evaluation job from the buyer page (dapp/src/kinds.ts) in headless Chromium against Hardhat's in-process network:
 * the page quotes an evaluate manifest per example (the stake kinds/policy.ts gives on Node) and posts it; a provider
 * accepts and commits every example's leaf from the test (kinds/provider.ts); once Finalized and recorded on
 * KindRecords, the page shows the score KindRecords holds, equal to the harness's own mean loss and correct predictions.
 */
import { expect } from "chai";
import { network } from "hardhat";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatEther, maxUint256, parseEther } from "viem";
import { acceptJob, approveToken, deployKindRecords, deployMarket, devAccount, finalize, getJob, getSegmentCommits, mintTestToken, providerClients, recordKindResult, stakeDeposit, type ChainClients, type Deployment } from "../../verifier/src/chain/index.ts";
import { evaluateManifestHash, parseEvaluateManifest } from "../../verifier/src/evaluate/index.ts";
import { commitKindSegments, endStateOf, evaluateJob, kindSegments, statesOf } from "../../verifier/src/kinds/index.ts";
import { kindPolicy } from "../../verifier/src/kinds/policy.ts";
import { createRun, offlineSalt, parseManifest, parseStrategy, train } from "../../verifier/src/ml/index.ts";
import { loadDappFiles } from "../../verifier/src/serve/dapp.ts";
import { startContentServer, type ContentServer } from "../../verifier/src/serve/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { serveProvider, type ServedProvider } from "../cli/rpc-over-http.ts";
import { ROOT } from "../e2e/helpers.ts";
import { dappBuildOnce } from "./build-once.ts";
import { chromiumMissing, CHROMIUM, openWalletPage, type WalletPage } from "./page.ts";

const ARTIFACTS = join(ROOT, "test-artifacts/dapp");

describe("dapp: an evaluation job and its score from KindRecords", function () {
  this.timeout(300_000);
  let ui: WalletPage;
  let page: WalletPage["page"];
  let rpc: ServedProvider;
  let server: ContentServer;
  let d: Deployment & { kindRecords: `0x${string}` };
  let buyer: ChainClients, provider: ChainClients;
  let increaseTime: (s: number) => Promise<void>;
  let dir: string;
  // examples/evaluate-tiny.json with the payment the page escrows
  const raw = { ...JSON.parse(readFileSync(join(ROOT, "examples/evaluate-tiny.json"), "utf8")), policy: { paymentWei: "1000000000000000000" } };
  const manifest = parseEvaluateManifest(raw);

  before(async function () {
    if (chromiumMissing()) {
      console.log(`    skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
      this.skip();
    }
    const conn = await network.create();
    increaseTime = (s) => conn.networkHelpers.time.increase(s).then(() => undefined);
    rpc = await serveProvider(conn.provider);
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 50 });
    const admin = mk(0);
    [buyer, provider] = [mk(1), mk(2)];
    const { gasUsed: _g, ...deployment } = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n });
    const { kindRecords } = await deployKindRecords(admin, { jobMarket: deployment.jobMarket, minStake: 10_000_000_000n }); // below the tiny test payment's quoted lock (3.2e10 wei)
    d = { ...deployment, kindRecords };
    await mintTestToken(buyer, { token: d.token, to: buyer.account.address, amount: parseEther("10") });
    await mintTestToken(provider, { token: d.token, to: provider.account.address, amount: parseEther("1000") });
    await approveToken(provider, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
    await stakeDeposit(provider, { stakeVault: d.stakeVault, amount: parseEther("1000") });

    dir = mkdtempSync(join(tmpdir(), "pouw-dapp-kinds-"));
    const { outdir } = await dappBuildOnce();
    const deploymentPath = join(dir, "deployment.json");
    writeFileSync(deploymentPath, JSON.stringify(d));
    server = await startContentServer({ store: new LocalDirStore(join(dir, "store")), dapp: await loadDappFiles(outdir, { deploymentPath }) });
    ui = await openWalletPage(rpc.url, { account: 1, artifacts: ARTIFACTS });
    ({ page } = ui);
  });

  after(async () => {
    await ui?.close();
    await server?.close();
    await rpc?.close();
  });

  const errorText = async () => (await page.locator("#error").textContent())?.trim() ?? "";
  const idle = () => page.waitForFunction(() => document.body.dataset.busy === "false");

  it("quotes an evaluate manifest per example and posts it; the finalized job's recorded score shows in the page", async () => {
    await page.goto(`${server.url}/?poll=250`);
    await page.waitForFunction(() => document.body.dataset.ready === "true");
    await page.click("#connect");
    await idle();
    await page.fill("#manifest-text", JSON.stringify(raw, null, 2));
    await page.click("#quote-button");
    await idle();
    expect(await errorText()).to.equal("");
    // the stake `pouw buyer create` gives on Node (this deployment has no DisputeGame: no panel floor)
    const expected = kindPolicy({ kind: "evaluate", manifest }, { payment: parseEther("1") });
    expect(await page.textContent("#quote-stake")).to.equal(`${formatEther(expected.policy.requiredStake)} PDT`);
    expect(await page.textContent("#quote-audit-rate")).to.match(/^0\.5 per example/);
    expect(await page.textContent("#manifest-hash")).to.equal(evaluateManifestHash(manifest));
    await page.click("#post");
    await idle();
    expect(await errorText()).to.equal("");
    expect(await page.textContent("#posted")).to.equal("job 1 created");
    const job = await getJob(buyer.public, { jobMarket: d.jobMarket, jobId: 1n });
    expect([job.manifestHash, job.payment, job.policy.segments, job.policy.stepsPerSegment]).to.deep.equal([evaluateManifestHash(manifest), parseEther("1"), 4, 50]);

    // the provider: the tiny job's weights (the manifest's weightsCid), every example's leaf committed
    const tiny = parseManifest(JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8")));
    await train(await createRun(tiny, { jobId: 0n, salt: offlineSalt(0n) }), { outDir: join(dir, "tiny"), strategy: parseStrategy("honest"), evaluate: false });
    const store = new LocalDirStore(join(dir, "provider-store"));
    expect(await store.put(new Uint8Array(readFileSync(join(dir, "tiny", "final.safetensors"))))).to.equal(manifest.weightsCid);
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId: 1n });
    const ej = await evaluateJob(manifest, await store.get(manifest.weightsCid), { jobId: 1n, examplesPerSegment: 50 });
    const results = await ej.results(0, 200);
    await commitKindSegments(provider, { jobMarket: d.jobMarket, jobId: 1n, store, segments: kindSegments(ej, results) });
    await increaseTime(86_401);
    await finalize(buyer, { jobMarket: d.jobMarket, jobId: 1n });
    const states = statesOf(results);
    const commits = await getSegmentCommits(buyer.public, { jobMarket: d.jobMarket, jobId: 1n, fromBlock: 0n });
    await recordKindResult(provider, { kindRecords: d.kindRecords, jobId: 1n, traceRoot: commits[3]!.traceRoot, end: endStateOf(ej, states[200]!), modelCid: manifest.weightsCid, resultCid: manifest.weightsCid });

    // independent expectation: the harness's own per-example results, summed here
    const meanLoss = results.reduce((a, r) => a + Number(r.score), 0) / 200 / 1e6;
    const hits = results.reduce((a, r) => a + r.hits, 0n);
    await page.waitForSelector("#job-score", { timeout: 60_000 });
    expect(await page.textContent("#job-score")).to.equal(`mean loss ${meanLoss.toFixed(4)}, ${hits} correct predictions over 200 examples`);
    await ui.shot("kinds-1-score");
  });
});
