import { expect } from "chai";
import { network } from "hardhat";
import { keccak256, maxUint256, parseEther, toHex } from "viem";
import { readFile } from "node:fs/promises";
import {
  acceptJob,
  approveToken,
  commitSegment,
  ContractRevertError,
  createJob,
  deployMarket,
  devAccount,
  finalize,
  getJob,
  mintTestToken,
  providerClients,
  stakeDeposit,
  claimPayment,
  cancelJob,
  type ChainClients,
  type JobPolicy,
} from "../../verifier/src/chain/index.ts";
import { generatedModules } from "../../scripts/gen-abi.ts";
import { segmentHashes } from "../contracts/fixture.ts";

const leaves = (jobId: bigint, segment: number) => segmentHashes(jobId, segment, 4).hashes;

const policy: JobPolicy = {
  segments: 2,
  stepsPerSegment: 4,
  requiredStake: parseEther("5"),
  segmentTimeout: 3600,
  challengeWindow: 600,
  challengerBps: 5000,
  buyerBps: 3000,
  burnBps: 2000,
  timeoutSlashBps: 1000,
};
const root = (s: string) => keccak256(toHex(s));
const CID = "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m";

async function expectRevert(p: Promise<unknown>, errorName: string): Promise<ContractRevertError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(ContractRevertError);
    expect((err as ContractRevertError).errorName).to.equal(errorName);
    return err as ContractRevertError;
  }
  expect.fail(`expected ${errorName}`);
}

describe("chain: generated ABI modules", () => {
  it("match the compiled artifacts (run `npm run abi` when this fails)", async () => {
    for (const [path, text] of await generatedModules()) {
      expect(await readFile(path, "utf8"), `${path} is stale: run npm run abi`).to.equal(text);
    }
  });
});

describe("chain: actions on the in-process network", () => {
  let admin: ChainClients, buyer: ChainClients, provider: ChainClients;
  let d: Awaited<ReturnType<typeof deployMarket>>;
  let time: { increase: (s: number) => Promise<unknown> };

  before(async () => {
    const conn = await network.create();
    time = conn.networkHelpers.time;
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 50 });
    [admin, buyer, provider] = [mk(0), mk(1), mk(2)];
    d = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n }); // exit delay >= the 1-day attestation request window
    for (const c of [buyer, provider]) {
      await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("1000") });
      for (const spender of [d.jobMarket, d.stakeVault]) await approveToken(c, { token: d.token, spender, amount: maxUint256 });
    }
    await stakeDeposit(provider, { stakeVault: d.stakeVault, amount: parseEther("10") });
  });

  it("runs a job from createJob to claim and reads it back", async () => {
    const { jobId, gasUsed } = await createJob(buyer, { jobMarket: d.jobMarket, manifestHash: root("m"), manifestUri: `cid:${CID}`, token: d.token, payment: parseEther("1"), policy });
    expect(gasUsed > 0n).to.equal(true);
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId });
    for (const segment of [0, 1]) {
      await commitSegment(provider, { jobMarket: d.jobMarket, jobId, segment, stateHashes: leaves(jobId, segment), lossE6: 1n, checkpointCid: CID });
    }
    expect((await getJob(buyer.public, { jobMarket: d.jobMarket, jobId })).status).to.equal("Committed");
    await expectRevert(finalize(buyer, { jobMarket: d.jobMarket, jobId }), "JobMarketChallengeWindowOpen");
    await time.increase(601);
    await finalize(buyer, { jobMarket: d.jobMarket, jobId });
    const job = await getJob(buyer.public, { jobMarket: d.jobMarket, jobId });
    expect(job.status).to.equal("Finalized");
    await claimPayment(provider, { jobMarket: d.jobMarket, token: d.token });
  });

  it("decodes reverts by custom error name with their arguments", async () => {
    const { jobId } = await createJob(buyer, { jobMarket: d.jobMarket, manifestHash: root("m2"), manifestUri: "x", token: d.token, payment: parseEther("1"), policy });
    const e = await expectRevert(acceptJob(provider, { jobMarket: d.jobMarket, jobId: 999n }), "JobMarketUnknownJob");
    expect(e.args).to.deep.equal([999n]);
    await expectRevert(cancelJob(provider, { jobMarket: d.jobMarket, jobId }), "JobMarketNotBuyer");
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId });
    await expectRevert(acceptJob(provider, { jobMarket: d.jobMarket, jobId }), "JobMarketWrongStatus");
    await expectRevert(
      commitSegment(provider, { jobMarket: d.jobMarket, jobId, segment: 1, stateHashes: leaves(jobId, 1), lossE6: 0n, checkpointCid: CID }),
      "JobMarketSegmentOutOfOrder",
    );
    // a revert bubbling up from the StakeVault decodes too
    const { jobId: big } = await createJob(buyer, { jobMarket: d.jobMarket, manifestHash: root("m3"), manifestUri: "x", token: d.token, payment: parseEther("1"), policy: { ...policy, requiredStake: parseEther("500") } });
    await expectRevert(acceptJob(provider, { jobMarket: d.jobMarket, jobId: big }), "StakeVaultInsufficientStake");
  });
});
