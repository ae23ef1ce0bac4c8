// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {MarketFixture} from "./test/MarketFixture.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";

contract StakeVaultTest is TestBase, MarketFixture {
    address internal constant PROVIDER = address(0xB0B);
    address internal constant ALICE = address(0xA11CE);

    function setUp() public {
        token.mint(PROVIDER, 1e30);
        vm.prank(PROVIDER);
        token.approve(address(vault), type(uint256).max);
    }

    function _lock(uint256 deposit, uint256 amount, uint256 jobId) internal {
        vm.prank(PROVIDER);
        vault.deposit(deposit);
        vm.prank(address(market));
        vault.lock(PROVIDER, jobId, amount);
    }

    function testFuzz_slash_neverExceedsLock(uint256 lockAmount, uint256 slashAmount, uint256 burnPart) public {
        lockAmount = bound(lockAmount, 1, 1e27);
        slashAmount = bound(slashAmount, 1, 2e27);
        _lock(2e27, lockAmount, 1);
        address[] memory to = new address[](2);
        uint256[] memory amounts = new uint256[](2);
        to[0] = ALICE;
        to[1] = vault.BURN_ADDRESS();
        amounts[1] = bound(burnPart, 0, slashAmount);
        amounts[0] = slashAmount - amounts[1];
        if (slashAmount > lockAmount) {
            vm.expectRevert(
                abi.encodeWithSelector(
                    IStakeVault.StakeVaultSlashExceedsLock.selector, PROVIDER, 1, lockAmount, slashAmount
                )
            );
        }
        vm.prank(address(dispute));
        vault.slash(PROVIDER, 1, slashAmount, to, amounts);
        if (slashAmount > lockAmount) return;
        assertEq(vault.lockedFor(PROVIDER, 1), lockAmount - slashAmount, "lock reduced");
        assertEq(vault.accountOf(PROVIDER).locked, lockAmount - slashAmount, "account locked reduced");
        assertEq(vault.creditOf(ALICE), amounts[0], "recipient credited");
        assertEq(token.balanceOf(vault.BURN_ADDRESS()), amounts[1], "burned");
        assertEq(token.balanceOf(address(vault)), 2e27 - amounts[1], "vault holds the rest");
    }

    function testFuzz_withdraw_onlyAfterUnbondingDelay(uint256 amount, uint256 waited) public {
        amount = bound(amount, 1, 1e27);
        waited = bound(waited, 0, 2 * UNBONDING);
        vm.prank(PROVIDER);
        vault.deposit(amount);
        vm.warp(1_000_000);
        vm.prank(PROVIDER);
        vault.requestWithdrawal(amount);
        vm.warp(1_000_000 + waited);
        uint256 before = token.balanceOf(PROVIDER);
        if (waited < UNBONDING) {
            vm.expectRevert(
                abi.encodeWithSelector(
                    IStakeVault.StakeVaultStillUnbonding.selector,
                    PROVIDER,
                    uint64(1_000_000 + UNBONDING),
                    1_000_000 + waited
                )
            );
        }
        vm.prank(PROVIDER);
        vault.withdraw();
        if (waited < UNBONDING) return;
        assertEq(token.balanceOf(PROVIDER) - before, amount, "withdrawn");
        assertEq(token.balanceOf(address(vault)), 0, "vault empty");
    }

    function test_lockedStake_cannotBeWithdrawn() public {
        _lock(10e18, 8e18, 1);
        vm.expectRevert(abi.encodeWithSelector(IStakeVault.StakeVaultInsufficientStake.selector, PROVIDER, 2e18, 3e18));
        vm.prank(PROVIDER);
        vault.requestWithdrawal(3e18);
        vm.prank(address(market));
        assertEq(vault.unlock(PROVIDER, 1), 8e18, "unlocked");
        vm.prank(PROVIDER);
        vault.requestWithdrawal(10e18);
    }
}
