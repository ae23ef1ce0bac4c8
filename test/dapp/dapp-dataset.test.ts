/**
 * The page publishes a buyer's small dataset, in headless Chromium against Hardhat's in-process network served over
 * HTTP, the page served by `pouw serve --upload`'s server (a 4,096-byte upload limit here): a CSV picked in the page
 * is parsed into the canonical pouw-tabular-1 bytes `pouw data add` makes, PUT to the server (which checks them
 * against their CID), and its CID written into the manifest's corpus; the job posted from the page names that CID in
 * the manifest it escrows (read back from the chain and the store). A CSV whose canonical bytes are over the server's
 * limit is refused with a message naming the limit, and nothing of it lands in the store or the manifest.
 */
import { expect } from "chai";
import { network } from "hardhat";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEther } from "viem";
import { deployMarket, devAccount, getJobCreated, mintTestToken, providerClients, type Deployment } from "../../verifier/src/chain/index.ts";
import { parseTabular, tabularContent } from "../../verifier/src/data/tabular.ts";
import { parseManifestJson } from "../../verifier/src/ml/manifest.ts";
import { loadDappFiles } from "../../verifier/src/serve/dapp.ts";
import { startContentServer, type ContentServer } from "../../verifier/src/serve/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { serveProvider, type ServedProvider } from "../cli/rpc-over-http.ts";
import { ROOT } from "../e2e/helpers.ts";
import { dappBuildOnce } from "./build-once.ts";
import { chromiumMissing, CHROMIUM, openWalletPage, type WalletPage } from "./page.ts";

const ARTIFACTS = join(ROOT, "test-artifacts/dapp");
const UPLOAD_MAX = 4096;
/** A placeholder CID the page must replace (the CID of no dataset here). */
const PLACEHOLDER = "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m";

/** `rows` rows of 4 features and a 3-class label, deterministic. */
function csv(rows: number): string {
  const lines = ["a,b,c,d,label"];
  for (let i = 0; i < rows; i++) {
    const x = [0, 1, 2, 3].map((j) => (((i * 37 + j * 11) % 19) - 9) / 10);
    lines.push(`${x.join(",")},${x[0]! + x[1]! > 0 ? (x[2]! > 0 ? "hi" : "mid") : "lo"}`);
  }
  return lines.join("\n") + "\n";
}

describe("dapp: the page publishes a small dataset and names its CID in the posted manifest", function () {
  this.timeout(300_000);
  let rpc: ServedProvider;
  let server: ContentServer;
  let ui: WalletPage;
  let d: Deployment;
  let conn: Awaited<ReturnType<typeof network.create>>;
  const dir = mkdtempSync(join(tmpdir(), "pouw-dapp-data-"));
  const store = new LocalDirStore(join(dir, "store"));
  const tiny = JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8")) as Record<string, unknown>;
  // a tabular-mlp manifest whose corpus is named by content id; inputs and classes deliberately wrong: the page fixes them
  const manifestText = JSON.stringify(
    {
      ...tiny,
      model: { arch: "tabular-mlp", hidden: 8, inputs: 9, classes: 9 },
      corpora: [{ name: "buyer-rows", contentId: PLACEHOLDER, licence: "CC0-1.0", declaredTokens: 1, payoutAddress: "0x00000000000000000000000000000000000000d1" }],
      data: { seed: 4 },
      training: { batchSize: 8, steps: 12, stepsPerSegment: 4 },
    },
    null,
    2,
  );
  const small = csv(60);
  const smallData = tabularContent(parseTabular(new TextEncoder().encode(small), { format: "csv" }));
  const large = csv(600);
  const largeData = tabularContent(parseTabular(new TextEncoder().encode(large), { format: "csv" }));
  const text = async (sel: string) => (await ui.page.textContent(sel))?.trim() ?? "";
  const idle = () => ui.page.waitForFunction(() => document.body.dataset.busy === "false");
  const pick = (name: string, body: string) => ui.page.setInputFiles("#publish-file", { name, mimeType: "text/csv", buffer: Buffer.from(body) });

  before(async function () {
    if (chromiumMissing()) {
      console.log(`    skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);
      this.skip();
    }
    // the sizes the test relies on: the small set fits the server's limit, the large one does not
    expect(smallData.bytes.length).to.be.below(UPLOAD_MAX);
    expect(largeData.bytes.length).to.be.above(UPLOAD_MAX);
    conn = await network.create();
    rpc = await serveProvider(conn.provider);
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 50 });
    const [admin, buyer] = [mk(0), mk(1)];
    const { gasUsed: _g, ...deployment } = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n });
    d = deployment;
    await mintTestToken(buyer, { token: d.token, to: buyer.account.address, amount: parseEther("10") });
    const { outdir } = await dappBuildOnce();
    const deploymentPath = join(dir, "deployment.json");
    writeFileSync(deploymentPath, JSON.stringify(d));
    const dapp = await loadDappFiles(outdir, { deploymentPath });
    server = await startContentServer({ store, dapp, upload: { store, maxBytes: UPLOAD_MAX } });
    ui = await openWalletPage(rpc.url, { account: 1, artifacts: ARTIFACTS });
    await ui.page.goto(`${server.url}/?poll=250`);
    await ui.page.waitForFunction(() => document.body.dataset.ready === "true");
    await ui.page.click("#connect");
    await idle();
    expect(await text("#error")).to.equal("");
  });

  after(async () => {
    await ui?.close();
    await server?.close();
    await rpc?.close();
  });

  it("refuses a dataset over the server's upload limit with a message naming it", async () => {
    await ui.page.fill("#manifest-text", manifestText);
    await pick("too-big.csv", large);
    await ui.page.click("#publish");
    await idle();
    expect(await text("#dataset-unpublished")).to.equal(
      `Not published: the dataset is too large for this server: upload of ${largeData.bytes.length} bytes is over this server's limit of ${UPLOAD_MAX} bytes (pouw serve --upload-max-bytes raises it).`,
    );
    expect(await store.has(largeData.cid)).to.equal(false);
    await ui.shot("dataset-0-too-large");
  });

  it("publishes a CSV as its canonical bytes and the posted manifest names their CID", async () => {
    await ui.page.fill("#manifest-text", manifestText);
    await pick("rows.csv", small);
    await ui.page.click("#publish");
    await idle();
    expect(await text("#error")).to.equal("");
    expect(await text("#dataset-published")).to.equal("published");
    expect(await text("#dataset-cid")).to.equal(smallData.cid);
    expect(await text("#dataset-in-manifest")).to.equal("The manifest above now names it");
    // the server stored exactly the canonical bytes `pouw data add` makes of this CSV
    expect(Buffer.from(await store.get(smallData.cid)).equals(Buffer.from(smallData.bytes))).to.equal(true);
    const onPage = parseManifestJson(await ui.page.inputValue("#manifest-text"));
    expect(onPage.corpora[0]!.contentId).to.equal(smallData.cid);
    expect(onPage.corpora[0]!.declaredTokens).to.equal(60);
    expect(onPage.model).to.deep.include({ arch: "tabular-mlp", inputs: 4, classes: 3 });

    await ui.page.click("#quote-button");
    await idle();
    expect(await text("#error")).to.equal("");
    await ui.page.click("#post");
    await idle();
    expect(await text("#error")).to.equal("");
    expect(await text("#posted")).to.equal("job 1 created");
    await ui.shot("dataset-1-posted");
    // the escrowed manifest (by its CID on chain, its bytes published to the store) names the dataset's CID
    const reader = providerClients(conn.provider, 31337, { account: devAccount(1) }).public;
    const created = await getJobCreated(reader, { jobMarket: d.jobMarket, jobId: 1n, fromBlock: BigInt(d.startBlock) });
    const posted = parseManifestJson(new TextDecoder().decode(await store.get(created.manifestUri.slice(4))));
    expect(posted.corpora[0]!.contentId).to.equal(smallData.cid);
  });
});
