// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {DisputeFixture} from "./DisputeFixture.sol";

/// @notice The actors of the attack tests. The provider side is the provider plus the addresses it controls: two
/// challengers (SYBIL_CHALLENGER_*) and two bonded auditors (SYBIL_AUDITOR_*). The honest side is two challengers that
/// only ever dispute a truly faulty step (HONEST_*), the fixture's `challenger` and `stranger` (reckless: they dispute
/// any step, right or wrong) and the fixture's five auditors (they vote the truth whenever they vote).
abstract contract AttackActors {
    address internal constant SYBIL_CHALLENGER_1 = address(0x51C1);
    address internal constant SYBIL_CHALLENGER_2 = address(0x51C2);
    address internal constant SYBIL_AUDITOR_1 = address(0x51A1);
    address internal constant SYBIL_AUDITOR_2 = address(0x51A2);
    address internal constant HONEST_1 = address(0x4C01);
    address internal constant HONEST_2 = address(0x4C02);
    /// @dev A mempool watcher that copies other people's challenge transactions.
    address internal constant COPIER = address(0xC0B1);
    /// @dev Extra stake the provider deposits so that several jobs (and re-acceptances after timeouts) can be locked.
    uint256 internal constant EXTRA_STAKE = 200e18;

    function _sybilChallenger(bool second) internal pure returns (address) {
        return second ? SYBIL_CHALLENGER_2 : SYBIL_CHALLENGER_1;
    }

    function _honestChallenger(bool second) internal pure returns (address) {
        return second ? HONEST_2 : HONEST_1;
    }

    function _isSybilAuditor(address a) internal pure returns (bool) {
        return a == SYBIL_AUDITOR_1 || a == SYBIL_AUDITOR_2;
    }

    function _isSide(address a, address provider) internal pure returns (bool) {
        return a == provider || a == SYBIL_CHALLENGER_1 || a == SYBIL_CHALLENGER_2 || _isSybilAuditor(a);
    }
}

/// @notice DisputeFixture plus the attacker's addresses: funded sybil challengers, two sybil auditors bonded in the
/// AuditorRegistry beside the five honest ones (so a panel of 3 out of 7 holds 0, 1 or 2 sybils), funded honest
/// challengers and a copier, and more provider stake.
/// @dev Reward condition (docs/disputes.md: the honest challenger's deposit comes back whole): every job's lock L and
/// challenger share satisfy L * challengerBps / 10,000 >= panelSize * panelFee. Here L = STAKE = 10e18 (no
/// ProviderRegistry: tier 4, 100% of requiredStake), challengerBps >= 1,000, panelSize * panelFee = 3 * 5e16 = 0.15e18,
/// so the reward is at least 1e18 >= 0.15e18; `rewardCoversPanel` checks it for a share.
contract AttackFixture is DisputeFixture, AttackActors {
    address[] public sybilAuditors;

    constructor() {
        address[5] memory funded = [SYBIL_CHALLENGER_1, SYBIL_CHALLENGER_2, HONEST_1, HONEST_2, COPIER];
        for (uint256 i; i < funded.length; ++i) _fund(funded[i]);
        vm.prank(provider);
        vault.deposit(EXTRA_STAKE);
        sybilAuditors.push(SYBIL_AUDITOR_1);
        sybilAuditors.push(SYBIL_AUDITOR_2);
        for (uint256 i; i < 2; ++i) {
            _fund(sybilAuditors[i]);
            vm.prank(sybilAuditors[i]);
            registry.postBond(AUDITOR_BOND);
        }
    }

    /// @notice Whether a fault on a job with lock `lock` and share `challengerBps` pays a full panel out of the reward.
    function rewardCoversPanel(uint256 lock, uint256 challengerBps) public pure returns (bool) {
        return (lock * challengerBps) / 10_000 >= uint256(defaultParams().panelSize) * defaultParams().panelFee;
    }
}
