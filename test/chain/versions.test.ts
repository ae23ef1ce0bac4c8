/**
 * The start-up version check (chain/checkVersions.ts): a fresh deployment of these sources passes and reports every
 * contract's `pouw-<Contract>-1`; a deployment whose DisputeGame reports another version (contracts/mocks/VersionMock)
 * or whose JobMarket address holds a contract without VERSION is refused with DeploymentVersionError naming the
 * contract, the address, the expected and the found version; and a CLI command against such a deployment file exits
 * with that one line.
 */
import { expect } from "chai";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { getAddress, parseEther, type Address } from "viem";
import {
  checkDeploymentVersions,
  contractVersions,
  deployDisputeGame,
  deployMarket,
  DeploymentVersionError,
  devAccount,
  providerClients,
  writeDeployment,
  type ChainClients,
  type Deployment,
} from "../../verifier/src/chain/index.ts";
import { runPouw } from "../cli/in-process.ts";
import { serveProvider, type ServedProvider } from "../cli/rpc-over-http.ts";

const CONTRACTS = ["JobMarket", "JobRecords", "StakeVault", "AuditorRegistry", "DisputeGame", "ProviderRegistry", "DataRegistry", "PeerDirectory", "DisputeSettlement", "JobMarketExtension"] as const;

describe("chain: deployment version check at start-up", function () {
  this.timeout(120_000);
  let admin: ChainClients;
  let d: Deployment;
  let conn: Awaited<ReturnType<typeof network.create>>;
  let mock: Address;

  before(async () => {
    conn = await network.create();
    admin = providerClients(conn.provider, 31337, { account: devAccount(0), pollingIntervalMs: 50 });
    const { gasUsed: _gas, ...market } = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 30n * 86_400n });
    const { disputeGame } = await deployDisputeGame(admin, { deployment: market });
    d = { ...market, disputeGame };
    mock = getAddress((await conn.viem.deployContract("VersionMock", ["pouw-DisputeGame-0"])).address);
  });

  it("the expected versions are pouw-<Contract>-1, one per deployed contract", () => {
    // StateOpenings and KindRecords are deployed beside JobMarket on demand (deployStateOpenings, deployKindRecords), not
    // in a market's deployment file
    expect(Object.keys(contractVersions).sort()).to.deep.equal([...CONTRACTS, "StateOpenings", "KindRecords"].sort());
    for (const c of [...CONTRACTS, "StateOpenings" as const, "KindRecords" as const]) expect(contractVersions[c], c).to.equal(`pouw-${c}-1`);
  });

  it("passes a fresh deployment and reads every contract's VERSION, DisputeSettlement through DisputeGame.settlement(), JobMarketExtension through JobMarket.extension()", async () => {
    const checked = await checkDeploymentVersions(admin.public, { deployment: d });
    expect(checked.map((c) => `${c.contract} ${c.version}`).sort()).to.deep.equal(CONTRACTS.map((c) => `${c} pouw-${c}-1`).sort());
    expect(checked.find((c) => c.contract === "DisputeGame")!.address).to.equal(d.disputeGame);
  });

  it("refuses a DisputeGame that reports another version, naming contract, address, expected and found", async () => {
    const err = await checkDeploymentVersions(admin.public, { deployment: { ...d, disputeGame: mock } }).then(
      () => expect.fail("a mismatched DisputeGame passed"),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(DeploymentVersionError);
    const v = err as DeploymentVersionError;
    expect([v.contract, v.address, v.expected, v.found]).to.deep.equal(["DisputeGame", mock, "pouw-DisputeGame-1", "pouw-DisputeGame-0"]);
    expect(v.message).to.contain("DisputeGame").and.to.contain("pouw-DisputeGame-1").and.to.contain("pouw-DisputeGame-0");
  });

  it("refuses a contract without VERSION (found: null), e.g. the token where JobMarket should be", async () => {
    const err = await checkDeploymentVersions(admin.public, { deployment: { ...d, jobMarket: d.token } }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DeploymentVersionError);
    const v = err as DeploymentVersionError;
    expect([v.contract, v.expected, v.found, v.hasCode]).to.deep.equal(["JobMarket", "pouw-JobMarket-1", null, true]);
    expect(v.message).to.contain("reports version none");
  });

  it("names the deployment file's field and the chain when no contract is deployed at an address", async () => {
    const dead = getAddress("0x000000000000000000000000000000000000dead");
    const err = await checkDeploymentVersions(admin.public, { deployment: { ...d, stakeVault: dead } }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(DeploymentVersionError);
    const v = err as DeploymentVersionError;
    expect([v.contract, v.address, v.found, v.hasCode]).to.deep.equal(["StakeVault", dead, null, false]);
    expect(v.message).to.equal(`no contract code at stakeVault ${dead} on chain 31337: the deployment file is stale (redeploy) or --rpc points at another chain`);
  });

  describe("CLI", () => {
    let rpc: ServedProvider;
    before(async () => {
      rpc = await serveProvider(conn.provider);
    });
    after(async () => {
      await rpc?.close();
    });

    it("a command against a deployment whose DisputeGame reports another version exits with the mismatch in one line", async () => {
      const dir = mkdtempSync(join(tmpdir(), "pouw-versions-"));
      await writeDeployment(join(dir, "deployment.json"), { ...d, disputeGame: mock });
      const r = await runPouw(["buyer", "status", "1", "--rpc", rpc.url, "--state-dir", dir]);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr.trim().split("\n"), r.stderr).to.have.length(1);
      expect(r.stderr).to.contain(`DisputeGame at ${mock}`).and.to.contain('"pouw-DisputeGame-0"').and.to.contain('"pouw-DisputeGame-1"');
      const ok = mkdtempSync(join(tmpdir(), "pouw-versions-"));
      await writeDeployment(join(ok, "deployment.json"), d);
      const fine = await runPouw(["buyer", "status", "1", "--rpc", rpc.url, "--state-dir", ok]);
      expect(fine.stderr).to.not.contain("reports version");
    });
  });
});
