// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {TestBase} from "./test/TestBase.sol";
import {vm} from "./test/Vm.sol";
import {AuditorKeys} from "./test/RegistryFixture.sol";
import {TestToken} from "./mocks/TestToken.sol";
import {AuditorRegistry} from "./AuditorRegistry.sol";
import {ProviderRegistry} from "./ProviderRegistry.sol";
import {IProviderRegistry} from "./interfaces/IProviderRegistry.sol";
import {IAuditorRegistry} from "./interfaces/IAuditorRegistry.sol";
import {Receipts} from "./libraries/Receipts.sol";

/// @notice ProviderRegistry: the request -> drawn committee -> quorum record flow, every revert path, the "signers stay
/// bonded" rule, and the self-attestation attacker (a provider that bonds auditors of its own).
contract ProviderRegistryTest is TestBase, AuditorKeys {
    address internal constant PROVIDER = address(0xB2);
    uint64 internal constant MAX_VALIDITY = 30 days;
    uint64 internal constant EXIT_DELAY = 14 days;
    uint64 internal constant ACTIVATION_DELAY = 1 hours;
    uint16 internal constant SEED_DELAY = 2;
    uint64 internal constant WINDOW = 1 days;
    uint256 internal constant FEE = 1e18;
    /// @dev Keys of the provider's own auditors (the attacker's), apart from the fixture's honest 0xA11CE + i.
    uint256 internal constant SYBIL_KEY = 0x5B11;

    TestToken internal token;
    AuditorRegistry internal auditors;
    ProviderRegistry internal providers;

    function setUp() public {
        vm.warp(1_700_000_000);
        vm.roll(1_000);
        token = new TestToken("Test", "TST");
        auditors = new AuditorRegistry(token, AUDITOR_BOND, EXIT_DELAY, ACTIVATION_DELAY, address(this));
        providers = new ProviderRegistry(auditors, 3, 2, MAX_VALIDITY, SEED_DELAY, WINDOW, FEE);
        _bondAuditors(token, auditors, 3);
        token.mint(PROVIDER, 100 * FEE); // direct requestAttestation calls below burn FEE each
        vm.prank(PROVIDER);
        token.approve(address(providers), type(uint256).max);
    }

    function _expiry() internal view returns (uint64) {
        return uint64(block.timestamp + 7 days);
    }

    /// @dev A request by PROVIDER, past its seed block, and an attestation of it.
    function _open(uint8 tier, uint8 band, uint64 expiresAt)
        internal
        returns (uint256 id, Receipts.AttestationVerified memory att)
    {
        id = _request(providers, PROVIDER);
        att = _attestation(PROVIDER, id, tier, band, expiresAt);
    }

    function _sign(uint256 id, Receipts.AttestationVerified memory att, uint256 k) internal view returns (bytes[] memory) {
        return _committeeSigs(providers, id, providers.digestOf(att), k);
    }

    // ---------------------------------------------------------------- recording

    /// Every tier with every band of its range and any validity up to the maximum is recorded as signed.
    function testFuzz_record_anyValidTierBand_recordsIt(uint8 tier, uint8 band, uint64 validity) public {
        tier = uint8(bound(tier, 1, 4));
        (uint8 lo, uint8 hi) = providers.bandRange(tier);
        band = uint8(bound(band, lo, hi));
        validity = uint64(bound(validity, 2, MAX_VALIDITY));
        (uint256 id, Receipts.AttestationVerified memory att) = _open(tier, band, uint64(block.timestamp) + validity);
        providers.record(att, _sign(id, att, 2));
        IProviderRegistry.Attestation memory a = providers.attestationOf(PROVIDER);
        assertEq(a.tier, tier, "tier");
        assertEq(a.band, band, "band");
        assertEq(a.expiresAt, att.expiresAt, "expiry");
        assertEq(a.evidenceHash, att.evidenceHash, "evidence");
        assertEq(a.recordedAt, block.timestamp, "recordedAt");
        assertEq(a.requestId, id, "request");
        assertEq(providers.signersOf(PROVIDER).length, 2, "signers kept");
        assertEq(providers.effectiveTier(PROVIDER), tier, "effective tier");
        assertTrue(providers.requestOf(id).recorded, "request recorded");
        vm.warp(att.expiresAt);
        assertEq(providers.effectiveTier(PROVIDER), 4, "expired record counts as tier 4");
    }

    function test_effectiveTier_unrecorded_isFour() public view {
        assertEq(providers.effectiveTier(address(0xDEAD)), 4, "no record");
    }

    function test_record_threeOfThree_recordsIt() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 100, _expiry());
        providers.record(att, _sign(id, att, 3));
        assertEq(providers.effectiveTier(PROVIDER), 1, "tier 1");
    }

    function test_request_fixesSnapshotSeedAndDeadline() public {
        uint256 nowTs = block.timestamp;
        uint256 height = block.number;
        vm.prank(PROVIDER);
        uint256 id = providers.requestAttestation(_evidence(PROVIDER), _challengeBlock());
        IProviderRegistry.Request memory q = providers.requestOf(id);
        assertEq(q.provider, PROVIDER, "provider");
        assertEq(q.asOf, nowTs, "snapshot at the request");
        assertEq(q.seedBlock, height + SEED_DELAY, "seed block");
        assertEq(q.deadline, nowTs + WINDOW, "deadline");
        assertEq(q.evidenceHash, _evidence(PROVIDER), "evidence");
        assertEq(providers.lastRequestOf(PROVIDER), id, "last request");
        vm.roll(block.number + SEED_DELAY + 1);
        vm.warp(block.timestamp + 1);
        address[] memory preview = providers.committeeOf(id);
        address[] memory drawn = providers.drawCommittee(id);
        assertEq(drawn.length, 3, "committee size");
        for (uint256 i; i < 3; ++i) {
            assertEq(drawn[i], preview[i], "the preview is the draw");
            assertTrue(drawn[i] != PROVIDER, "provider excluded");
        }
        assertTrue(providers.requestOf(id).drawn, "drawn");
        address[] memory stored = providers.committeeOf(id);
        for (uint256 i; i < 3; ++i) {
            assertEq(stored[i], drawn[i], "stored");
        }
    }

    function test_record_fresherRecord_replacesOlder() public {
        _attest(providers, PROVIDER, 1, _expiry(), 2);
        vm.warp(block.timestamp + WINDOW + 1);
        _attest(providers, PROVIDER, 3, _expiry() + 1, 2);
        assertEq(providers.effectiveTier(PROVIDER), 3, "downgraded by the fresher record");
    }

    /// A 30-day tier-1 record must not block a newer, shorter downgrade (records were ordered by
    /// expiresAt, so the downgrade reverted with the old stale-record error).
    function test_record_newerShorterDowngrade_replacesLongerRecord() public {
        _attest(providers, PROVIDER, 1, uint64(block.timestamp) + MAX_VALIDITY, 2);
        vm.warp(block.timestamp + WINDOW + 1);
        _attest(providers, PROVIDER, 3, uint64(block.timestamp) + 1 days, 2);
        assertEq(providers.effectiveTier(PROVIDER), 3, "the newer statement wins");
    }

    function test_record_sameRequestTwice_reverts() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(2, 80, _expiry());
        providers.record(att, _sign(id, att, 2));
        att.expiresAt += 1; // even a fresher statement: one record per request
        bytes[] memory sigs = _sign(id, att, 2);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryAlreadyRecorded.selector, id));
        providers.record(att, sigs);
    }

    /// The committee signs tier 1 for 30 days, the provider withholds it, a newer request records a
    /// downgrade. The withheld statement cannot be recorded over it: its request closed before the next one opened,
    /// and had it not, its issuedAt is older than the record's.
    function test_record_withheldOlderStatementAfterNewer_reverts() public {
        (uint256 id1, Receipts.AttestationVerified memory old) = _open(1, 100, uint64(block.timestamp) + MAX_VALIDITY);
        bytes[] memory oldSigs = _sign(id1, old, 2);
        uint64 deadline1 = providers.requestOf(id1).deadline;
        vm.warp(deadline1 + 1);
        _attest(providers, PROVIDER, 3, uint64(block.timestamp) + 1 days, 2);
        vm.expectPartialRevert(IProviderRegistry.ProviderRegistryRequestClosed.selector);
        providers.record(old, oldSigs);
        assertEq(providers.effectiveTier(PROVIDER), 3, "the newer downgrade stands");
        assertTrue(providers.attestationOf(PROVIDER).issuedAt > old.issuedAt, "ordered by the signed issuedAt");
    }

    function test_record_issuedAtOutsideRequestAndNow_reverts() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        uint64 asOf = providers.requestOf(id).asOf;
        att.issuedAt = asOf - 1;
        bytes[] memory sigs = _sign(id, att, 2);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryIssuedBeforeRequest.selector, id, asOf - 1, asOf)
        );
        providers.record(att, sigs);
        att.issuedAt = uint64(block.timestamp) + 1;
        sigs = _sign(id, att, 2);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryIssuedInFuture.selector, att.issuedAt, block.timestamp)
        );
        providers.record(att, sigs);
    }

    // ---------------------------------------------------------------- binding and single-use challenges

    /// The binding is keccak256(abi.encode(provider, chainid, registry, blockhash(challengeBlock))), fixed at request.
    function test_request_bindingCommitsToProviderChainRegistryChallenge() public {
        vm.roll(block.number + 5);
        uint64 cb = uint64(block.number - 3);
        vm.prank(PROVIDER);
        uint256 id = providers.requestAttestation(_evidence(PROVIDER), cb);
        bytes32 expected = keccak256(abi.encode(PROVIDER, block.chainid, address(providers), blockhash(cb)));
        assertEq(providers.bindingOf(id), expected, "binding");
        assertEq(providers.requestOf(id).binding, expected, "in the request view");
        assertEq(providers.requestOf(id).challenge, blockhash(cb), "challenge");
        assertEq(providers.bindingOf(id + 1), bytes32(0), "no request, no binding");
    }

    function test_request_badChallengeBlock_reverts() public {
        vm.roll(block.number + 100);
        uint64 nowBlock = uint64(block.number);
        uint256 maxAge = providers.CHALLENGE_MAX_AGE_BLOCKS();
        // the current block has no hash yet, a future one neither, and an old one is too old
        uint64[3] memory bad = [nowBlock, nowBlock + 1, nowBlock - uint64(maxAge) - 1];
        for (uint256 i; i < 3; ++i) {
            vm.expectRevert(
                abi.encodeWithSelector(IProviderRegistry.ProviderRegistryBadChallengeBlock.selector, bad[i], nowBlock)
            );
            vm.prank(PROVIDER);
            providers.requestAttestation(_evidence(PROVIDER), bad[i]);
        }
        vm.prank(PROVIDER);
        providers.requestAttestation(_evidence(PROVIDER), nowBlock - uint64(maxAge)); // the oldest allowed
    }

    /// Replay: the same challenge (so the same evidence nonce) cannot open a second request, even a window later.
    function test_request_sameChallengeTwice_reverts() public {
        uint64 cb = _challengeBlock();
        vm.prank(PROVIDER);
        uint256 id = providers.requestAttestation(_evidence(PROVIDER), cb);
        vm.warp(providers.requestOf(id).deadline + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryChallengeUsed.selector, PROVIDER, cb, id)
        );
        vm.prank(PROVIDER);
        providers.requestAttestation(_evidence(PROVIDER), cb);
        // another provider may name the same block: its binding differs (its address is in it)
        address other = address(0xB3);
        _fundFee(providers, other);
        vm.prank(other);
        uint256 id2 = providers.requestAttestation(_evidence(other), cb);
        assertTrue(providers.bindingOf(id2) != providers.bindingOf(id), "bindings differ per provider");
    }

    // ---------------------------------------------------------------- signers

    function test_record_belowQuorum_reverts() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        bytes[] memory sigs = _sign(id, att, 1);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryBelowQuorum.selector, 1, 2));
        providers.record(att, sigs);
    }

    function test_record_sameAuditorTwice_reverts() public {
        (, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        bytes32 digest = providers.digestOf(att);
        bytes[] memory sigs = new bytes[](2);
        sigs[0] = _sig(_auditorKeys[0], digest);
        sigs[1] = _sig(_auditorKeys[0], digest);
        address a = vm.addr(_auditorKeys[0]);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryUnsortedSigners.selector, 1, a, a));
        providers.record(att, sigs);
    }

    function test_record_descendingSigners_reverts() public {
        (, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        bytes32 digest = providers.digestOf(att);
        bytes[] memory sigs = new bytes[](2);
        sigs[0] = _sig(_auditorKeys[1], digest);
        sigs[1] = _sig(_auditorKeys[0], digest);
        vm.expectRevert(
            abi.encodeWithSelector(
                IProviderRegistry.ProviderRegistryUnsortedSigners.selector,
                1,
                vm.addr(_auditorKeys[1]),
                vm.addr(_auditorKeys[0])
            )
        );
        providers.record(att, sigs);
    }

    /// Someone who is not an auditor at all is not on any committee.
    function test_record_nonAuditorSigner_reverts() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        uint256 strangerKey = 0x5757;
        bytes32 digest = providers.digestOf(att);
        address[] memory c = _ascending(providers.committeeOf(id));
        bytes[] memory sigs = new bytes[](2);
        sigs[0] = _sig(_keyOf[c[0]], digest);
        sigs[1] = _sig(strangerKey, digest);
        address stranger = vm.addr(strangerKey);
        if (stranger < c[0]) (sigs[0], sigs[1]) = (sigs[1], sigs[0]);
        uint256 index = stranger < c[0] ? 0 : 1;
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryNotCommitteeMember.selector, id, index, stranger)
        );
        providers.record(att, sigs);
    }

    /// A committee member that requested exit no longer has its bond behind the statement.
    function test_record_exitedCommitteeMember_reverts() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        bytes[] memory sigs = _sign(id, att, 2);
        address a = _ascending(providers.committeeOf(id))[1];
        vm.prank(a);
        auditors.requestExit();
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryNotAuditor.selector, 1, a));
        providers.record(att, sigs);
    }

    /// Signatures over one band do not authorize another: the signer recovered is on no committee.
    function test_record_mismatchedFields_reverts() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        bytes[] memory sigs = _sign(id, att, 2);
        att.band = 100;
        vm.expectPartialRevert(IProviderRegistry.ProviderRegistryNotCommitteeMember.selector);
        providers.record(att, sigs);
    }

    /// A signature under another domain (another registry's) does not count either.
    function test_record_otherDomainSignature_reverts() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        ProviderRegistry other = new ProviderRegistry(auditors, 3, 2, MAX_VALIDITY, SEED_DELAY, WINDOW, FEE);
        bytes[] memory sigs = _committeeSigs(providers, id, other.digestOf(att), 2);
        vm.expectPartialRevert(IProviderRegistry.ProviderRegistryNotCommitteeMember.selector);
        providers.record(att, sigs);
    }

    function test_record_malformedSignatures_revert() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        bytes[] memory sigs = _sign(id, att, 2);
        sigs[0] = hex"1234";
        vm.expectRevert(abi.encodeWithSelector(ECDSA.ECDSAInvalidSignatureLength.selector, 2));
        providers.record(att, sigs);
        // s above half the curve order (malleable form)
        sigs[0] = abi.encodePacked(bytes32(uint256(1)), bytes32(type(uint256).max), uint8(27));
        vm.expectRevert(abi.encodeWithSelector(ECDSA.ECDSAInvalidSignatureS.selector, bytes32(type(uint256).max)));
        providers.record(att, sigs);
        // r = 0 recovers no address
        sigs[0] = abi.encodePacked(bytes32(0), bytes32(uint256(1)), uint8(27));
        vm.expectRevert(abi.encodeWithSelector(ECDSA.ECDSAInvalidSignature.selector));
        providers.record(att, sigs);
    }

    // ---------------------------------------------------------------- bonds at stake

    /// The record counts only while a quorum of its signers stays bonded: one of two signers exiting drops the tier.
    function test_effectiveTier_signerExits_dropsBelowQuorum() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        providers.record(att, _sign(id, att, 2));
        address[] memory signers = providers.signersOf(PROVIDER);
        assertEq(providers.backingOf(PROVIDER), 2, "backed by both");
        vm.prank(signers[0]);
        auditors.requestExit();
        assertEq(providers.backingOf(PROVIDER), 1, "one left");
        assertEq(providers.effectiveTier(PROVIDER), 4, "unbacked record counts as tier 4");
    }

    /// With three signers and quorum two, one exit leaves the record standing; a second drops it.
    function test_effectiveTier_threeSigners_survivesOneExit() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(2, 75, _expiry());
        providers.record(att, _sign(id, att, 3));
        address[] memory signers = providers.signersOf(PROVIDER);
        vm.prank(signers[2]);
        auditors.requestExit();
        assertEq(providers.effectiveTier(PROVIDER), 2, "still a quorum");
        vm.prank(signers[1]);
        auditors.requestExit();
        assertEq(providers.effectiveTier(PROVIDER), 4, "below quorum");
    }

    // ---------------------------------------------------------------- the self-attesting provider

    /// Self-attestation: the provider bonds two auditors of its own and signs tier 1 with them. Under the
    /// committee rule their signatures count only when the draw put both on the committee; here they were bonded
    /// just before the request, so the snapshot does not even contain them.
    function testFuzz_freshOwnAuditors_neverOnCommittee(uint32 height) public {
        vm.roll(1_000 + uint256(height) % 1_000_000_000);
        _bondKeys(token, auditors, SYBIL_KEY, 2);
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 100, _expiry());
        address[] memory c = providers.committeeOf(id);
        for (uint256 i; i < c.length; ++i) {
            assertTrue(c[i] != vm.addr(SYBIL_KEY) && c[i] != vm.addr(SYBIL_KEY + 1), "bonded after asOf - delay");
        }
        bytes[] memory sigs = _ownSigs(att);
        vm.expectPartialRevert(IProviderRegistry.ProviderRegistryNotCommitteeMember.selector);
        providers.record(att, sigs);
        assertEq(providers.effectiveTier(PROVIDER), 4, "no tier");
    }

    /// Old, eligible own auditors among ten honest ones: tier 1 is recorded exactly when the draw put both of them on
    /// the committee (probability C(2,2) * C(10,1) / C(12,3) = 10/220 = 4.5% per request, and one request per window),
    /// never otherwise.
    function testFuzz_ownAuditors_tierOnlyWhenBothDrawn(uint32 height) public {
        _bondAuditors(token, auditors, 7); // ten honest
        _bondKeys(token, auditors, SYBIL_KEY, 2);
        vm.warp(block.timestamp + ACTIVATION_DELAY); // the provider's two are as old as needed
        vm.roll(1_000 + uint256(height) % 1_000_000_000);
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 100, _expiry());
        address[] memory c = providers.committeeOf(id);
        uint256 own;
        for (uint256 i; i < c.length; ++i) {
            if (c[i] == vm.addr(SYBIL_KEY) || c[i] == vm.addr(SYBIL_KEY + 1)) ++own;
        }
        bytes[] memory sigs = _ownSigs(att);
        if (own == 2) {
            providers.record(att, sigs);
            assertEq(providers.effectiveTier(PROVIDER), 1, "drawn: the residual risk");
        } else {
            vm.expectPartialRevert(IProviderRegistry.ProviderRegistryNotCommitteeMember.selector);
            providers.record(att, sigs);
            assertEq(providers.effectiveTier(PROVIDER), 4, "not drawn: no tier");
        }
    }

    /// The provider cannot re-roll the committee at will: one request per window.
    function test_request_whileOpen_reverts() public {
        vm.prank(PROVIDER);
        uint256 id = providers.requestAttestation(_evidence(PROVIDER), _challengeBlock());
        uint64 deadline = providers.requestOf(id).deadline;
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryRequestOpen.selector, PROVIDER, id, deadline)
        );
        vm.prank(PROVIDER);
        providers.requestAttestation(keccak256("other evidence"), _challengeBlock());
        vm.warp(deadline);
        vm.expectPartialRevert(IProviderRegistry.ProviderRegistryRequestOpen.selector);
        vm.prank(PROVIDER);
        providers.requestAttestation(_evidence(PROVIDER), _challengeBlock());
        vm.warp(deadline + 1);
        vm.roll(block.number + 1); // a new challenge block: the binding of the first request is spent
        vm.prank(PROVIDER);
        assertEq(providers.requestAttestation(_evidence(PROVIDER), _challengeBlock()), id + 1, "next window");
    }

    /// The one-request-per-window rule binds an address, and a provider has as many addresses as it likes: it requests
    /// for many provider addresses in the same block and keeps whichever drew its two old auditors (4.5% each, see
    /// above), so the per-address window alone would buy it the 30-window odds of docs/panels.md in one window. What
    /// makes each of those draws cost something is the request fee: every request burns it, whoever asks, so k draws
    /// cost k * fee (FEE / p per success on average), and nothing is refunded to the winner either.
    function test_parallelRerollFromOtherAddresses_eachDrawBurnsTheFee() public {
        _bondAuditors(token, auditors, 7); // ten honest
        _bondKeys(token, auditors, SYBIL_KEY, 2);
        vm.warp(block.timestamp + ACTIVATION_DELAY);
        uint256 burned0 = token.balanceOf(providers.BURN_ADDRESS());
        uint256 n = 80;
        uint256[] memory ids = new uint256[](n);
        for (uint256 i; i < n; ++i) {
            address sybil = address(uint160(0xB200 + i));
            token.mint(sybil, FEE);
            vm.prank(sybil);
            token.approve(address(providers), FEE);
            vm.prank(sybil);
            ids[i] = providers.requestAttestation(_evidence(sybil), _challengeBlock(), new bytes32[](0), sybil); // all in one block: no window between them
            assertEq(token.balanceOf(sybil), 0, "the request burned the sybil's fee");
        }
        assertEq(token.balanceOf(providers.BURN_ADDRESS()) - burned0, n * FEE, "n draws burned n fees");
        vm.roll(block.number + SEED_DELAY + 1);
        vm.warp(block.timestamp + 1);
        uint256 wins;
        for (uint256 i; i < n; ++i) {
            address[] memory c = providers.committeeOf(ids[i]);
            uint256 own;
            for (uint256 j; j < c.length; ++j) {
                if (c[j] == vm.addr(SYBIL_KEY) || c[j] == vm.addr(SYBIL_KEY + 1)) ++own;
            }
            if (own < 2) continue;
            ++wins;
            address sybil = address(uint160(0xB200 + i));
            Receipts.AttestationVerified memory att = _attestation(sybil, ids[i], 1, 100, _expiry());
            providers.record(att, _ownSigs(att));
            assertEq(providers.effectiveTier(sybil), 1, "the lucky address is tier 1");
        }
        // The draws are what the snapshot and the seed give (about n * 4.5% = 3.6 wins expected; none in
        // 80 has probability 2.5%): parallel draws do
        // win, so their price is the only bound. Here it is n * FEE for `wins` records.
        assertGe(wins, 1, "parallel draws from other addresses reach the provider's own auditors");
    }

    function test_request_feeNotApproved_reverts() public {
        address poor = address(0xB0B0);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryFeeNotApproved.selector, poor, 0, FEE));
        vm.prank(poor);
        providers.requestAttestation(_evidence(poor), _challengeBlock());
        vm.prank(poor);
        token.approve(address(providers), FEE);
        vm.expectRevert(); // approved but unfunded: the token's own error
        vm.prank(poor);
        providers.requestAttestation(_evidence(poor), _challengeBlock());
        assertEq(providers.lastRequestOf(poor), 0, "no request opened");
    }

    /// Signatures of the provider's own two auditors (SYBIL_KEY, SYBIL_KEY + 1), ascending.
    function _ownSigs(Receipts.AttestationVerified memory att) internal view returns (bytes[] memory sigs) {
        bytes32 digest = providers.digestOf(att);
        (uint256 k0, uint256 k1) = vm.addr(SYBIL_KEY) < vm.addr(SYBIL_KEY + 1)
            ? (SYBIL_KEY, SYBIL_KEY + 1)
            : (SYBIL_KEY + 1, SYBIL_KEY);
        sigs = new bytes[](2);
        sigs[0] = _sig(k0, digest);
        sigs[1] = _sig(k1, digest);
    }

    // ---------------------------------------------------------------- request errors

    function test_request_zeroEvidence_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryZeroEvidence.selector));
        vm.prank(PROVIDER);
        providers.requestAttestation(bytes32(0), _challengeBlock());
    }

    function test_unknownRequest_reverts() public {
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, 9, 1, 95, _expiry());
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryUnknownRequest.selector, 9));
        providers.record(att, new bytes[](0));
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryUnknownRequest.selector, 9));
        providers.drawCommittee(9);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryUnknownRequest.selector, 9));
        providers.committeeOf(9);
    }

    function test_record_afterDeadline_reverts() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        bytes[] memory sigs = _sign(id, att, 2);
        uint64 deadline = providers.requestOf(id).deadline;
        vm.warp(deadline + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryRequestClosed.selector, id, deadline, deadline + 1)
        );
        providers.record(att, sigs);
        vm.expectPartialRevert(IProviderRegistry.ProviderRegistryRequestClosed.selector);
        providers.drawCommittee(id);
        vm.expectPartialRevert(IProviderRegistry.ProviderRegistryRequestClosed.selector);
        providers.committeeOf(id);
    }

    function test_record_wrongProviderOrEvidence_reverts() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, _expiry());
        att.provider = address(0xB3);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryWrongProvider.selector, id, address(0xB3), PROVIDER)
        );
        providers.record(att, new bytes[](0));
        att.provider = PROVIDER;
        att.evidenceHash = keccak256("other evidence");
        vm.expectRevert(
            abi.encodeWithSelector(
                IProviderRegistry.ProviderRegistryWrongEvidence.selector, id, att.evidenceHash, _evidence(PROVIDER)
            )
        );
        providers.record(att, new bytes[](0));
    }

    function test_drawCommittee_seedErrors_revert() public {
        vm.prank(PROVIDER);
        uint256 id = providers.requestAttestation(_evidence(PROVIDER), _challengeBlock());
        uint64 seedBlock = providers.requestOf(id).seedBlock;
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistrySeedNotReady.selector, id, seedBlock, block.number)
        );
        providers.drawCommittee(id);
        // a record before the seed block cannot draw either
        Receipts.AttestationVerified memory att = _attestation(PROVIDER, id, 1, 95, _expiry());
        vm.expectPartialRevert(IProviderRegistry.ProviderRegistrySeedNotReady.selector);
        providers.record(att, new bytes[](2));
        // nobody drew within 256 blocks: no reseed, the request is dead
        vm.roll(uint256(seedBlock) + 257);
        vm.warp(block.timestamp + 1);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistrySeedExpired.selector, id, seedBlock));
        providers.drawCommittee(id);
    }

    function test_drawCommittee_twice_reverts() public {
        uint256 id = _request(providers, PROVIDER);
        providers.drawCommittee(id);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryCommitteeDrawn.selector, id));
        providers.drawCommittee(id);
    }

    function test_record_expired_reverts() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, 0);
        att.expiresAt = uint64(block.timestamp);
        bytes[] memory sigs = _sign(id, att, 2);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryExpired.selector, att.expiresAt, block.timestamp));
        providers.record(att, sigs);
    }

    function test_record_validityTooLong_reverts() public {
        (uint256 id, Receipts.AttestationVerified memory att) = _open(1, 95, 0);
        att.expiresAt = uint64(block.timestamp) + MAX_VALIDITY + 1;
        bytes[] memory sigs = _sign(id, att, 2);
        vm.expectRevert(
            abi.encodeWithSelector(
                IProviderRegistry.ProviderRegistryValidityTooLong.selector, att.expiresAt, block.timestamp, MAX_VALIDITY
            )
        );
        providers.record(att, sigs);
    }

    function testFuzz_record_invalidTier_reverts(uint8 tier) public {
        vm.assume(tier == 0 || tier > 4);
        (, Receipts.AttestationVerified memory att) = _open(tier, 50, _expiry());
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryInvalidTier.selector, tier));
        providers.record(att, new bytes[](0));
    }

    function testFuzz_record_bandOutsideTier_reverts(uint8 tier, uint8 band) public {
        tier = uint8(bound(tier, 1, 4));
        (uint8 lo, uint8 hi) = providers.bandRange(tier);
        vm.assume(band < lo || band > hi);
        (, Receipts.AttestationVerified memory att) = _open(tier, band, _expiry());
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryBandOutOfRange.selector, tier, band, lo, hi));
        providers.record(att, new bytes[](0));
    }

    // ---------------------------------------------------------------- deployment

    function test_constructor_badCommitteeOrQuorum_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryZeroQuorum.selector));
        new ProviderRegistry(auditors, 3, 0, MAX_VALIDITY, SEED_DELAY, WINDOW, FEE);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryCommitteeTooLarge.selector, 16, 15));
        new ProviderRegistry(auditors, 16, 9, MAX_VALIDITY, SEED_DELAY, WINDOW, FEE);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryQuorumAboveCommittee.selector, 4, 3));
        new ProviderRegistry(auditors, 3, 4, MAX_VALIDITY, SEED_DELAY, WINDOW, FEE);
        // two disjoint halves of a committee of 4 could each make a quorum of 2
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryQuorumNotMajority.selector, 2, 4));
        new ProviderRegistry(auditors, 4, 2, MAX_VALIDITY, SEED_DELAY, WINDOW, FEE);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryZeroValidity.selector));
        new ProviderRegistry(auditors, 1, 1, 0, SEED_DELAY, WINDOW, FEE);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryZeroFee.selector));
        new ProviderRegistry(auditors, 3, 2, MAX_VALIDITY, SEED_DELAY, WINDOW, 0);
    }

    function test_constructor_badDelays_reverts() public {
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryInvalidSeedDelay.selector, 0));
        new ProviderRegistry(auditors, 3, 2, MAX_VALIDITY, 0, WINDOW, FEE);
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryInvalidSeedDelay.selector, 201));
        new ProviderRegistry(auditors, 3, 2, MAX_VALIDITY, 201, WINDOW, FEE);
        // 2 blocks are taken as 24 s: a window of 24 s could close before the seed block
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryWindowTooShort.selector, 24, 24));
        new ProviderRegistry(auditors, 3, 2, MAX_VALIDITY, SEED_DELAY, 24, FEE);
        vm.expectRevert(
            abi.encodeWithSelector(IProviderRegistry.ProviderRegistryWindowTooLong.selector, EXIT_DELAY + 1, EXIT_DELAY)
        );
        new ProviderRegistry(auditors, 3, 2, MAX_VALIDITY, SEED_DELAY, EXIT_DELAY + 1, FEE);
        AuditorRegistry quick = new AuditorRegistry(token, AUDITOR_BOND, EXIT_DELAY, 24, address(this));
        vm.expectRevert(abi.encodeWithSelector(IProviderRegistry.ProviderRegistryActivationDelayTooShort.selector, 24, 24));
        new ProviderRegistry(quick, 3, 2, MAX_VALIDITY, SEED_DELAY, WINDOW, FEE);
        // the boundaries themselves are accepted
        new ProviderRegistry(auditors, 3, 2, MAX_VALIDITY, SEED_DELAY, EXIT_DELAY, FEE);
        new ProviderRegistry(new AuditorRegistry(token, AUDITOR_BOND, EXIT_DELAY, 25, address(this)), 3, 2, MAX_VALIDITY, SEED_DELAY, 25, FEE);
    }

    function test_views_reportParameters() public view {
        assertEq(providers.auditors(), address(auditors), "auditors");
        assertEq(providers.committeeSize(), 3, "committee");
        assertEq(providers.quorum(), 2, "quorum");
        assertEq(providers.maxValiditySeconds(), MAX_VALIDITY, "validity");
        assertEq(providers.seedDelayBlocks(), SEED_DELAY, "seed delay");
        assertEq(providers.requestWindowSeconds(), WINDOW, "window");
        assertEq(providers.requestFee(), FEE, "fee");
        assertEq(providers.feeToken(), address(token), "fee token: the auditor token");
        assertTrue(auditors.isActive(vm.addr(_auditorKeys[0])), "auditor active");
        assertTrue(uint8(auditors.auditorOf(vm.addr(_auditorKeys[2])).status) == uint8(IAuditorRegistry.AuditorStatus.Active), "status");
    }
}
