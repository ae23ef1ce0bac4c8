// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestToken} from "../mocks/TestToken.sol";
import {DisputeCaller} from "../mocks/DisputeCaller.sol";
import {StakeVault} from "../StakeVault.sol";
import {AuditorRegistry} from "../AuditorRegistry.sol";
import {JobMarket} from "../JobMarket.sol";
import {JobRecords} from "../JobRecords.sol";
import {ProviderRegistry} from "../ProviderRegistry.sol";
import {DataRegistry} from "../DataRegistry.sol";
import {IJobMarket} from "../interfaces/IJobMarket.sol";

/// @notice Deploys and wires the contract set the way ignition/modules/market.ts does, for Solidity tests:
/// ProviderRegistry (quorum 2) and DataRegistry set in JobMarket, then every role wired once and wiring
/// ended, so this fixture (the deployer) keeps no power. DisputeCaller stands in for DisputeGame (and is
/// also the vault's slasher, which the Ignition deployment leaves unset); this contract is the evaluator.
contract MarketFixture {
    uint64 internal constant UNBONDING = 7 days;
    uint256 internal constant MIN_BOND = 100e18;
    uint64 internal constant EXIT_DELAY = 14 days;
    /// @dev A bond counts for panel snapshots this long after it is posted (the deployment default).
    uint64 internal constant ACTIVATION_DELAY = 1 hours;
    uint256 internal constant COMMITTEE = 3;
    uint256 internal constant QUORUM = 2;
    uint64 internal constant MAX_VALIDITY = 30 days;
    uint16 internal constant ATTESTATION_SEED_DELAY = 2;
    uint64 internal constant REQUEST_WINDOW = 1 days;
    uint256 internal constant REQUEST_FEE = 1e18;

    TestToken public token;
    StakeVault public vault;
    AuditorRegistry public registry;
    JobMarket public market;
    JobRecords public records;
    DisputeCaller public dispute;
    ProviderRegistry public providers;
    DataRegistry public data;

    constructor() {
        token = new TestToken("Test", "TST");
        vault = new StakeVault(token, UNBONDING, address(this));
        registry = new AuditorRegistry(token, MIN_BOND, EXIT_DELAY, ACTIVATION_DELAY, address(this));
        market = new JobMarket(vault, address(this));
        records = new JobRecords(market);
        dispute = new DisputeCaller(market, vault, registry);
        providers = new ProviderRegistry(registry, COMMITTEE, QUORUM, MAX_VALIDITY, ATTESTATION_SEED_DELAY, REQUEST_WINDOW, REQUEST_FEE);
        data = new DataRegistry();
        vault.wire(address(market), address(dispute));
        registry.wireAttestation(address(providers));
        registry.wire(address(dispute));
        market.setRegistries(registry, providers, data);
        market.wire(address(dispute), address(this));
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
