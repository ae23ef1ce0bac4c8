import { expect } from "chai";
import { keccak256, maxUint128, parseAbi, parseEther, toHex, zeroAddress } from "viem";
import { ACTIVATION_DELAY, createConnection, EXIT_DELAY, expectNoTokenMovement, MIN_BOND } from "./fixture.ts";

const { viem, networkHelpers, deploy } = await createConnection();
const { time, loadFixture } = networkHelpers;
const SEED = keccak256(toHex("panel-seed"));

async function bonded() {
  const f = await deploy();
  for (const a of f.auditors) await f.registry.write.postBond([MIN_BOND], { account: a.account });
  // one second more than the delay, so that a snapshot at latest - 1 counts the bonds
  await time.increase(ACTIVATION_DELAY + 1n);
  return f;
}

/** The latest block's time minus one second: the youngest snapshot a draw accepts. */
async function justPast(): Promise<bigint> {
  return BigInt(await time.latest()) - 1n;
}

const lower = (xs: readonly string[]) => xs.map((x) => x.toLowerCase());

describe("AuditorRegistry", () => {
  it("activates at the minimum bond, exits after the delay and returns the bond", async () => {
    const f = await loadFixture(deploy);
    const a = f.auditors[0]!;
    await viem.assertions.emit(f.registry.write.postBond([MIN_BOND], { account: a.account }), f.registry, "AuditorActivated");
    expect(await f.registry.read.isActive([a.account.address])).to.equal(true);
    await viem.assertions.emit(f.registry.write.requestExit({ account: a.account }), f.registry, "ExitRequested");
    expect(await f.registry.read.isActive([a.account.address])).to.equal(false);
    await viem.assertions.revertWithCustomError(f.registry.write.leave({ account: a.account }), f.registry, "AuditorRegistryExitDelayNotPassed");
    await viem.assertions.revertWithCustomError(f.registry.write.postBond([1n], { account: a.account }), f.registry, "AuditorRegistryExiting");
    await time.increase(EXIT_DELAY);
    const before = await f.token.read.balanceOf([a.account.address]);
    await viem.assertions.emitWithArgs(f.registry.write.leave({ account: a.account }), f.registry, "AuditorLeft", [a.account.address, MIN_BOND]);
    expect((await f.token.read.balanceOf([a.account.address])) - before).to.equal(MIN_BOND);
  });

  it("draws the same panel for the same seed and snapshot, distinct, eligible, never excluded", async () => {
    const f = await loadFixture(bonded);
    const asOf = await justPast();
    const all = lower(f.auditors.map((a) => a.account.address));
    const panel = await f.registry.read.drawPanel([SEED, 2n, [], asOf]);
    expect(lower(await f.registry.read.drawPanel([SEED, 2n, [], asOf]))).to.deep.equal(lower(panel));
    expect(new Set(lower(panel)).size).to.equal(2);
    for (const m of lower(panel)) expect(all).to.include(m);
    const excluded = f.auditors[0]!.account.address;
    const panel2 = await f.registry.read.drawPanel([SEED, 2n, [excluded], asOf]);
    expect(lower(panel2)).to.not.include(excluded.toLowerCase());
    await viem.assertions.revertWithCustomErrorWithArgs(f.registry.read.drawPanel([SEED, 3n, [excluded], asOf]), f.registry, "AuditorRegistryNotEnoughAuditors", [
      2n,
      3n,
    ]);
    // the pool is sorted by address
    const pool = lower(await f.registry.read.eligibleAuditors([asOf]));
    expect(pool).to.deep.equal([...all].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)));
  });

  it("counts a bond only after the activation delay and keeps an exiting member listed until it leaves", async () => {
    const f = await loadFixture(bonded);
    const fresh = f.stranger;
    await viem.assertions.emit(f.registry.write.postBond([MIN_BOND], { account: fresh.account }), f.registry, "AuditorActivated");
    const bondedAt = BigInt(await time.latest());
    const rec = await f.registry.read.auditorOf([fresh.account.address]);
    expect(rec.eligibleFrom).to.equal(bondedAt + ACTIVATION_DELAY);
    expect(await f.registry.read.isActive([fresh.account.address])).to.equal(true); // bonded: receipts count at once
    await time.increase(10n);
    expect(await f.registry.read.isEligible([fresh.account.address, bondedAt + 5n])).to.equal(false);
    expect(lower(await f.registry.read.eligibleAuditors([bondedAt + 5n]))).to.not.include(fresh.account.address.toLowerCase());
    await time.increase(ACTIVATION_DELAY);
    expect(await f.registry.read.isEligible([fresh.account.address, bondedAt + ACTIVATION_DELAY])).to.equal(true);
    // an exit request ends the membership for later snapshots; the member stays listed (forfeitable)
    await f.registry.write.requestExit({ account: fresh.account });
    expect(lower(await f.registry.read.members())).to.include(fresh.account.address.toLowerCase());
    expect(lower(await f.registry.read.activeAuditors())).to.not.include(fresh.account.address.toLowerCase());
  });

  it("refuses a snapshot that is not in the past or older than the exit delay", async () => {
    const f = await loadFixture(bonded);
    const latest = BigInt(await time.latest());
    await viem.assertions.revertWithCustomError(f.registry.read.eligibleAuditors([latest + 100n]), f.registry, "AuditorRegistrySnapshotNotPast");
    await time.increase(EXIT_DELAY + 10n);
    await viem.assertions.revertWithCustomError(f.registry.read.drawPanel([SEED, 1n, [], latest]), f.registry, "AuditorRegistrySnapshotTooOld");
  });

  it("rejects zero delays at deployment", async () => {
    const f = await loadFixture(deploy);
    await viem.assertions.revertWithCustomError(
      viem.deployContract("AuditorRegistry", [f.token.address, MIN_BOND, EXIT_DELAY, 0n, f.admin.account.address]),
      f.registry,
      "AuditorRegistryZeroActivationDelay",
    );
    await viem.assertions.revertWithCustomError(
      viem.deployContract("AuditorRegistry", [f.token.address, MIN_BOND, 0n, ACTIVATION_DELAY, f.admin.account.address]),
      f.registry,
      "AuditorRegistryZeroExitDelay",
    );
  });

  it("forfeits part of a bond to a recipient as a credit and deactivates below the minimum", async () => {
    const f = await loadFixture(bonded);
    const a = f.auditors[1]!.account.address;
    await viem.assertions.emitWithArgs(f.dispute.write.forfeit([a, parseEther("1"), f.challenger.account.address]), f.registry, "BondForfeited", [
      a,
      parseEther("1"),
      f.challenger.account.address,
    ]);
    expect(await f.registry.read.isActive([a])).to.equal(false);
    expect((await f.registry.read.auditorOf([a])).status).to.equal(2); // Inactive
    expect(await f.registry.read.activeAuditors()).to.have.length(2);
    await f.registry.write.claim({ account: f.challenger.account });
    // Topping the bond back up re-activates.
    await f.registry.write.postBond([parseEther("1")], { account: f.auditors[1]!.account });
    expect(await f.registry.read.isActive([a])).to.equal(true);
  });

  it("rejects bad input with its own error and moves no tokens", async () => {
    const f = await loadFixture(bonded);
    const a = f.auditors[0]!;
    const holders = [f.registry.address, a.account.address, f.stranger.account.address, f.challenger.account.address];
    await expectNoTokenMovement(f.token, holders, async () => {
      await viem.assertions.revertWithCustomError(f.registry.write.postBond([0n], { account: f.stranger.account }), f.registry, "AuditorRegistryZeroAmount");
      await viem.assertions.revertWithCustomErrorWithArgs(
        f.registry.write.postBond([MIN_BOND - 1n], { account: f.stranger.account }),
        f.registry,
        "AuditorRegistryBondTooLow",
        [f.stranger.account.address, MIN_BOND - 1n, MIN_BOND],
      );
      await viem.assertions.revertWithCustomError(f.registry.write.requestExit({ account: f.stranger.account }), f.registry, "AuditorRegistryNotActive");
      await viem.assertions.revertWithCustomError(f.registry.write.leave({ account: a.account }), f.registry, "AuditorRegistryNotExiting");
      await viem.assertions.revertWithCustomError(
        f.dispute.write.forfeit([a.account.address, MIN_BOND + 1n, f.challenger.account.address]),
        f.registry,
        "AuditorRegistryForfeitExceedsBond",
      );
      await viem.assertions.revertWithCustomError(f.dispute.write.forfeit([a.account.address, 0n, f.challenger.account.address]), f.registry, "AuditorRegistryZeroAmount");
      await viem.assertions.revertWithCustomError(f.dispute.write.forfeit([a.account.address, 1n, zeroAddress]), f.registry, "AuditorRegistryZeroRecipient");
      await viem.assertions.revertWithCustomError(
        f.registry.write.forfeit([a.account.address, 1n, f.stranger.account.address], { account: f.stranger.account }),
        f.registry,
        "AccessControlUnauthorizedAccount",
      );
      await viem.assertions.revertWithCustomError(f.registry.write.claim({ account: f.stranger.account }), f.registry, "AuditorRegistryNothingToClaim");
    });
  });

  it("rejects a bond that overflows 128 bits: SafeCastOverflowedUintDowncast", async () => {
    const f = await loadFixture(deploy);
    const huge = maxUint128 + 1n;
    await f.token.write.mint([f.stranger.account.address, huge]);
    await viem.assertions.revertWithCustomError(f.registry.write.postBond([huge], { account: f.stranger.account }), f.registry, "SafeCastOverflowedUintDowncast");
  });

  it("a token that returns false: SafeERC20FailedOperation", async () => {
    const f = await loadFixture(deploy);
    const bad = await viem.deployContract("FalseToken");
    const registry = await viem.deployContract("AuditorRegistry", [bad.address, MIN_BOND, EXIT_DELAY, ACTIVATION_DELAY, f.admin.account.address]);
    await bad.write.setFailing([true]);
    await viem.assertions.revertWithCustomError(registry.write.postBond([MIN_BOND], { account: f.stranger.account }), registry, "SafeERC20FailedOperation");
  });

  it("roles are fixed: renouncing a wired role reverts (FixedRolesImmutable)", async () => {
    const f = await loadFixture(deploy);
    const role = await f.registry.read.DISPUTE_ROLE();
    const renounce = parseAbi(["function renounceRole(bytes32 role, address callerConfirmation)"]);
    await networkHelpers.impersonateAccount(f.dispute.address);
    await networkHelpers.setBalance(f.dispute.address, 10n ** 18n);
    await viem.assertions.revertWithCustomError(
      f.admin.writeContract({ address: f.registry.address, abi: renounce, functionName: "renounceRole", args: [role, f.dispute.address], account: f.dispute.address }),
      f.registry,
      "FixedRolesImmutable",
    );
  });
});
