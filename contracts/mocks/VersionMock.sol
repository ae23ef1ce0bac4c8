// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title VersionMock: a contract that reports whatever VERSION it was deployed with (tests only), to stand in for a
/// deployment whose contracts were built from other sources than the off-chain side's ABIs.
contract VersionMock {
    string public VERSION;

    constructor(string memory version_) {
        VERSION = version_;
    }
}
