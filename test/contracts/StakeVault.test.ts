import { expect } from "chai";
import { maxUint128, parseAbi, parseEther, zeroAddress } from "viem";
import { createConnection, expectNoTokenMovement, UNBONDING } from "./fixture.ts";

const { viem, networkHelpers, deploy } = await createConnection();
const { time, loadFixture } = networkHelpers;
const BURN = "0x000000000000000000000000000000000000dEaD" as const;
const ROLE_WRITES = parseAbi(["function grantRole(bytes32 role, address account)", "function revokeRole(bytes32 role, address account)", "function renounceRole(bytes32 role, address callerConfirmation)"]);

/**
 * The set with the JobMarket's own address impersonated, so locks can be driven directly as the one MARKET_ROLE
 * holder (roles are fixed at deployment: no second holder can be added).
 */
async function withMarketWallet() {
  const f = await deploy();
  await networkHelpers.impersonateAccount(f.market.address);
  await networkHelpers.setBalance(f.market.address, 10n ** 18n);
  return { ...f, asMarket: { account: f.market.address } as const };
}

describe("StakeVault", () => {
  it("deposits, requests a withdrawal, withdraws after the unbonding delay", async () => {
    const f = await loadFixture(deploy);
    const p = f.provider;
    await viem.assertions.emitWithArgs(f.vault.write.requestWithdrawal([parseEther("40")], { account: p.account }), f.vault, "WithdrawalRequested", [
      p.account.address,
      parseEther("40"),
      (v: bigint) => v > 0n,
    ]);
    const acc = await f.vault.read.accountOf([p.account.address]);
    expect(acc.free).to.equal(parseEther("60"));
    expect(acc.pendingWithdrawal).to.equal(parseEther("40"));
    await viem.assertions.revertWithCustomError(f.vault.write.withdraw({ account: p.account }), f.vault, "StakeVaultStillUnbonding");
    await time.increase(UNBONDING);
    const before = await f.token.read.balanceOf([p.account.address]);
    await viem.assertions.emit(f.vault.write.withdraw({ account: p.account }), f.vault, "StakeWithdrawn");
    expect((await f.token.read.balanceOf([p.account.address])) - before).to.equal(parseEther("40"));
  });

  it("locks, unlocks and slashes only within the lock; burn goes to the burn address", async () => {
    const f = await loadFixture(withMarketWallet);
    const p = f.provider.account.address;
    await viem.assertions.emitWithArgs(f.vault.write.lock([p, 7n, parseEther("30")], f.asMarket), f.vault, "StakeLocked", [p, 7n, parseEther("30")]);
    await viem.assertions.revertWithCustomError(f.vault.write.lock([p, 7n, 1n], f.asMarket), f.vault, "StakeVaultAlreadyLocked");
    await viem.assertions.revertWithCustomError(f.vault.write.lock([p, 8n, parseEther("71")], f.asMarket), f.vault, "StakeVaultInsufficientStake");
    await viem.assertions.revertWithCustomError(f.vault.write.lock([p, 8n, 0n], f.asMarket), f.vault, "StakeVaultZeroAmount");
    const to = [f.challenger.account.address, BURN] as const;
    await expectNoTokenMovement(f.token, [f.vault.address, BURN, f.challenger.account.address], async () => {
      await viem.assertions.revertWithCustomErrorWithArgs(
        f.dispute.write.slash([p, 7n, parseEther("31"), [...to], [parseEther("31"), 0n]]),
        f.vault,
        "StakeVaultSlashExceedsLock",
        [p, 7n, parseEther("30"), parseEther("31")],
      );
      await viem.assertions.revertWithCustomError(
        f.dispute.write.slash([p, 7n, parseEther("10"), [...to], [parseEther("5"), parseEther("4")]]),
        f.vault,
        "StakeVaultBadSplit",
      );
      await viem.assertions.revertWithCustomError(
        f.dispute.write.slash([p, 7n, parseEther("10"), [to[0]], [parseEther("5"), parseEther("5")]]),
        f.vault,
        "StakeVaultBadSplit",
      );
      await viem.assertions.revertWithCustomError(f.dispute.write.slash([p, 7n, 0n, [], []]), f.vault, "StakeVaultZeroAmount");
      await viem.assertions.revertWithCustomError(
        f.vault.write.slash([p, 7n, 1n, [to[0]], [1n]], { account: f.stranger.account }),
        f.vault,
        "StakeVaultNotSlasher",
      );
    });
    await viem.assertions.emitWithArgs(
      f.dispute.write.slash([p, 7n, parseEther("10"), [...to, zeroAddress], [parseEther("6"), parseEther("3"), parseEther("1")]]),
      f.vault,
      "StakeSlashed",
      [p, 7n, parseEther("10"), parseEther("4")],
    );
    expect(await f.token.read.balanceOf([BURN])).to.equal(parseEther("4"));
    expect(await f.vault.read.creditOf([f.challenger.account.address])).to.equal(parseEther("6"));
    expect(await f.vault.read.lockedFor([p, 7n])).to.equal(parseEther("20"));
    await viem.assertions.emitWithArgs(f.vault.write.unlock([p, 7n], f.asMarket), f.vault, "StakeUnlocked", [p, 7n, parseEther("20")]);
    // A second unlock releases nothing (idempotent, so a lock emptied by slashing never blocks the market).
    const again = await f.vault.simulate.unlock([p, 7n], f.asMarket);
    expect(again.result).to.equal(0n);
    await f.vault.write.unlock([p, 7n], f.asMarket);
    expect(await f.vault.read.accountOf([p])).to.deep.equal({ free: parseEther("90"), locked: 0n, pendingWithdrawal: 0n, withdrawableAt: 0n });
    await f.vault.write.claim({ account: f.challenger.account });
    await viem.assertions.revertWithCustomError(f.vault.write.claim({ account: f.challenger.account }), f.vault, "StakeVaultNothingToClaim");
  });

  it("rejects bad input with its own error and moves no tokens", async () => {
    const f = await loadFixture(deploy);
    const holders = [f.vault.address, f.provider.account.address, f.stranger.account.address];
    await expectNoTokenMovement(f.token, holders, async () => {
      await viem.assertions.revertWithCustomError(f.vault.write.deposit([0n], { account: f.provider.account }), f.vault, "StakeVaultZeroAmount");
      await viem.assertions.revertWithCustomError(f.vault.write.requestWithdrawal([0n], { account: f.provider.account }), f.vault, "StakeVaultZeroAmount");
      await viem.assertions.revertWithCustomError(
        f.vault.write.requestWithdrawal([parseEther("101")], { account: f.provider.account }),
        f.vault,
        "StakeVaultInsufficientStake",
      );
      await viem.assertions.revertWithCustomError(f.vault.write.withdraw({ account: f.stranger.account }), f.vault, "StakeVaultNoPendingWithdrawal");
      await viem.assertions.revertWithCustomError(
        f.vault.write.lock([f.provider.account.address, 1n, 1n], { account: f.stranger.account }),
        f.vault,
        "AccessControlUnauthorizedAccount",
      );
      await viem.assertions.revertWithCustomError(
        f.vault.write.unlock([f.provider.account.address, 1n], { account: f.stranger.account }),
        f.vault,
        "AccessControlUnauthorizedAccount",
      );
    });
  });

  it("rejects a deposit that overflows the 128-bit balance: SafeCastOverflowedUintDowncast", async () => {
    const f = await loadFixture(deploy);
    const huge = maxUint128 + 1n;
    await f.token.write.mint([f.stranger.account.address, huge]);
    await viem.assertions.revertWithCustomError(f.vault.write.deposit([huge], { account: f.stranger.account }), f.vault, "SafeCastOverflowedUintDowncast");
  });

  it("a token that returns false: SafeERC20FailedOperation", async () => {
    const f = await loadFixture(deploy);
    const bad = await viem.deployContract("FalseToken");
    const vault = await viem.deployContract("StakeVault", [bad.address, UNBONDING, f.admin.account.address]);
    await bad.write.setFailing([true]);
    await viem.assertions.revertWithCustomError(vault.write.deposit([1n], { account: f.provider.account }), vault, "SafeERC20FailedOperation");
  });

  it("roles are fixed: renouncing, granting or re-wiring reverts (FixedRolesImmutable, FixedRolesNotWirer)", async () => {
    const f = await loadFixture(deploy);
    const role = await f.vault.read.MARKET_ROLE();
    // NOTE: grantRole/revokeRole/renounceRole are pure (they always revert), so they are sent as transactions
    // through an explicit nonpayable fragment, the way an attacker's raw calldata would be.
    await viem.assertions.revertWithCustomError(
      f.admin.writeContract({ address: f.vault.address, abi: ROLE_WRITES, functionName: "renounceRole", args: [role, f.market.address] }),
      f.vault,
      "FixedRolesImmutable",
    );
    await viem.assertions.revertWithCustomError(f.vault.write.wire([f.admin.account.address, f.admin.account.address]), f.vault, "FixedRolesNotWirer");
  });
});
