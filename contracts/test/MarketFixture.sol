// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestToken} from "../mocks/TestToken.sol";
import {DisputeCaller} from "../mocks/DisputeCaller.sol";
import {StakeVault} from "../StakeVault.sol";
import {AuditorRegistry} from "../AuditorRegistry.sol";
import {JobMarket} from "../JobMarket.sol";
import {IJobMarket} from "../interfaces/IJobMarket.sol";

/// @notice Deploys and wires the contract set the way ignition/modules/PoUW.ts does, for Solidity tests.
contract MarketFixture {
    uint64 internal constant UNBONDING = 7 days;
    uint256 internal constant MIN_BOND = 100e18;
    uint64 internal constant EXIT_DELAY = 14 days;
    /// @dev A bond counts for panel snapshots this long after it is posted (the deployment default).
    uint64 internal constant ACTIVATION_DELAY = 1 hours;

    TestToken public token;
    StakeVault public vault;
    AuditorRegistry public registry;
    JobMarket public market;
    DisputeCaller public dispute;

    constructor() {
        token = new TestToken("Test", "TST");
        vault = new StakeVault(token, UNBONDING, address(this));
        registry = new AuditorRegistry(token, MIN_BOND, EXIT_DELAY, ACTIVATION_DELAY, address(this));
        market = new JobMarket(vault, address(this));
        dispute = new DisputeCaller(market, vault, registry);
        vault.grantRole(vault.MARKET_ROLE(), address(market));
        vault.grantRole(vault.SLASHER_ROLE(), address(dispute));
        market.grantRole(market.DISPUTE_ROLE(), address(dispute));
        registry.grantRole(registry.DISPUTE_ROLE(), address(dispute));
    }

    function policy(uint16 segments, uint128 stake) public pure returns (IJobMarket.Policy memory) {
        return IJobMarket.Policy({
            segments: segments,
            stepsPerSegment: 4,
            requiredStake: stake,
            segmentTimeout: 1 hours,
            challengeWindow: 1 days,
            challengerBps: 5_000,
            buyerBps: 3_000,
            burnBps: 2_000,
            timeoutSlashBps: 1_000
        });
    }
}
