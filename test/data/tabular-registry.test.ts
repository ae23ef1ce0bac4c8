/**
 * A data set by content id in DataRegistry (in-process network, real JobMarket + DataRegistry): the contributor
 * registers a tabular-mlp manifest's corpus by its CID (registerManifestCorpora, the `pouw corpus register` path), and a
 * buyer's dataTermsFor attaches it with the manifest's declared tokens (the data set's rows).
 */
import { expect } from "chai";
import { network } from "hardhat";
import { getAddress, parseEther } from "viem";
import { deployMarket, devAccount, providerClients } from "../../verifier/src/chain/index.ts";
import { registerManifestCorpora } from "../../verifier/src/market/contributor.ts";
import { dataTermsFor, DEFAULT_DATA_SHARE_BPS } from "../../verifier/src/market/data-terms.ts";
import { parseTabular, tabularContent } from "../../verifier/src/data/index.ts";
import { parseManifest } from "../../verifier/src/ml/index.ts";

describe("data sets by content id: DataRegistry", function () {
  this.timeout(120_000);

  it("registers the corpus by its CID and attaches it to a job's data terms with its declared rows", async () => {
    const data = parseTabular(new TextEncoder().encode("a,b,label\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n"), { format: "csv", split: "last:1" });
    const { cid } = tabularContent(data);
    const payout = getAddress("0x00000000000000000000000000000000000000d1");
    const manifest = parseManifest({
      version: 2,
      kind: "pouw/training-job",
      model: { arch: "tabular-mlp", hidden: 4, inputs: 2, classes: 2 },
      init: { seed: 1 },
      corpora: [{ name: "buyer-rows", contentId: cid, licence: "CC0-1.0", declaredTokens: 4, payoutAddress: payout }],
      data: { seed: 1 },
      optimizer: { name: "sgd", lr: 0.1 },
      training: { batchSize: 2, steps: 2, stepsPerSegment: 1 },
      numerics: "bitwise",
      policy: { auditRate: 0.5, minTier: 4, challengeWindowSeconds: 60, providerStakeWei: "1", paymentWei: "1" },
    });
    const conn = await network.create();
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
    const [admin, buyer, contributor] = [mk(0), mk(1), mk(3)];
    const d = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n });
    const [reg] = await registerManifestCorpora(contributor, d.dataRegistry!, manifest);
    expect(reg).to.deep.include({ name: "buyer-rows", contentId: cid, corpusId: 1n, status: "registered", payout, owner: contributor.account.address });
    const t = await dataTermsFor(buyer.public, d, manifest);
    expect(t.attached, t.attached ? "" : t.reason).to.equal(true);
    if (t.attached) expect(t.terms).to.deep.equal({ minTier: 4, dataShareBps: DEFAULT_DATA_SHARE_BPS, corpora: [{ corpusId: 1n, tokens: 4n }] });
  });
});
