// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IAccessControl} from "@openzeppelin/contracts/access/IAccessControl.sol";
import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {StakeVault} from "./StakeVault.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {JobMarket} from "./JobMarket.sol";
import {DisputeGame} from "./DisputeGame.sol";
import {ProviderRegistry} from "./ProviderRegistry.sol";
import {DataRegistry} from "./DataRegistry.sol";
import {Groth16Verifier} from "./verifiers/StepVerifier.sol";
import {IJobMarket} from "./interfaces/IJobMarket.sol";
import {IDisputeGameTypes, IStepVerifier} from "./interfaces/IDisputeGame.sol";
import {Seconds} from "./libraries/Seconds.sol";
import {IFixedRoles} from "./interfaces/IFixedRoles.sol";
import {IStakeVault} from "./interfaces/IStakeVault.sol";

/// @notice Attack 8 (admin drain): this test contract is the deployer. It deploys and wires the set exactly as
/// ignition/modules/market.ts and `pouw deploy` do, lets a provider stake and lock for a job, an auditor bond
/// and a buyer escrow, then plays the deployer turned thief: it tries to grant itself every role that moves
/// funds, re-wire, lock, unlock, slash, forfeit, freeze, settle and set the registries again. Every attempt
/// reverts with a named error and not one token or balance moves.
contract GovernanceTest is TestBase {
    address internal constant BUYER = address(0xB1);
    address internal constant PROVIDER = address(0xB2);
    address internal constant AUDITOR = address(0xA1);
    address internal constant STRANGER = address(0x5757);
    uint256 internal constant STAKE = 10e18;
    uint256 internal constant BOND = 150e18;
    uint128 internal constant PAYMENT = 5e18;

    TestToken internal token;
    StakeVault internal vault;
    AuditorRegistry internal registry;
    JobMarket internal market;
    DisputeGame internal game;
    ProviderRegistry internal providers;
    DataRegistry internal data;
    uint256 internal jobId;

    function setUp() public {
        token = new TestToken("Test", "TST");
        vault = new StakeVault(token, 7 days, address(this));
        registry = new AuditorRegistry(token, 100e18, 14 days, 1 hours, address(this));
        market = new JobMarket(vault, address(this));
        Groth16Verifier verifier = new Groth16Verifier();
        game = new DisputeGame(market, registry, IStepVerifier(address(verifier)), bytes32(0), token, _params());
        providers = new ProviderRegistry(registry, 3, 2, 30 days, 2, 1 days, 1e18);
        data = new DataRegistry();
        // The standard wiring: registries, then each role once; wiring ends on every contract.
        vault.wire(address(market), address(0));
        registry.wire(address(game));
        market.setRegistries(registry, providers, data);
        market.wire(address(game), address(0));

        token.mint(PROVIDER, 100e18);
        token.mint(AUDITOR, BOND);
        token.mint(BUYER, PAYMENT);
        vm.startPrank(PROVIDER);
        token.approve(address(vault), type(uint256).max);
        vault.deposit(100e18);
        vm.stopPrank();
        vm.startPrank(AUDITOR);
        token.approve(address(registry), BOND);
        registry.postBond(BOND);
        vm.stopPrank();
        vm.startPrank(BUYER);
        token.approve(address(market), PAYMENT);
        jobId = market.createJob(keccak256("m"), "ipfs://m", address(token), PAYMENT, _policy());
        vm.stopPrank();
        vm.prank(PROVIDER);
        market.acceptJob(jobId);
    }

    function _params() internal pure returns (IDisputeGameTypes.Params memory) {
        return IDisputeGameTypes.Params({
            minChallengerBond: 1e18,
            panelErrorBps: 300,
            panelSize: 3,
            seedDelayBlocks: 2,
            commitWindowSeconds: Seconds.wrap(1 days),
            revealWindowSeconds: Seconds.wrap(1 days),
            panelForfeit: 20e18,
            panelFee: 5e16
        });
    }

    function _policy() internal pure returns (IJobMarket.Policy memory) {
        return IJobMarket.Policy({
            segments: 2,
            stepsPerSegment: 3,
            requiredStake: uint128(STAKE),
            segmentTimeout: 1 hours,
            challengeWindow: 1 days,
            challengerBps: 5_000,
            buyerBps: 3_000,
            burnBps: 2_000,
            timeoutSlashBps: 1_000
        });
    }

    /// @dev Everything an attacker could move: token balances of the contracts and the parties, the
    /// provider's stake split, the auditor's bond and every credit the attacker could claim.
    function _snapshot() internal view returns (bytes32) {
        IStakeVault.Account memory a = vault.accountOf(PROVIDER);
        return keccak256(
            abi.encode(
                token.balanceOf(address(vault)),
                token.balanceOf(address(registry)),
                token.balanceOf(address(market)),
                token.balanceOf(address(this)),
                a,
                vault.lockedFor(PROVIDER, jobId),
                registry.auditorOf(AUDITOR),
                vault.creditOf(address(this)),
                registry.creditOf(address(this)),
                market.creditOf(address(this), address(token)),
                market.getJob(jobId)
            )
        );
    }

    function _unauthorized(address who, bytes32 role) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(IAccessControl.AccessControlUnauthorizedAccount.selector, who, role);
    }

    function test_wiring_endsEverywhere_noAdminHeld() public view {
        assertEq(vault.wirer(), address(0), "vault wirer");
        assertEq(registry.wirer(), address(0), "registry wirer");
        assertEq(market.wirer(), address(0), "market wirer");
        bytes32 admin = vault.DEFAULT_ADMIN_ROLE();
        assertTrue(!vault.hasRole(admin, address(this)), "no vault admin");
        assertTrue(!registry.hasRole(admin, address(this)), "no registry admin");
        assertTrue(!market.hasRole(admin, address(this)), "no market admin");
        assertEq(vault.roleHolder(vault.MARKET_ROLE()), address(market), "vault market");
        assertEq(vault.roleHolder(vault.SLASHER_ROLE()), address(0), "no slasher");
        assertEq(registry.roleHolder(registry.DISPUTE_ROLE()), address(game), "registry dispute");
        assertEq(market.roleHolder(market.DISPUTE_ROLE()), address(game), "market dispute");
        assertEq(market.roleHolder(market.EVALUATOR_ROLE()), address(0), "no evaluator");
    }

    function test_deployer_cannotGrantRevokeOrRenounceAnyRole() public {
        bytes32 snap = _snapshot();
        bytes32[3] memory vaultRoles = [vault.MARKET_ROLE(), vault.SLASHER_ROLE(), vault.DEFAULT_ADMIN_ROLE()];
        for (uint256 i; i < vaultRoles.length; ++i) {
            vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesImmutable.selector, vaultRoles[i], address(this)));
            vault.grantRole(vaultRoles[i], address(this));
        }
        bytes32[3] memory marketRoles = [market.DISPUTE_ROLE(), market.EVALUATOR_ROLE(), market.DEFAULT_ADMIN_ROLE()];
        for (uint256 i; i < marketRoles.length; ++i) {
            vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesImmutable.selector, marketRoles[i], address(this)));
            market.grantRole(marketRoles[i], address(this));
        }
        // NOTE: role ids are read first: expectRevert applies to the very next call.
        bytes32 dispute = registry.DISPUTE_ROLE();
        bytes32 marketRole = vault.MARKET_ROLE();
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesImmutable.selector, dispute, address(this)));
        registry.grantRole(dispute, address(this));
        // Nor can it take a role away from the contracts that hold it (to stall disputes or settlement).
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesImmutable.selector, marketRole, address(market)));
        vault.revokeRole(marketRole, address(market));
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesImmutable.selector, dispute, address(game)));
        market.revokeRole(dispute, address(game));
        vm.prank(address(game));
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesImmutable.selector, dispute, address(game)));
        registry.renounceRole(dispute, address(game));
        assertEq(_snapshot(), snap, "nothing moved");
    }

    function test_deployer_cannotRewireOrResetRegistries() public {
        bytes32 snap = _snapshot();
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesNotWirer.selector, address(this), address(0)));
        vault.wire(address(this), address(this));
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesNotWirer.selector, address(this), address(0)));
        registry.wire(address(this));
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesNotWirer.selector, address(this), address(0)));
        market.wire(address(this), address(this));
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesNotWirer.selector, address(this), address(0)));
        market.setRegistries(registry, providers, data);
        assertEq(_snapshot(), snap, "nothing moved");
    }

    function test_deployer_cannotLockUnlockSlashForfeitOrSettle() public {
        bytes32 snap = _snapshot();
        address[] memory to = new address[](1);
        uint256[] memory amounts = new uint256[](1);
        to[0] = address(this);
        amounts[0] = STAKE;
        // Lock free stake against a job that does not exist, then slash it to itself: both refused.
        vm.expectRevert(_unauthorized(address(this), vault.MARKET_ROLE()));
        vault.lock(PROVIDER, 999, 50e18);
        vm.expectRevert(abi.encodeWithSelector(IStakeVault.StakeVaultNotSlasher.selector, address(this)));
        vault.slash(PROVIDER, jobId, STAKE, to, amounts);
        vm.expectRevert(_unauthorized(address(this), vault.MARKET_ROLE()));
        vault.unlock(PROVIDER, jobId);
        // Forfeit the auditor's bond to itself.
        vm.expectRevert(_unauthorized(address(this), registry.DISPUTE_ROLE()));
        registry.forfeit(AUDITOR, BOND, address(this));
        // Freeze the job or settle it as a fault with itself as challenger (stake share + buyer refund).
        vm.expectRevert(_unauthorized(address(this), market.DISPUTE_ROLE()));
        market.freeze(jobId);
        vm.expectRevert(_unauthorized(address(this), market.DISPUTE_ROLE()));
        market.settleProviderFault(jobId);
        vm.expectRevert(_unauthorized(address(this), market.DISPUTE_ROLE()));
        market.settleNoFault(jobId, false);
        vm.expectRevert(_unauthorized(address(this), market.EVALUATOR_ROLE()));
        market.recordImprovement(jobId, 1, 0);
        assertEq(_snapshot(), snap, "nothing moved");
    }

    /// Any caller, any role, any account: granting always reverts with FixedRolesImmutable.
    function testFuzz_grantRole_alwaysReverts(address caller, bytes32 role, address account) public {
        vm.prank(caller);
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesImmutable.selector, role, account));
        vault.grantRole(role, account);
        vm.prank(caller);
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesImmutable.selector, role, account));
        registry.grantRole(role, account);
        vm.prank(caller);
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesImmutable.selector, role, account));
        market.grantRole(role, account);
    }

    // ------------------------------------------------------------ before wiring ends

    function test_wire_guards() public {
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesZeroWirer.selector));
        new StakeVault(token, 1, address(0));
        StakeVault v = new StakeVault(token, 1, address(this));
        AuditorRegistry r = new AuditorRegistry(token, 1, 1, 1, address(this));
        JobMarket m = new JobMarket(v, address(this));
        // Only the wirer named at construction wires.
        vm.prank(STRANGER);
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesNotWirer.selector, STRANGER, address(this)));
        v.wire(STRANGER, STRANGER);
        vm.prank(STRANGER);
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesNotWirer.selector, STRANGER, address(this)));
        r.wire(STRANGER);
        vm.prank(STRANGER);
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesNotWirer.selector, STRANGER, address(this)));
        m.wire(STRANGER, STRANGER);
        // The roles that move funds need a holder.
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesZeroHolder.selector, v.MARKET_ROLE()));
        v.wire(address(0), address(this));
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesZeroHolder.selector, r.DISPUTE_ROLE()));
        r.wire(address(0));
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesZeroHolder.selector, m.DISPUTE_ROLE()));
        m.wire(address(0), address(this));
        // Wired once; the second call finds no wirer.
        v.wire(address(m), address(0));
        vm.expectRevert(abi.encodeWithSelector(IFixedRoles.FixedRolesNotWirer.selector, address(this), address(0)));
        v.wire(address(m), address(0));
        assertTrue(v.hasRole(v.MARKET_ROLE(), address(m)), "market wired");
        assertTrue(!v.hasRole(v.SLASHER_ROLE(), address(0)), "no slasher");
    }
}
