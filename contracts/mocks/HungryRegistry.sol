// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {IAuditorRegistry} from "../interfaces/IAuditorRegistry.sol";

/// @notice Test double: forwards every call to a real AuditorRegistry (it must hold the registry's DISPUTE_ROLE so
/// that forfeits pass through), but its drawPanel first spends `drawCost` gas, as a draw over a large pool that
/// loops over every member would. Lets a test starve a draw of gas inside DisputeGame and see what resolve does.
contract HungryRegistry {
    IAuditorRegistry public immutable inner;
    uint256 public immutable drawCost;

    constructor(IAuditorRegistry inner_, uint256 drawCost_) {
        inner = inner_;
        drawCost = drawCost_;
    }

    function drawPanel(bytes32 seed, uint256 k, address[] calldata exclude, uint64 asOf)
        external
        view
        returns (address[] memory)
    {
        // memory expansion to w words costs 3w + w^2/512 gas: one opcode spends about drawCost
        uint256 end = Math.sqrt(512 * drawCost) * 32;
        assembly ("memory-safe") {
            // a branch on the loaded word keeps the optimizer from dropping the load
            if eq(mload(end), 0x5eed) { revert(0, 0) }
        }
        return inner.drawPanel(seed, k, exclude, asOf);
    }

    // solhint-disable-next-line no-complex-fallback
    fallback() external {
        // solhint-disable-next-line avoid-low-level-calls
        (bool ok, bytes memory out) = address(inner).call(msg.data);
        assembly ("memory-safe") {
            switch ok
            case 0 { revert(add(out, 32), mload(out)) }
            default { return(add(out, 32), mload(out)) }
        }
    }
}
