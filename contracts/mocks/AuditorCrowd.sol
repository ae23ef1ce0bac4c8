// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {TestToken} from "./TestToken.sol";
import {IAuditorRegistry} from "../interfaces/IAuditorRegistry.sol";

/// @notice Bench/test only: one bonded auditor that is a contract, so that thousands can be bonded in a few
/// transactions. Its constructor mints and posts `bond`; anyone may make it request exit.
contract CrowdAuditor {
    IAuditorRegistry private immutable _registry;

    constructor(TestToken token, IAuditorRegistry registry, uint256 bond) {
        _registry = registry;
        token.mint(address(this), bond);
        token.approve(address(registry), bond);
        registry.postBond(bond);
    }

    function exit() external {
        _registry.requestExit();
    }
}

/// @notice Bench/test only: bonds many CrowdAuditors per transaction, makes some of them exit, and measures the gas
/// of an AuditorRegistry.drawPanel call from a contract (what DisputeGame pays for its draw).
contract AuditorCrowd {
    TestToken private immutable _token;
    IAuditorRegistry private immutable _registry;
    CrowdAuditor[] public auditors;
    /// @notice Gas of the last measured drawPanel call.
    uint256 public lastDrawGas;

    constructor(TestToken token, IAuditorRegistry registry) {
        _token = token;
        _registry = registry;
    }

    function bond(uint256 count, uint256 amount) external {
        for (uint256 i; i < count; ++i) {
            auditors.push(new CrowdAuditor(_token, _registry, amount));
        }
    }

    /// @notice Up to `count` auditors request exit: every `stride`-th from `first`.
    function exitEvery(uint256 first, uint256 stride, uint256 count) external {
        for (uint256 i = first; i < auditors.length && count != 0; i += stride) {
            auditors[i].exit();
            --count;
        }
    }

    function size() external view returns (uint256) {
        return auditors.length;
    }

    function measureDraw(bytes32 seed, uint256 k, address[] calldata exclude, uint64 asOf) external {
        uint256 g = gasleft();
        _registry.drawPanel(seed, k, exclude, asOf);
        lastDrawGas = g - gasleft();
    }
}
