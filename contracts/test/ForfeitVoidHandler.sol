// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {vm} from "./Vm.sol";
import {DisputeFixture} from "./DisputeFixture.sol";
import {MassDisputeHandler} from "./MassDisputeHandler.sol";
import {IDisputeGameTypes} from "../interfaces/IDisputeGame.sol";

/// @notice The forfeit-voiding edge, played on its own. A vote is voided (DisputeSettlement._voidForfeited) when its
/// member forfeited after the dispute opened and holds less than one panelForfeit: so whoever can make honest members
/// forfeit can take their votes out of the count. An honest member forfeits only by staying silent or by voting
/// against a decided outcome; the attacker of MassDisputeHandler (1..3 of 7 or 3 of 12 auditors, every step of honest
/// jobs disputed, its members voting Fault or silent in any round, decoy disputes included) tries the second. Unlike
/// MassDisputeHandler, every round is played for every open dispute at once (voteAll: draw, every honest member commits
/// and reveals the truth, then one time jump and every resolve), so no honest member is ever silent: the handler
/// counts every honest seat whose vote was voided (ghost_honestVoided) and every honest forfeit (ghost_honestForfeits).
contract ForfeitVoidHandler is MassDisputeHandler {
    /// @dev Must stay 0 while the attacker holds fewer than half of round 2's seats: disputes with a voided honest seat.
    uint256 public ghost_honestVoided;
    /// @dev Must stay 0 while the attacker holds fewer than half of round 2's seats: bond the honest auditors lost (they
    /// never stay silent here).
    uint256 public ghost_honestForfeits;
    mapping(address member => uint256 bond) internal _bond0;
    bool internal _bondsRecorded;

    constructor(DisputeFixture f) MassDisputeHandler(f) {}

    /// @notice Plays the current round of every open dispute together: draws, commits and reveals by every member (the
    /// attacker's members vote Fault, or stay silent when `attackerSilent`; honest members always vote the truth), then
    /// one time jump past the reveal deadlines, every resolve, and the honest provider's appeal of every unanimous
    /// first-round Fault.
    function voteAll(bool attackerSilent) external {
        ++ghost_calls;
        if (!configured) return;
        _recordBonds();
        uint256 n = _disputes.length;
        uint256 lastSeed;
        for (uint256 i; i < n; ++i) {
            IDisputeGameTypes.DisputeView memory d = game.getDispute(_disputes[i]);
            if (d.status == IDisputeGameTypes.Status.Open && d.seedBlock > lastSeed) lastSeed = d.seedBlock;
        }
        if (lastSeed == 0) return;
        if (block.number <= lastSeed) VMB.roll(lastSeed + 1);
        uint64 latestReveal;
        for (uint256 i; i < n; ++i) {
            uint256 id = _disputes[i];
            IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
            if (d.status != IDisputeGameTypes.Status.Open) continue;
            (uint64 appealUntil,) = game.faultAppealOf(id);
            if (appealUntil != 0) continue;
            if (block.timestamp <= d.challengedAt) vm.warp(d.challengedAt + 1);
            if (d.panel.length == 0) {
                bytes32 bh = blockhash(d.seedBlock);
                try game.drawPanel(id) {} catch {}
                d = game.getDispute(id);
                if (d.panel.length != 0 && bh != bytes32(0)) ghost_roundSeed[id][d.round] = keccak256(abi.encode(bh, id));
            }
            for (uint256 j; j < d.panel.length; ++j) {
                address m = d.panel[j];
                if (isAttacker[m] && attackerSilent) continue;
                (bytes32 c,) = game.roundBallotOf(id, d.round, m);
                if (c != bytes32(0)) continue;
                vm.prank(m);
                game.commitVote(id, game.voteCommitment(_voteOf(m), _roundSalt(m, id, d.round), m));
            }
            if (d.revealDeadline > latestReveal) latestReveal = d.revealDeadline;
        }
        for (uint256 i; i < n; ++i) {
            uint256 id = _disputes[i];
            IDisputeGameTypes.DisputeView memory d = game.getDispute(id);
            if (d.status != IDisputeGameTypes.Status.Open || d.panel.length == 0) continue;
            if (d.commits < d.panel.length && block.timestamp <= d.commitDeadline) vm.warp(d.commitDeadline + 1);
            for (uint256 j; j < d.panel.length; ++j) {
                address m = d.panel[j];
                (bytes32 c, IDisputeGameTypes.Vote v) = game.roundBallotOf(id, d.round, m);
                if (c == bytes32(0) || v != IDisputeGameTypes.Vote.None) continue;
                vm.prank(m);
                game.revealVote(id, _voteOf(m), _roundSalt(m, id, d.round));
            }
        }
        if (block.timestamp <= latestReveal) vm.warp(latestReveal + 1);
        for (uint256 i; i < n; ++i) {
            uint256 id = _disputes[i];
            if (game.getDispute(id).status != IDisputeGameTypes.Status.Open) continue;
            (uint64 appealUntil,) = game.faultAppealOf(id);
            if (appealUntil != 0) continue;
            _resolve(id);
            _countVoided(id);
        }
        _countForfeits();
    }

    // ---------------------------------------------------------------- internals

    /// @dev Counts dispute `id` when some honest seat of it (any round) met the voiding condition: it forfeited after the
    /// dispute opened and holds less than one panelForfeit (MassDisputeHandler.honestVoided).
    function _countVoided(uint256 id) internal {
        if (honestVoided(id)) ++ghost_honestVoided;
    }

    function _recordBonds() internal {
        if (_bondsRecorded) return;
        _bondsRecorded = true;
        for (uint256 i; i < _pool.length; ++i) _bond0[_pool[i]] = registry.auditorOf(_pool[i]).bond;
    }

    function _countForfeits() internal {
        uint256 lost;
        for (uint256 i; i < _pool.length; ++i) {
            address m = _pool[i];
            if (isAttacker[m]) continue;
            uint256 b = registry.auditorOf(m).bond;
            if (b < _bond0[m]) lost += _bond0[m] - b;
        }
        ghost_honestForfeits = lost;
    }
}
