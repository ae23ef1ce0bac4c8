// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @dev A duration in seconds (a configured window, never a block count nor a unix time). 32 bits hold 136 years.
/// The only arithmetic defined on it is the one the contracts need: a window added to a unix time gives the unix
/// time it ends at, so a block count or a timestamp cannot be added where a duration belongs.
type Seconds is uint32;

using {addTo, toUint} for Seconds global;

/// @dev The unix time (uint64, as stored in dispute records) `s` after unix time `t`.
/// fits: t is a block timestamp or a uint64 deadline derived from one, far below 2^64 - 2^32
function addTo(Seconds s, uint256 t) pure returns (uint64) {
    return uint64(t + Seconds.unwrap(s));
}

/// @dev `s` as a plain number of seconds (for sums of windows compared with other contracts' delays).
function toUint(Seconds s) pure returns (uint256) {
    return Seconds.unwrap(s);
}
