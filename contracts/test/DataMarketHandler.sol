// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {Leaves} from "./Leaves.sol";
import {TestToken} from "../mocks/TestToken.sol";
import {StakeVault} from "../StakeVault.sol";
import {JobMarket} from "../JobMarket.sol";
import {DataRegistry} from "../DataRegistry.sol";
import {IJobMarket} from "../interfaces/IJobMarket.sol";

/// @notice Invariant-test handler for jobs with data shares: random buyers create jobs over random subsets
/// of three registered corpora, providers accept, commit, time out and finish, the evaluator (the test
/// contract, through `evaluator`) records weights, contributors retire corpora, payout addresses move their payouts, anyone
/// finalizes and claims. At every finalize it checks that the credits it produced add up to the escrowed
/// payment to the wei (ghost_conservationViolations must stay 0).
contract DataMarketHandler {
    TestToken public immutable token;
    StakeVault public immutable vault;
    JobMarket public immutable market;
    DataRegistry public immutable data;
    address public immutable evaluator;
    address public constant CONTRIBUTOR = address(0xC0);

    address[] internal _actors;
    address[] internal _payouts;
    uint64[] internal _corpusIds;

    uint256 public ghost_calls;
    uint256 public ghost_finalized;
    uint256 public ghost_finalizedWithData;
    /// @dev Must stay 0: a finalize whose credits (contributors + provider + buyer) differ from the payment.
    uint256 public ghost_conservationViolations;
    /// @dev Must stay 0: a call whose preconditions the handler checked reverted anyway.
    uint256 public ghost_unexpectedReverts;
    bytes public lastUnexpectedRevert;

    constructor(TestToken token_, StakeVault vault_, JobMarket market_, DataRegistry data_, address evaluator_) {
        token = token_;
        vault = vault_;
        market = market_;
        data = data_;
        evaluator = evaluator_;
        for (uint256 i = 1; i <= 3; ++i) {
            address a = address(uint160(0xE000 + i));
            _actors.push(a);
            token.mint(a, 1e30);
            vm.startPrank(a);
            token.approve(address(vault), type(uint256).max);
            token.approve(address(market), type(uint256).max);
            vault.deposit(1e26);
            vm.stopPrank();
        }
        for (uint256 i = 1; i <= 4; ++i) {
            _payouts.push(address(uint160(0xF000 + i)));
        }
        for (uint256 i; i < 3; ++i) {
            vm.prank(CONTRIBUTOR);
            _corpusIds.push(data.register(keccak256(abi.encode("corpus", i)), "bafkrei-c", "CC0-1.0", _payouts[i], bytes32(0)));
        }
    }

    /// @notice Everyone who can hold a JobMarket credit here: actors (buyers, providers) and payout addresses.
    function accounts() external view returns (address[] memory all) {
        all = new address[](_actors.length + _payouts.length);
        for (uint256 i; i < _actors.length; ++i) {
            all[i] = _actors[i];
        }
        for (uint256 i; i < _payouts.length; ++i) {
            all[_actors.length + i] = _payouts[i];
        }
    }

    function createJob(uint256 actorSeed, uint128 payment, uint16 segments, uint16 bps, uint8 mask, uint96 tokens)
        external
    {
        mask = uint8(_bound(mask, 1, 7));
        uint256 n;
        for (uint256 i; i < 3; ++i) {
            if (mask & (1 << i) != 0 && !data.corpusOf(_corpusIds[i]).retired) ++n;
        }
        IJobMarket.Terms memory t;
        t.corpora = new IJobMarket.CorpusUse[](n);
        uint256 k;
        for (uint256 i; i < 3; ++i) {
            if (mask & (1 << i) == 0 || data.corpusOf(_corpusIds[i]).retired) continue;
            t.corpora[k++] = IJobMarket.CorpusUse({corpusId: _corpusIds[i], tokens: uint96(_bound(tokens, 1, 1e24)) + uint96(i)});
        }
        t.dataShareBps = n == 0 ? 0 : uint16(_bound(bps, 0, 10_000));
        IJobMarket.Policy memory p = IJobMarket.Policy({
            segments: uint16(_bound(segments, 1, 3)),
            stepsPerSegment: 4,
            requiredStake: 1e20,
            segmentTimeout: 1 hours,
            challengeWindow: 1 days,
            challengerBps: 5_000,
            buyerBps: 3_000,
            burnBps: 2_000,
            timeoutSlashBps: 1_000
        });
        vm.prank(_actor(actorSeed));
        _ok(
            address(market),
            abi.encodeCall(
                JobMarket.createJobWithTerms,
                (keccak256(abi.encode(ghost_calls)), "ipfs://m", address(token), uint128(_bound(payment, 1, 1e24)), p, t)
            )
        );
        ++ghost_calls;
    }

    /// @notice Moves a job by up to `steps` transitions: accept, commit, time out (warp), finalize (warp).
    function advance(uint256 jobSeed, uint256 actorSeed, uint8 steps, bool timeout) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0) return;
        steps = uint8(_bound(steps, 1, 6));
        for (uint256 s; s < steps; ++s) {
            j = market.getJob(id);
            if (j.status == IJobMarket.JobStatus.Open) {
                vm.prank(_actor(actorSeed + s));
                _ok(address(market), abi.encodeCall(JobMarket.acceptJob, (id)));
            } else if (j.status == IJobMarket.JobStatus.Active) {
                if (timeout) {
                    vm.warp(uint256(j.deadline) + 1);
                    _ok(address(market), abi.encodeCall(JobMarket.reportTimeout, (id)));
                    timeout = false;
                } else {
                    if (block.timestamp > j.deadline) return;
                    vm.prank(j.provider);
                    _ok(
                        address(market),
                        abi.encodeCall(
                            JobMarket.commitSegment,
                            (id, j.nextSegment, Leaves.hashes(bytes32(0), id, j.nextSegment, 4), 1, "c")
                        )
                    );
                }
            } else if (j.status == IJobMarket.JobStatus.Committed) {
                if (block.timestamp <= j.deadline) vm.warp(uint256(j.deadline) + 1);
                _finalize(id, j);
            } else if (j.status == IJobMarket.JobStatus.TimedOut) {
                if (block.timestamp <= j.deadline) vm.warp(uint256(j.deadline) + 1);
                _ok(address(market), abi.encodeCall(JobMarket.reopenJob, (id)));
            } else {
                return;
            }
        }
        ++ghost_calls;
    }

    function recordImprovement(uint256 jobSeed, uint256 corpusSeed, uint32 weightE6) external {
        (uint256 id, IJobMarket.JobView memory j) = _job(jobSeed);
        if (id == 0) return;
        if (
            j.status != IJobMarket.JobStatus.Open && j.status != IJobMarket.JobStatus.Active
                && j.status != IJobMarket.JobStatus.Committed && j.status != IJobMarket.JobStatus.TimedOut
        ) return;
        (,, IJobMarket.JobCorpus[] memory corpora) = market.termsOf(id);
        if (corpora.length == 0) return;
        IJobMarket.JobCorpus memory c = corpora[corpusSeed % corpora.length];
        if (c.weighted) return;
        vm.prank(evaluator);
        _ok(
            address(market),
            abi.encodeCall(JobMarket.recordImprovement, (id, c.corpusId, uint32(_bound(weightE6, 0, 10_000_000))))
        );
        ++ghost_calls;
    }

    function retire(uint256 corpusSeed) external {
        uint64 cid = _corpusIds[corpusSeed % _corpusIds.length];
        if (data.corpusOf(cid).retired) return;
        vm.prank(CONTRIBUTOR);
        _ok(address(data), abi.encodeCall(DataRegistry.retire, (cid)));
        ++ghost_calls;
    }

    function setPayout(uint256 corpusSeed, uint256 payoutSeed) external {
        uint64 cid = _corpusIds[corpusSeed % _corpusIds.length];
        // Only the current payout address moves a payout (IDataRegistry: payout rule).
        vm.prank(data.payoutOf(cid));
        _ok(address(data), abi.encodeCall(DataRegistry.setPayout, (cid, _payouts[payoutSeed % _payouts.length])));
        ++ghost_calls;
    }

    function claim(uint256 accountSeed) external {
        address[] memory all = this.accounts();
        address who = all[accountSeed % all.length];
        uint256 credit = market.creditOf(who, address(token));
        if (credit == 0) return;
        uint256 before = token.balanceOf(who);
        vm.prank(who);
        _ok(address(market), abi.encodeCall(JobMarket.claim, (address(token))));
        if (token.balanceOf(who) != before + credit) ++ghost_conservationViolations;
        ++ghost_calls;
    }

    function _finalize(uint256 id, IJobMarket.JobView memory j) internal {
        address[] memory all = this.accounts();
        uint256 before;
        for (uint256 i; i < all.length; ++i) {
            before += market.creditOf(all[i], address(token));
        }
        if (!_ok(address(market), abi.encodeCall(JobMarket.finalize, (id)))) return;
        uint256 afterSum;
        for (uint256 i; i < all.length; ++i) {
            afterSum += market.creditOf(all[i], address(token));
        }
        // contributor credits + provider credits + refunds == escrowed payment, to the wei
        if (afterSum - before != j.payment) ++ghost_conservationViolations;
        ++ghost_finalized;
        (, uint16 bps, IJobMarket.JobCorpus[] memory corpora) = market.termsOf(id);
        if (bps != 0 && corpora.length != 0) ++ghost_finalizedWithData;
    }

    function _actor(uint256 seed) internal view returns (address) {
        return _actors[seed % _actors.length];
    }

    function _job(uint256 seed) internal view returns (uint256 id, IJobMarket.JobView memory j) {
        uint256 count = market.jobCount();
        if (count == 0) return (0, j);
        id = 1 + (seed % count);
        j = market.getJob(id);
    }

    function _ok(address target, bytes memory callData) internal returns (bool ok) {
        bytes memory ret;
        // A low-level call so that an unexpected revert is counted instead of aborting the run.
        // solhint-disable-next-line avoid-low-level-calls
        (ok, ret) = target.call(callData);
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
