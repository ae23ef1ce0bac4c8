// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {Leaves} from "./Leaves.sol";
import {TestToken} from "../mocks/TestToken.sol";
import {DisputeCaller} from "../mocks/DisputeCaller.sol";
import {StakeVault} from "../StakeVault.sol";
import {AuditorRegistry} from "../AuditorRegistry.sol";
import {JobMarket} from "../JobMarket.sol";
import {IJobMarket} from "../interfaces/IJobMarket.sol";
import {IStakeVault} from "../interfaces/IStakeVault.sol";
import {IAuditorRegistry} from "../interfaces/IAuditorRegistry.sol";

/// @notice Invariant-test handler: a random actor drives the whole contract set through valid-looking
/// calls (and a few deliberately bad ones whose revert it checks). Ghost variables record what the
/// invariants need: call counts, double-claim and over-slash violations.
contract MarketHandler {
    TestToken public immutable token;
    StakeVault public immutable vault;
    AuditorRegistry public immutable registry;
    JobMarket public immutable market;
    DisputeCaller public immutable dispute;

    error SlashWithinLockFailed(uint256 jobId, uint256 locked, uint256 amount);

    address[] internal _actors;

    uint256 public ghost_calls;
    uint256 public ghost_commits;
    uint256 public ghost_finalized;
    uint256 public ghost_claims;
    uint256 public ghost_slashes;
    /// @dev Must stay 0: a second claim of the same credit that did not revert, or a claim paying a wrong amount.
    uint256 public ghost_doubleClaims;
    /// @dev Must stay 0: a slash above the lock that did not revert.
    uint256 public ghost_overSlashes;
    /// @dev Must stay 0: a call whose preconditions the handler checked reverted anyway (a liveness bug,
    /// e.g. finalize stuck). The revert data of the last one is kept for debugging.
    uint256 public ghost_unexpectedReverts;
    bytes public lastUnexpectedRevert;

    constructor(TestToken token_, StakeVault vault_, AuditorRegistry registry_, JobMarket market_, DisputeCaller dispute_) {
        token = token_;
        vault = vault_;
        registry = registry_;
        market = market_;
        dispute = dispute_;
        for (uint256 i = 1; i <= 4; ++i) {
            address a = address(uint160(0xA000 + i));
            _actors.push(a);
            token.mint(a, 1e30);
            vm.startPrank(a);
            token.approve(address(vault), type(uint256).max);
            token.approve(address(registry), type(uint256).max);
            token.approve(address(market), type(uint256).max);
            vm.stopPrank();
        }
    }

    function actors() external view returns (address[] memory) {
        return _actors;
    }

    // ------------------------------------------------------------ market

    function createJob(uint256 actorSeed, uint128 payment, uint16 segments, uint128 stake, uint16 timeoutBps) external {
        address buyer = _actor(actorSeed);
        payment = uint128(_bound(payment, 1, 1e24));
        IJobMarket.Policy memory p = IJobMarket.Policy({
            segments: uint16(_bound(segments, 1, 4)),
            stepsPerSegment: 4,
            requiredStake: uint128(_bound(stake, 1, 1e22)),
            segmentTimeout: 1 hours,
            challengeWindow: 1 days,
            challengerBps: 5_000,
            buyerBps: 3_333,
            burnBps: 1_667,
            timeoutSlashBps: uint16(_bound(timeoutBps, market.MIN_TIMEOUT_SLASH_BPS(), 10_000))
        });
        vm.prank(buyer);
        _ok(address(market), abi.encodeCall(JobMarket.createJob, (keccak256(abi.encode(ghost_calls)), "ipfs://manifest", address(token), payment, p)));
        ++ghost_calls;
    }

    function cancelJob(uint256 jobSeed) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0 || j.status != IJobMarket.JobStatus.Open) return;
        vm.prank(j.buyer);
        _ok(address(market), abi.encodeCall(JobMarket.cancelJob, (id)));
        ++ghost_calls;
    }

    function acceptJob(uint256 jobSeed, uint256 actorSeed) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0 || j.status != IJobMarket.JobStatus.Open) return;
        address provider = _actor(actorSeed);
        uint256 free = vault.accountOf(provider).free;
        if (free < j.policy.requiredStake) {
            vm.prank(provider);
            _ok(address(vault), abi.encodeCall(StakeVault.deposit, (j.policy.requiredStake - free)));
        }
        vm.prank(provider);
        _ok(address(market), abi.encodeCall(JobMarket.acceptJob, (id)));
        ++ghost_calls;
    }

    function commitSegment(uint256 jobSeed, bytes32 root) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0 || j.status != IJobMarket.JobStatus.Active || block.timestamp > j.deadline) return;
        root; // NOTE: kept as a fuzz input; the leaves depend on (job, step) only so that segments join
        vm.prank(j.provider);
        _ok(
            address(market),
            abi.encodeCall(JobMarket.commitSegment, (id, j.nextSegment, Leaves.hashes(bytes32(0), id, j.nextSegment, 4), 1234, "bafy-checkpoint"))
        );
        ++ghost_commits;
        ++ghost_calls;
    }

    /// @notice Moves one job along its happy path by up to `steps` transitions (accept, commit, finalize),
    /// so that short call sequences still reach the end states.
    function advance(uint256 jobSeed, uint256 actorSeed, uint8 steps) external {
        steps = uint8(_bound(steps, 1, 6));
        for (uint256 s; s < steps; ++s) {
            (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
            if (id == 0) return;
            if (j.status == IJobMarket.JobStatus.Open) {
                this.acceptJob(jobSeed, actorSeed);
            } else if (j.status == IJobMarket.JobStatus.Active) {
                if (block.timestamp > j.deadline) return;
                this.commitSegment(jobSeed, keccak256(abi.encode(jobSeed, s)));
            } else if (j.status == IJobMarket.JobStatus.Committed && j.openDisputes == 0) {
                this.finalize(jobSeed);
            } else if (j.status == IJobMarket.JobStatus.TimedOut && j.openDisputes == 0) {
                this.reportTimeout(jobSeed); // re-opens it after its window
            } else {
                return;
            }
        }
    }

    /// @notice A whole dispute on one job: freeze it, then settle with the provider at fault or not.
    function disputeJob(uint256 jobSeed, uint256 challengerSeed, bool providerAtFault) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0) return;
        this.freeze(jobSeed);
        if (market.getJob(id).openDisputes == j.openDisputes) return; // not freezable now
        if (providerAtFault) this.settleProviderFault(jobSeed, challengerSeed);
        else this.settleNoFault(jobSeed);
    }

    /// @notice Claims every credit `actor` has in the three contracts.
    function claimAll(uint256 actorSeed) external {
        this.claimMarket(actorSeed);
        this.claimVault(actorSeed);
        this.claimRegistry(actorSeed);
    }

    /// @notice Reports an Active job's timeout, or re-opens a TimedOut one after its window (warping past deadlines).
    function reportTimeout(uint256 jobSeed) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0 || j.openDisputes != 0) return;
        if (j.status != IJobMarket.JobStatus.Active && j.status != IJobMarket.JobStatus.TimedOut) return;
        if (block.timestamp <= j.deadline) vm.warp(uint256(j.deadline) + 1);
        bool timedOut = j.status == IJobMarket.JobStatus.TimedOut;
        _ok(address(market), timedOut ? abi.encodeCall(JobMarket.reopenJob, (id)) : abi.encodeCall(JobMarket.reportTimeout, (id)));
        ++ghost_calls;
    }

    function finalize(uint256 jobSeed) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0 || j.status != IJobMarket.JobStatus.Committed || j.openDisputes != 0) return;
        if (block.timestamp <= j.deadline) vm.warp(uint256(j.deadline) + 1);
        _ok(address(market), abi.encodeCall(JobMarket.finalize, (id)));
        ++ghost_finalized;
        ++ghost_calls;
    }

    function freeze(uint256 jobSeed) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0) return;
        if (j.status == IJobMarket.JobStatus.Active && block.timestamp <= j.deadline) {
            _ok(address(dispute), abi.encodeCall(DisputeCaller.freeze, (id)));
        } else if (
            (j.status == IJobMarket.JobStatus.Committed || j.status == IJobMarket.JobStatus.TimedOut)
                && block.timestamp <= j.deadline
        ) {
            _ok(address(dispute), abi.encodeCall(DisputeCaller.freeze, (id)));
        } else {
            return;
        }
        ++ghost_calls;
    }

    function settleProviderFault(uint256 jobSeed, uint256 /* challengerSeed */) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0 || j.openDisputes == 0) return;
        _ok(address(dispute), abi.encodeCall(DisputeCaller.settleProviderFault, (id)));
        ++ghost_slashes;
        ++ghost_calls;
    }

    function settleNoFault(uint256 jobSeed) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0 || j.openDisputes == 0) return;
        _ok(address(dispute), abi.encodeCall(DisputeCaller.settleNoFault, (id, false)));
        ++ghost_calls;
    }

    /// @notice A direct slash by the dispute role with a random amount, possibly above the lock.
    function slash(uint256 jobSeed, uint256 amount, uint256 recipientSeed, bool burnHalf) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0 || j.provider == address(0)) return;
        uint256 locked = vault.lockedFor(j.provider, id);
        // Mostly within the lock (to reach later calls on a partly slashed job), sometimes above it.
        amount = amount % 4 == 0 ? _bound(amount, 1, 2 * locked + 1) : _bound(amount, 1, locked == 0 ? 1 : locked);
        address[] memory recipients = new address[](2);
        uint256[] memory amounts = new uint256[](2);
        recipients[0] = _actor(recipientSeed);
        recipients[1] = vault.BURN_ADDRESS();
        amounts[1] = burnHalf ? amount / 2 : 0;
        amounts[0] = amount - amounts[1];
        try dispute.slash(j.provider, id, amount, recipients, amounts) {
            if (amount > locked) ++ghost_overSlashes;
            ++ghost_slashes;
        } catch {
            // INVARIANT: only a slash above the lock may fail here.
            if (amount <= locked) revert SlashWithinLockFailed(id, locked, amount);
        }
        ++ghost_calls;
    }

    function claimMarket(uint256 actorSeed) external {
        address a = _actor(actorSeed);
        uint256 credit = market.creditOf(a, address(token));
        if (credit == 0) return;
        uint256 before = token.balanceOf(a);
        vm.prank(a);
        _ok(address(market), abi.encodeCall(JobMarket.claim, (address(token))));
        if (token.balanceOf(a) - before != credit) ++ghost_doubleClaims;
        vm.prank(a);
        try market.claim(address(token)) {
            ++ghost_doubleClaims;
        } catch {}
        ++ghost_claims;
        ++ghost_calls;
    }

    // ------------------------------------------------------------ vault

    function deposit(uint256 actorSeed, uint256 amount) external {
        address a = _actor(actorSeed);
        vm.prank(a);
        _ok(address(vault), abi.encodeCall(StakeVault.deposit, (_bound(amount, 1, 1e22))));
        ++ghost_calls;
    }

    function requestWithdrawal(uint256 actorSeed, uint256 amount) external {
        address a = _actor(actorSeed);
        uint256 free = vault.accountOf(a).free;
        if (free == 0) return;
        vm.prank(a);
        _ok(address(vault), abi.encodeCall(StakeVault.requestWithdrawal, (_bound(amount, 1, free))));
        ++ghost_calls;
    }

    function withdraw(uint256 actorSeed) external {
        address a = _actor(actorSeed);
        IStakeVault.Account memory acc = vault.accountOf(a);
        if (acc.pendingWithdrawal == 0) return;
        if (block.timestamp < acc.withdrawableAt) vm.warp(acc.withdrawableAt);
        vm.prank(a);
        _ok(address(vault), abi.encodeCall(StakeVault.withdraw, ()));
        ++ghost_calls;
    }

    function claimVault(uint256 actorSeed) external {
        address a = _actor(actorSeed);
        uint256 credit = vault.creditOf(a);
        if (credit == 0) return;
        uint256 before = token.balanceOf(a);
        vm.prank(a);
        _ok(address(vault), abi.encodeCall(StakeVault.claim, ()));
        if (token.balanceOf(a) - before != credit) ++ghost_doubleClaims;
        vm.prank(a);
        try vault.claim() {
            ++ghost_doubleClaims;
        } catch {}
        ++ghost_claims;
        ++ghost_calls;
    }

    // ------------------------------------------------------------ auditors

    function postBond(uint256 actorSeed, uint256 amount) external {
        address a = _actor(actorSeed);
        IAuditorRegistry.Auditor memory r = registry.auditorOf(a);
        if (r.status == IAuditorRegistry.AuditorStatus.Exiting) return;
        uint256 minTopUp = r.status == IAuditorRegistry.AuditorStatus.Active || r.bond >= registry.minBond()
            ? 1
            : registry.minBond() - r.bond;
        vm.prank(a);
        _ok(address(registry), abi.encodeCall(AuditorRegistry.postBond, (_bound(amount, minTopUp, minTopUp + 1e21))));
        ++ghost_calls;
    }

    function requestExit(uint256 actorSeed) external {
        address a = _actor(actorSeed);
        IAuditorRegistry.AuditorStatus s = registry.auditorOf(a).status;
        if (s != IAuditorRegistry.AuditorStatus.Active && s != IAuditorRegistry.AuditorStatus.Inactive) return;
        vm.prank(a);
        _ok(address(registry), abi.encodeCall(AuditorRegistry.requestExit, ()));
        ++ghost_calls;
    }

    function leave(uint256 actorSeed) external {
        address a = _actor(actorSeed);
        IAuditorRegistry.Auditor memory r = registry.auditorOf(a);
        if (r.status != IAuditorRegistry.AuditorStatus.Exiting) return;
        if (block.timestamp < r.exitableAt) vm.warp(r.exitableAt);
        vm.prank(a);
        _ok(address(registry), abi.encodeCall(AuditorRegistry.leave, ()));
        ++ghost_calls;
    }

    function forfeit(uint256 actorSeed, uint256 amount, uint256 toSeed) external {
        address a = _actor(actorSeed);
        if (registry.auditorOf(a).bond == 0) this.postBond(actorSeed, amount);
        uint256 bond = registry.auditorOf(a).bond;
        if (bond == 0) return;
        _ok(address(dispute), abi.encodeCall(DisputeCaller.forfeit, (a, _bound(amount, 1, bond), _actor(toSeed))));
        ++ghost_slashes;
        ++ghost_calls;
    }

    function claimRegistry(uint256 actorSeed) external {
        address a = _actor(actorSeed);
        uint256 credit = registry.creditOf(a);
        if (credit == 0) return;
        uint256 before = token.balanceOf(a);
        vm.prank(a);
        _ok(address(registry), abi.encodeCall(AuditorRegistry.claim, ()));
        if (token.balanceOf(a) - before != credit) ++ghost_doubleClaims;
        vm.prank(a);
        try registry.claim() {
            ++ghost_doubleClaims;
        } catch {}
        ++ghost_claims;
        ++ghost_calls;
    }

    function warp(uint256 secondsAhead) external {
        vm.warp(block.timestamp + _bound(secondsAhead, 1, 2 days));
    }

    // ------------------------------------------------------------ helpers

    function _actor(uint256 seed) internal view returns (address) {
        return _actors[seed % _actors.length];
    }

    function _job(uint256 seed) internal view returns (uint256 id, IJobMarket.JobView memory j) {
        uint256 n = market.jobCount();
        if (n == 0) return (0, j);
        id = 1 + (seed % n);
        j = market.getJob(id);
    }

    /// @dev Calls `target` (after any vm.prank) and records a revert instead of propagating it.
    function _ok(address target, bytes memory data) internal returns (bool ok) {
        bytes memory ret;
        // solhint-disable-next-line avoid-low-level-calls
        (ok, ret) = target.call(data);
        if (!ok) {
            ++ghost_unexpectedReverts;
            lastUnexpectedRevert = ret;
        }
    }

    function _bound(uint256 x, uint256 min, uint256 max) internal pure returns (uint256) {
        if (x >= min && x <= max) return x;
        return min + (x % (max - min + 1));
    }
}
