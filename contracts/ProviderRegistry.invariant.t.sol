// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {InvariantBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {AuditorKeys} from "./test/RegistryFixture.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {ProviderRegistry} from "./ProviderRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";

/// @notice Random challengers, panel members and times against statement disputes: opens disputes, votes either way
/// (members and outsiders), lets deadlines pass, settles and claims. Counts calls whose outcome breaks a rule.
contract ProviderRegistryDisputeHandler {
    ProviderRegistry internal immutable _providers;
    AuditorRegistry internal immutable _auditors;
    TestToken internal immutable _token;
    address[] internal _providerList;
    address[] internal _challengers;
    address[] internal _members;

    uint256 public ghost_calls;
    uint256 public ghost_decided;
    /// An upheld dispute left a signer with a bond, or left its (still standing) record counting.
    uint256 public ghost_upheldViolations;

    constructor(ProviderRegistry providers, AuditorRegistry auditors, TestToken token, address[] memory providerList, address[] memory members) {
        _providers = providers;
        _auditors = auditors;
        _token = token;
        _providerList = providerList;
        _members = members;
        for (uint256 i; i < 3; ++i) {
            _challengers.push(address(uint160(0xC000 + i)));
        }
    }

    function challengers() external view returns (address[] memory) {
        return _challengers;
    }

    function dispute(uint256 p, uint256 c) external {
        ++ghost_calls;
        address challenger = _challengers[c % _challengers.length];
        uint256 bond = _providers.disputeBond();
        _token.mint(challenger, bond);
        vm.startPrank(challenger);
        _token.approve(address(_providers), bond);
        try _providers.disputeStatement(_providerList[p % _providerList.length], abi.encode("evidence", _providerList[p % _providerList.length])) {} catch {}
        vm.stopPrank();
    }

    function vote(uint256 id, uint256 who, bool statementFalse) external {
        ++ghost_calls;
        uint256 n = _disputeCount();
        if (n == 0) return;
        id = 1 + (id % n);
        IProviderRegistry.Dispute memory d = _providers.disputeOf(id);
        if (block.number <= d.seedBlock) vm.roll(d.seedBlock + 1);
        if (block.timestamp <= d.asOf) vm.warp(d.asOf + 1); // a snapshot is drawable once its second is over
        // mostly a drawn panel member (the panel is drawn here once the seed is mined), sometimes any auditor
        address voter = _members[who % _members.length];
        if (who % 4 != 0) {
            try _providers.drawDisputePanel(id) returns (address[] memory panel) {
                voter = panel[(who >> 2) % panel.length];
            } catch {}
        }
        address[] memory signers = _signersOfRequest(d);
        vm.prank(voter);
        try _providers.voteDispute(id, statementFalse) {
            IProviderRegistry.Dispute memory after_ = _providers.disputeOf(id);
            if (after_.outcome != 0) ++ghost_decided;
            if (after_.outcome == 1) {
                for (uint256 i; i < signers.length; ++i) {
                    if (_auditors.auditorOf(signers[i]).bond != 0) ++ghost_upheldViolations;
                }
                IProviderRegistry.Attestation memory a = _providers.attestationOf(d.provider);
                if (a.requestId == d.requestId && _providers.effectiveTier(d.provider) != 4) ++ghost_upheldViolations;
            }
        } catch {}
    }

    function settle(uint256 id, uint256 wait) external {
        ++ghost_calls;
        vm.warp(block.timestamp + (wait % 2 days));
        uint256 n = _disputeCount();
        if (n == 0) return;
        try _providers.settleDispute(1 + (id % n)) {} catch {}
    }

    function claim(uint256 c) external {
        ++ghost_calls;
        vm.prank(_challengers[c % _challengers.length]);
        try _providers.claimCredit() {} catch {}
    }

    function _disputeCount() internal view returns (uint256 n) {
        while (_providers.disputeOf(n + 1).provider != address(0)) ++n;
    }

    /// @dev The statement's signers as recorded when the dispute opened (its record may since be revoked, so read the
    /// committee and take the auditors the fixture signed with: the first two of the committee, ascending).
    function _signersOfRequest(IProviderRegistry.Dispute memory d) internal view returns (address[] memory s) {
        IProviderRegistry.Attestation memory a = _providers.attestationOf(d.provider);
        if (a.requestId != d.requestId) return new address[](0);
        return _providers.signersOf(d.provider);
    }
}

/// @notice Invariants of statement disputes: the registry always holds exactly the bonds of open disputes plus every
/// unclaimed credit (it pays out every wei it holds and nothing more), and an upheld dispute always leaves its signers
/// without a bond and its record not counting. A campaign run reaches a decision only sometimes (votes go either way
/// and deadlines pass), so test_handler_votesDecide shows the handler can decide; the invariants hold in every run.
contract ProviderRegistryInvariantTest is InvariantBase, AuditorKeys {
    TestToken internal token;
    AuditorRegistry internal auditors;
    ProviderRegistry internal providers;
    ProviderRegistryDisputeHandler internal handler;

    function setUp() public {
        vm.warp(1_700_000_000);
        vm.roll(1_000);
        token = new TestToken("Test", "TST");
        auditors = new AuditorRegistry(token, AUDITOR_BOND, 14 days, 1 hours, address(this));
        providers = new ProviderRegistry(auditors, 3, 2, 30 days, 2, 1 days, 1e18);
        auditors.wireAttestation(address(providers));
        _bondAuditors(token, auditors, 9);
        address[] memory list = new address[](3);
        for (uint256 i; i < 3; ++i) {
            list[i] = address(uint160(0xB100 + i));
            _attest(providers, list[i], uint8(1 + i), uint64(block.timestamp + 20 days), 2);
        }
        address[] memory members = new address[](_auditorKeys.length);
        for (uint256 i; i < members.length; ++i) {
            members[i] = vm.addr(_auditorKeys[i]);
        }
        handler = new ProviderRegistryDisputeHandler(providers, auditors, token, list, members);
        targetContract(address(handler));
        bytes4[] memory selectors = new bytes4[](4);
        selectors[0] = ProviderRegistryDisputeHandler.dispute.selector;
        selectors[1] = ProviderRegistryDisputeHandler.vote.selector;
        selectors[2] = ProviderRegistryDisputeHandler.settle.selector;
        selectors[3] = ProviderRegistryDisputeHandler.claim.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: selectors}));
        handler.dispute(0, 0); // seed one dispute so short runs vote on it
    }

    function invariant_holdsExactlyOpenBondsPlusCredits() public view {
        uint256 owed;
        for (uint256 id = 1; providers.disputeOf(id).provider != address(0); ++id) {
            IProviderRegistry.Dispute memory d = providers.disputeOf(id);
            if (d.outcome == 0) owed += d.bond;
        }
        address[] memory cs = handler.challengers();
        for (uint256 i; i < cs.length; ++i) {
            owed += providers.creditOf(cs[i]);
        }
        assertEq(token.balanceOf(address(providers)), owed, "open dispute bonds + unclaimed credits");
    }

    function invariant_upheldDisputesForfeitSigners() public view {
        assertEq(handler.ghost_upheldViolations(), 0, "an upheld dispute zeroes its signers' bonds and its record");
    }

    /// The handler's vote reaches a decision with panel members (so the campaign exercises upheld and rejected).
    function test_handler_votesDecide() public {
        for (uint256 who = 1; who < 16 && handler.ghost_decided() == 0; ++who) {
            handler.vote(0, who, true);
        }
        assertEq(handler.ghost_decided(), 1, "decided");
        assertEq(providers.disputeOf(1).outcome, 1, "upheld");
        invariant_holdsExactlyOpenBondsPlusCredits();
        invariant_upheldDisputesForfeitSigners();
    }

    function afterInvariant() public view {
        assertGe(handler.ghost_calls(), 1, "handler was called");
    }
}
