// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title PeerDirectory: where an account's content node can be dialled (docs/content.md, discovery)
/// @notice Event-only and ownerless: `announce` emits the caller's libp2p multiaddrs; a reader takes the latest
/// PeersAnnounced of the account it wants (a job's provider) and dials them. Nothing is stored.
/// @dev Who announced is msg.sender; the peer behind an address is authenticated off chain by its /p2p/<peer id>
/// (the noise handshake) and the content by its CID, so an account that announces someone else's node only costs
/// its readers a dial. The caps keep one announcement cheap to read: at most MAX_ADDRS addresses of at most
/// MAX_ADDR_BYTES bytes each, none empty. An empty list withdraws the account's node.
contract PeerDirectory {
    string public constant VERSION = "pouw-PeerDirectory-1";
    uint256 public constant MAX_ADDRS = 8;
    uint256 public constant MAX_ADDR_BYTES = 256;

    event PeersAnnounced(address indexed account, string[] multiaddrs);

    error PeerDirectoryTooManyAddrs(uint256 count, uint256 max);
    error PeerDirectoryBadAddrLength(uint256 index, uint256 length, uint256 max);

    function announce(string[] calldata multiaddrs) external {
        if (multiaddrs.length > MAX_ADDRS) revert PeerDirectoryTooManyAddrs(multiaddrs.length, MAX_ADDRS);
        for (uint256 i = 0; i < multiaddrs.length; ++i) {
            uint256 n = bytes(multiaddrs[i]).length;
            if (n == 0 || n > MAX_ADDR_BYTES) revert PeerDirectoryBadAddrLength(i, n, MAX_ADDR_BYTES);
        }
        emit PeersAnnounced(msg.sender, multiaddrs);
    }
}
