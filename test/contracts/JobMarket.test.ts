import { expect } from "chai";
import { encodeAbiParameters, getAddress, keccak256, parseAbi, parseEther, toHex, zeroAddress, zeroHash, type Address } from "viem";
import {
  CHECKPOINT_CID,
  createConnection,
  DAY,
  expectNoTokenMovement,
  HOUR,
  MANIFEST_HASH,
  MANIFEST_URI,
  policy,
  segmentHashes,
} from "./fixture.ts";

const { viem, networkHelpers, deploy } = await createConnection();
const { time, loadFixture } = networkHelpers;

// JobStatus enum values (IJobMarket.JobStatus).
const Status = { None: 0, Open: 1, Active: 2, Committed: 3, Finalized: 4, Cancelled: 5, Refunded: 6, TimedOut: 7 } as const;
const PAYMENT = parseEther("50");

async function created() {
  const f = await deploy();
  await f.market.write.createJob([MANIFEST_HASH, MANIFEST_URI, f.token.address, PAYMENT, policy()], {
    account: f.buyer.account,
  });
  return { ...f, jobId: 1n };
}

async function accepted() {
  const f = await created();
  await f.market.write.acceptJob([f.jobId], { account: f.provider.account });
  return f;
}

async function committed() {
  const f = await accepted();
  for (let s = 0; s < 3; s++) {
    const { hashes, root, end } = segmentHashes(f.jobId, s);
    await f.market.write.commitSegment([f.jobId, BigInt(s), hashes, 1_234_567n, CHECKPOINT_CID], {
      account: f.provider.account,
    });
  }
  return f;
}

type F = Awaited<ReturnType<typeof deploy>>;
function holders(f: F): Address[] {
  return [
    f.market.address,
    f.vault.address,
    f.registry.address,
    f.buyer.account.address,
    f.provider.account.address,
    f.provider2.account.address,
    f.challenger.account.address,
    f.stranger.account.address,
    "0x000000000000000000000000000000000000dEaD",
  ];
}

describe("JobMarket", () => {
  describe("happy path", () => {
    it("escrows the payment on createJob and emits JobCreated", async () => {
      const f = await loadFixture(deploy);
      const tx = f.market.write.createJob([MANIFEST_HASH, MANIFEST_URI, f.token.address, PAYMENT, policy()], {
        account: f.buyer.account,
      });
      await viem.assertions.emit(tx, f.market, "JobCreated");
      expect(await f.token.read.balanceOf([f.market.address])).to.equal(PAYMENT);
      const job = await f.market.read.getJob([1n]);
      expect(job.status).to.equal(Status.Open);
      expect(job.buyer.toLowerCase()).to.equal(f.buyer.account.address.toLowerCase());
      expect(job.manifestHash).to.equal(MANIFEST_HASH);
      expect(job.policy).to.deep.equal(policy());
      expect(await f.market.read.jobCount()).to.equal(1n);
    });

    it("runs create, accept, commit every segment, window, finalize, claims", async () => {
      const f = await loadFixture(accepted);
      const stake = policy().requiredStake;
      expect(await f.vault.read.lockedFor([f.provider.account.address, f.jobId])).to.equal(stake);
      for (let s = 0; s < 3; s++) {
        const { hashes, root, end } = segmentHashes(f.jobId, s);
        const tx = f.market.write.commitSegment([f.jobId, BigInt(s), hashes, 1_000n, CHECKPOINT_CID], {
          account: f.provider.account,
        });
        await viem.assertions.emitWithArgs(tx, f.market, "SegmentCommitted", [f.jobId, BigInt(s), root, end, 1_000n, CHECKPOINT_CID]);
        expect(await f.market.read.verifySegment([f.jobId, BigInt(s), root, end])).to.equal(true);
        expect(await f.market.read.verifySegment([f.jobId, BigInt(s), end, root])).to.equal(false);
      }
      const job = await f.market.read.getJob([f.jobId]);
      expect(job.status).to.equal(Status.Committed);
      expect(job.nextSegment).to.equal(3);
      await time.increase(DAY + 1n);
      await viem.assertions.emitWithArgs(f.market.write.finalize([f.jobId], { account: f.stranger.account }), f.market, "JobFinalized", [
        f.jobId,
        f.provider.account.address,
        PAYMENT,
        0n,
      ]);
      expect((await f.market.read.getJob([f.jobId])).status).to.equal(Status.Finalized);
      expect(await f.vault.read.lockedFor([f.provider.account.address, f.jobId])).to.equal(0n);
      expect((await f.vault.read.accountOf([f.provider.account.address])).free).to.equal(parseEther("100"));
      const before = await f.token.read.balanceOf([f.provider.account.address]);
      await f.market.write.claim([f.token.address], { account: f.provider.account });
      expect((await f.token.read.balanceOf([f.provider.account.address])) - before).to.equal(PAYMENT);
      expect(await f.token.read.balanceOf([f.market.address])).to.equal(0n);
    });

    it("cancels an Open job and refunds the escrow as a credit", async () => {
      const f = await loadFixture(created);
      await viem.assertions.emitWithArgs(f.market.write.cancelJob([f.jobId], { account: f.buyer.account }), f.market, "JobCancelled", [
        f.jobId,
        PAYMENT,
      ]);
      expect(await f.market.read.creditOf([f.buyer.account.address, f.token.address])).to.equal(PAYMENT);
      await f.market.write.claim([f.token.address], { account: f.buyer.account });
      expect(await f.token.read.balanceOf([f.market.address])).to.equal(0n);
    });

    it("reports a timeout: holds the committed tenure disputable for a window with its whole lock, then slashes the timeout share to the buyer and re-opens for a new provider", async () => {
      const f = await loadFixture(accepted);
      const { hashes } = segmentHashes(f.jobId, 0);
      await f.market.write.commitSegment([f.jobId, 0n, hashes, 1n, CHECKPOINT_CID], { account: f.provider.account });
      await time.increase(HOUR + 1n);
      const slashed = (policy().requiredStake * 1_000n) / 10_000n;
      const tx = f.market.write.reportTimeout([f.jobId], { account: f.stranger.account });
      await viem.assertions.emit(tx, f.market, "JobTimedOut");
      const timedOut = await f.market.read.getJob([f.jobId]);
      const reportedAt = BigInt(await time.latest());
      expect(timedOut.status).to.equal(Status.TimedOut);
      expect(timedOut.provider.toLowerCase()).to.equal(f.provider.account.address.toLowerCase());
      expect(BigInt(timedOut.deadline)).to.equal(reportedAt + DAY);
      // the whole lock stays behind the disputable segment: the timeout slash waits for its window
      expect(await f.vault.read.creditOf([f.buyer.account.address])).to.equal(0n);
      expect(await f.vault.read.lockedFor([f.provider.account.address, f.jobId])).to.equal(policy().requiredStake);
      // nobody takes the job during the window, and it cannot be re-opened before it ends
      await viem.assertions.revertWithCustomError(f.market.write.acceptJob([f.jobId], { account: f.provider2.account }), f.market, "JobMarketWrongStatus");
      await viem.assertions.revertWithCustomError(f.market.write.reopenJob([f.jobId], { account: f.stranger.account }), f.market, "JobMarketChallengeWindowOpen");
      await time.increase(DAY);
      await viem.assertions.emitWithArgs(f.market.write.reopenJob([f.jobId], { account: f.stranger.account }), f.market, "JobReopened", [
        f.jobId,
        getAddress(f.provider.account.address),
        1n,
      ]);
      expect(await f.vault.read.creditOf([f.buyer.account.address])).to.equal(slashed);
      expect(await f.vault.read.lockedFor([f.provider.account.address, f.jobId])).to.equal(0n);
      expect((await f.vault.read.accountOf([f.provider.account.address])).free).to.equal(parseEther("100") - slashed);
      const reopened = await f.market.read.getJob([f.jobId]);
      expect(reopened.status).to.equal(Status.Open);
      expect(reopened.provider).to.equal(zeroAddress);

      await f.market.write.acceptJob([f.jobId], { account: f.provider2.account });
      expect((await f.market.read.getJob([f.jobId])).startSegment).to.equal(1);
      for (let s = 1; s < 3; s++) {
        const h = segmentHashes(f.jobId, s);
        await f.market.write.commitSegment([f.jobId, BigInt(s), h.hashes, 1n, CHECKPOINT_CID], { account: f.provider2.account });
      }
      await time.increase(DAY + 1n);
      await f.market.write.finalize([f.jobId]);
      const pay = (PAYMENT * 2n) / 3n;
      expect(await f.market.read.creditOf([f.provider2.account.address, f.token.address])).to.equal(pay);
      expect(await f.market.read.creditOf([f.buyer.account.address, f.token.address])).to.equal(PAYMENT - pay);
      expect(await f.market.read.creditOf([f.provider.account.address, f.token.address])).to.equal(0n);
      await f.vault.write.claim({ account: f.buyer.account });
    });

    it("slashes the whole lock on a 100% timeout share without an unlock", async () => {
      const f = await loadFixture(deploy);
      await f.market.write.createJob([MANIFEST_HASH, MANIFEST_URI, f.token.address, PAYMENT, policy({ timeoutSlashBps: 10_000 })], {
        account: f.buyer.account,
      });
      await f.market.write.acceptJob([1n], { account: f.provider.account });
      await time.increase(HOUR + 1n);
      await f.market.write.reportTimeout([1n]);
      expect(await f.vault.read.creditOf([f.buyer.account.address])).to.equal(policy().requiredStake);
      expect((await f.vault.read.accountOf([f.provider.account.address])).locked).to.equal(0n);
    });

    it("dispute: freeze blocks finalize, settleNoFault unfreezes, finalize then pays", async () => {
      const f = await loadFixture(committed);
      await viem.assertions.emitWithArgs(f.dispute.write.freeze([f.jobId]), f.market, "JobFrozen", [f.jobId, 1n]);
      await time.increase(DAY + 1n);
      await viem.assertions.revertWithCustomError(f.market.write.finalize([f.jobId]), f.market, "JobMarketFrozen");
      await viem.assertions.emitWithArgs(f.dispute.write.settleNoFault([f.jobId, false]), f.market, "JobUnfrozen", [f.jobId, 0n]);
      await f.market.write.finalize([f.jobId]);
      expect(await f.market.read.creditOf([f.provider.account.address, f.token.address])).to.equal(PAYMENT);
    });

    it("dispute: provider at fault is slashed by the policy shares and the buyer refunded", async () => {
      const f = await loadFixture(committed);
      await f.dispute.write.freeze([f.jobId]);
      const stake = policy().requiredStake;
      await viem.assertions.emitWithArgs(
        f.dispute.write.settleProviderFault([f.jobId]),
        f.market,
        "ProviderFaultSettled",
        [f.jobId, f.provider.account.address, f.dispute.address, stake, (stake * 5_000n) / 10_000n, PAYMENT],
      );
      // the challenger share goes to the dispute role, which splits it among the job's disputes
      expect(await f.vault.read.creditOf([f.dispute.address])).to.equal((stake * 5_000n) / 10_000n);
      expect(await f.vault.read.creditOf([f.buyer.account.address])).to.equal((stake * 3_000n) / 10_000n);
      expect(await f.token.read.balanceOf(["0x000000000000000000000000000000000000dEaD"])).to.equal((stake * 2_000n) / 10_000n);
      expect(await f.market.read.creditOf([f.buyer.account.address, f.token.address])).to.equal(PAYMENT);
      expect((await f.market.read.getJob([f.jobId])).status).to.equal(Status.Refunded);
      const parties = await f.market.read.jobParties([f.jobId]);
      expect(parties[2]).to.equal(Status.Refunded);
    });

    it("dispute during the commit phase: the provider keeps committing while frozen", async () => {
      const f = await loadFixture(accepted);
      await f.dispute.write.freeze([f.jobId]);
      const { hashes, root, end } = segmentHashes(f.jobId, 0);
      await f.market.write.commitSegment([f.jobId, 0n, hashes, 1n, CHECKPOINT_CID], { account: f.provider.account });
      await time.increase(HOUR + 1n);
      await viem.assertions.revertWithCustomError(f.market.write.reportTimeout([f.jobId]), f.market, "JobMarketFrozen");
      await f.dispute.write.settleProviderFault([f.jobId]);
      expect((await f.market.read.getJob([f.jobId])).status).to.equal(Status.Refunded);
    });
  });

  describe("bad input reverts with its own error and moves no tokens", () => {
    it("zero payment: JobMarketZeroPayment", async () => {
      const f = await loadFixture(deploy);
      await expectNoTokenMovement(f.token, holders(f), () =>
        viem.assertions.revertWithCustomError(
          f.market.write.createJob([MANIFEST_HASH, MANIFEST_URI, f.token.address, 0n, policy()], { account: f.buyer.account }),
          f.market,
          "JobMarketZeroPayment",
        ),
      );
    });

    it("zero token: JobMarketZeroToken", async () => {
      const f = await loadFixture(deploy);
      await viem.assertions.revertWithCustomError(
        f.market.write.createJob([MANIFEST_HASH, MANIFEST_URI, zeroAddress, PAYMENT, policy()], { account: f.buyer.account }),
        f.market,
        "JobMarketZeroToken",
      );
    });

    it("bad policies: JobMarketInvalidShape, JobMarketZeroStake, JobMarketInvalidWindows, JobMarketInvalidShares", async () => {
      const f = await loadFixture(deploy);
      const create = (p: ReturnType<typeof policy>) =>
        f.market.write.createJob([MANIFEST_HASH, MANIFEST_URI, f.token.address, PAYMENT, p], { account: f.buyer.account });
      const cases: [ReturnType<typeof policy>, "JobMarketInvalidShape" | "JobMarketZeroStake" | "JobMarketInvalidWindows" | "JobMarketInvalidShares"][] = [
        [policy({ segments: 0 }), "JobMarketInvalidShape"],
        [policy({ stepsPerSegment: 0 }), "JobMarketInvalidShape"],
        [policy({ requiredStake: 0n }), "JobMarketZeroStake"],
        [policy({ segmentTimeout: 0 }), "JobMarketInvalidWindows"],
        [policy({ segmentTimeout: 180 * 86400 + 1 }), "JobMarketInvalidWindows"],
        [policy({ challengeWindow: 0 }), "JobMarketInvalidWindows"],
        [policy({ challengeWindow: 180 * 86400 + 1 }), "JobMarketInvalidWindows"],
        [policy({ burnBps: 2_001 }), "JobMarketInvalidShares"],
        [policy({ timeoutSlashBps: 10_001 }), "JobMarketInvalidShares"],
      ];
      await expectNoTokenMovement(f.token, holders(f), async () => {
        for (const [p, name] of cases) await viem.assertions.revertWithCustomError(create(p), f.market, name);
      });
    });

    it("unknown job: JobMarketUnknownJob on every job function", async () => {
      const f = await loadFixture(created);
      const { hashes, root, end } = segmentHashes(9n, 0);
      await expectNoTokenMovement(f.token, holders(f), async () => {
        const calls = [
          f.market.write.cancelJob([9n], { account: f.buyer.account }),
          f.market.write.acceptJob([9n], { account: f.provider.account }),
          f.market.write.commitSegment([9n, 0n, hashes, 1n, CHECKPOINT_CID], { account: f.provider.account }),
          f.market.write.reportTimeout([9n]),
          f.market.write.finalize([9n]),
          f.dispute.write.freeze([9n]),
          f.dispute.write.settleNoFault([9n, false]),
          f.dispute.write.settleProviderFault([9n]),
        ];
        for (const c of calls) await viem.assertions.revertWithCustomError(c, f.market, "JobMarketUnknownJob");
      });
    });

    it("wrong caller: JobMarketNotBuyer on cancel, JobMarketNotProvider on commit", async () => {
      const f = await loadFixture(accepted);
      const { hashes, root, end } = segmentHashes(f.jobId, 0);
      await expectNoTokenMovement(f.token, holders(f), async () => {
        await viem.assertions.revertWithCustomError(
          f.market.write.commitSegment([f.jobId, 0n, hashes, 1n, CHECKPOINT_CID], { account: f.stranger.account }),
          f.market,
          "JobMarketNotProvider",
        );
      });
      const g = await loadFixture(created);
      await expectNoTokenMovement(g.token, holders(g), () =>
        viem.assertions.revertWithCustomError(g.market.write.cancelJob([g.jobId], { account: g.stranger.account }), g.market, "JobMarketNotBuyer"),
      );
    });

    it("wrong caller: dispute hooks need DISPUTE_ROLE (AccessControlUnauthorizedAccount)", async () => {
      const f = await loadFixture(accepted);
      await expectNoTokenMovement(f.token, holders(f), async () => {
        for (const c of [
          f.market.write.freeze([f.jobId], { account: f.stranger.account }),
          f.market.write.settleNoFault([f.jobId, false], { account: f.stranger.account }),
          f.market.write.settleProviderFault([f.jobId], { account: f.stranger.account }),
        ]) {
          await viem.assertions.revertWithCustomError(c, f.market, "AccessControlUnauthorizedAccount");
        }
      });
    });

    it("out-of-order segment: JobMarketSegmentOutOfOrder", async () => {
      const f = await loadFixture(accepted);
      const { hashes, root, end } = segmentHashes(f.jobId, 1);
      await expectNoTokenMovement(f.token, holders(f), () =>
        viem.assertions.revertWithCustomErrorWithArgs(
          f.market.write.commitSegment([f.jobId, 1n, hashes, 1n, CHECKPOINT_CID], { account: f.provider.account }),
          f.market,
          "JobMarketSegmentOutOfOrder",
          [f.jobId, 1n, 0n],
        ),
      );
    });

    it("duplicate commit: JobMarketSegmentAlreadyCommitted, and the stored commitment is unchanged", async () => {
      const f = await loadFixture(accepted);
      const { hashes, root, end } = segmentHashes(f.jobId, 0);
      await f.market.write.commitSegment([f.jobId, 0n, hashes, 1n, CHECKPOINT_CID], { account: f.provider.account });
      const stored = await f.market.read.segmentCommitment([f.jobId, 0n]);
      await expectNoTokenMovement(f.token, holders(f), () =>
        viem.assertions.revertWithCustomError(
          f.market.write.commitSegment([f.jobId, 0n, segmentHashes(f.jobId, 0, 4, "other").hashes, 1n, CHECKPOINT_CID], { account: f.provider.account }),
          f.market,
          "JobMarketSegmentAlreadyCommitted",
        ),
      );
      expect(await f.market.read.segmentCommitment([f.jobId, 0n])).to.equal(stored);
    });

    it("late commit: JobMarketSegmentLate", async () => {
      const f = await loadFixture(accepted);
      await time.increase(HOUR + 1n);
      const { hashes, root, end } = segmentHashes(f.jobId, 0);
      await expectNoTokenMovement(f.token, holders(f), () =>
        viem.assertions.revertWithCustomError(
          f.market.write.commitSegment([f.jobId, 0n, hashes, 1n, CHECKPOINT_CID], { account: f.provider.account }),
          f.market,
          "JobMarketSegmentLate",
        ),
      );
    });

    it("finalize during a dispute: JobMarketFrozen", async () => {
      const f = await loadFixture(committed);
      await f.dispute.write.freeze([f.jobId]);
      await time.increase(DAY + 1n);
      await expectNoTokenMovement(f.token, holders(f), () =>
        viem.assertions.revertWithCustomErrorWithArgs(f.market.write.finalize([f.jobId]), f.market, "JobMarketFrozen", [f.jobId, 1n]),
      );
      expect(await f.market.read.creditOf([f.provider.account.address, f.token.address])).to.equal(0n);
    });

    it("a zero leaf: JobMarketZeroCommitment; K or K+2 leaves: JobMarketWrongLeafCount; a broken boundary: JobMarketBoundaryMismatch", async () => {
      const f = await loadFixture(accepted);
      const { hashes } = segmentHashes(f.jobId, 0);
      for (const j of [0, 2, 4]) {
        const bad = hashes.map((h, i) => (i === j ? zeroHash : h));
        await viem.assertions.revertWithCustomError(
          f.market.write.commitSegment([f.jobId, 0n, bad, 1n, CHECKPOINT_CID], { account: f.provider.account }),
          f.market,
          "JobMarketZeroCommitment",
        );
      }
      for (const bad of [hashes.slice(0, 4), [...hashes, hashes[0]!]]) {
        await viem.assertions.revertWithCustomErrorWithArgs(
          f.market.write.commitSegment([f.jobId, 0n, bad, 1n, CHECKPOINT_CID], { account: f.provider.account }),
          f.market,
          "JobMarketWrongLeafCount",
          [f.jobId, 0n, BigInt(bad.length), 5n],
        );
      }
      await f.market.write.commitSegment([f.jobId, 0n, hashes, 1n, CHECKPOINT_CID], { account: f.provider.account });
      // segment 1 of another trace does not start where segment 0 ended (a state planted at the boundary)
      const planted = segmentHashes(f.jobId, 1, 4, "planted").hashes;
      await viem.assertions.revertWithCustomErrorWithArgs(
        f.market.write.commitSegment([f.jobId, 1n, planted, 1n, CHECKPOINT_CID], { account: f.provider.account }),
        f.market,
        "JobMarketBoundaryMismatch",
        [f.jobId, 1n, planted[0]!, hashes[4]!],
      );
    });

    it("the stored commitment's root is computed on chain from the leaves and its end state is the last leaf", async () => {
      const f = await loadFixture(accepted);
      const { hashes, root } = segmentHashes(f.jobId, 0);
      await f.market.write.commitSegment([f.jobId, 0n, hashes, 1n, CHECKPOINT_CID], { account: f.provider.account });
      // independent expectation: keccak256(abi.encode(root, h(K))) with the root from @openzeppelin/merkle-tree
      expect(await f.market.read.segmentCommitment([f.jobId, 0n])).to.equal(
        keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "bytes32" }], [root, hashes[4]!])),
      );
      // an end state other than the last leaf (backdoored weights) is not what was committed
      expect(await f.market.read.verifySegment([f.jobId, 0n, root, keccak256(toHex("backdoored"))])).to.equal(false);
      expect(await f.market.read.verifySegment([f.jobId, 0n, root, hashes[4]!])).to.equal(true);
    });

    it("wrong status: JobMarketWrongStatus on accept/cancel of an Active job, finalize while Active, commit past the end", async () => {
      const f = await loadFixture(accepted);
      await viem.assertions.revertWithCustomError(f.market.write.acceptJob([f.jobId], { account: f.provider2.account }), f.market, "JobMarketWrongStatus");
      await viem.assertions.revertWithCustomError(f.market.write.cancelJob([f.jobId], { account: f.buyer.account }), f.market, "JobMarketWrongStatus");
      await viem.assertions.revertWithCustomError(f.market.write.finalize([f.jobId]), f.market, "JobMarketWrongStatus");
      const g = await loadFixture(committed);
      const { hashes, root, end } = segmentHashes(g.jobId, 3);
      await viem.assertions.revertWithCustomError(
        g.market.write.commitSegment([g.jobId, 3n, hashes, 1n, CHECKPOINT_CID], { account: g.provider.account }),
        g.market,
        "JobMarketWrongStatus",
      );
      await viem.assertions.revertWithCustomError(g.market.write.reportTimeout([g.jobId]), g.market, "JobMarketWrongStatus");
    });

    it("early timeout report: JobMarketDeadlineNotPassed", async () => {
      const f = await loadFixture(accepted);
      await viem.assertions.revertWithCustomError(f.market.write.reportTimeout([f.jobId]), f.market, "JobMarketDeadlineNotPassed");
    });

    it("finalize inside the window: JobMarketChallengeWindowOpen", async () => {
      const f = await loadFixture(committed);
      await expectNoTokenMovement(f.token, holders(f), () =>
        viem.assertions.revertWithCustomError(f.market.write.finalize([f.jobId]), f.market, "JobMarketChallengeWindowOpen"),
      );
    });

    it("dispute hooks: JobMarketNotFrozen, JobMarketNotDisputable, JobMarketChallengeWindowClosed", async () => {
      const f = await loadFixture(committed);
      await viem.assertions.revertWithCustomError(f.dispute.write.settleNoFault([f.jobId, false]), f.market, "JobMarketNotFrozen");
      await viem.assertions.revertWithCustomError(
        f.dispute.write.settleProviderFault([f.jobId]),
        f.market,
        "JobMarketNotFrozen",
      );
      await time.increase(DAY + 1n);
      await viem.assertions.revertWithCustomError(f.dispute.write.freeze([f.jobId]), f.market, "JobMarketChallengeWindowClosed");
      const g = await loadFixture(created);
      await viem.assertions.revertWithCustomError(g.dispute.write.freeze([g.jobId]), g.market, "JobMarketNotDisputable");
    });

    it("nothing to claim: JobMarketNothingToClaim", async () => {
      const f = await loadFixture(deploy);
      await viem.assertions.revertWithCustomError(f.market.write.claim([f.token.address], { account: f.stranger.account }), f.market, "JobMarketNothingToClaim");
    });

    it("accept without enough free stake: StakeVaultInsufficientStake, job stays Open", async () => {
      const f = await loadFixture(created);
      await expectNoTokenMovement(f.token, holders(f), () =>
        viem.assertions.revertWithCustomError(f.market.write.acceptJob([f.jobId], { account: f.stranger.account }), f.vault, "StakeVaultInsufficientStake"),
      );
      expect((await f.market.read.getJob([f.jobId])).status).to.equal(Status.Open);
    });

    it("a token that returns false: SafeERC20FailedOperation", async () => {
      const f = await loadFixture(deploy);
      const bad = await viem.deployContract("FalseToken");
      await bad.write.mint([f.buyer.account.address, PAYMENT]);
      await bad.write.approve([f.market.address, PAYMENT], { account: f.buyer.account });
      await bad.write.setFailing([true]);
      await viem.assertions.revertWithCustomError(
        f.market.write.createJob([MANIFEST_HASH, MANIFEST_URI, bad.address, PAYMENT, policy()], { account: f.buyer.account }),
        f.market,
        "SafeERC20FailedOperation",
      );
    });

    it("roles are fixed: renouncing a wired role reverts (FixedRolesImmutable)", async () => {
    const f = await loadFixture(deploy);
    const role = await f.market.read.DISPUTE_ROLE();
    const renounce = parseAbi(["function renounceRole(bytes32 role, address callerConfirmation)"]);
    await networkHelpers.impersonateAccount(f.dispute.address);
    await networkHelpers.setBalance(f.dispute.address, 10n ** 18n);
    await viem.assertions.revertWithCustomError(
      f.admin.writeContract({ address: f.market.address, abi: renounce, functionName: "renounceRole", args: [role, f.dispute.address], account: f.dispute.address }),
      f.market,
      "FixedRolesImmutable",
    );
  });
  });
});
