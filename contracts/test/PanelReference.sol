// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @notice The panel rule of IAuditorRegistry.drawPanel written the plain way, for tests: `pool` is the eligible,
/// non-excluded members in slot (activation) order; position i takes the (r_i + 1)-th member still in the list, with
/// r_i = keccak256(seed, i) mod (what is left), and removes it. A list with removal, O(k * pool): nothing like the
/// registry's tree, so a test that compares the two compares two independent implementations of one rule.
library PanelReference {
    function panel(bytes32 seed, address[] memory pool, uint256 k) internal pure returns (address[] memory p) {
        p = new address[](k);
        uint256 left = pool.length;
        address[] memory rest = new address[](left);
        for (uint256 i; i < left; ++i) rest[i] = pool[i];
        for (uint256 i; i < k; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i))) % left;
            p[i] = rest[r];
            for (uint256 j = r; j + 1 < left; ++j) rest[j] = rest[j + 1];
            --left;
        }
    }
}
