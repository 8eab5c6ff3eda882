// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/// @title AuditAnchor
/// @notice Records aggregate Merkle roots of the Agent Governance Gateway's audit logs. Each root is
///         the RFC 9162 root over one hour's tenant tree heads; anyone can read when it was anchored.
contract AuditAnchor {
    struct Anchor {
        uint64 timestamp;
        uint64 blockNumber;
        uint64 leafCount;
        uint64 sequence;
    }

    address public immutable owner;
    uint64 public anchorCount;
    mapping(bytes32 => Anchor) private anchors;

    event RootAnchored(uint64 indexed sequence, bytes32 indexed root, uint64 leafCount, uint64 timestamp);

    error NotOwner();

    constructor() {
        owner = msg.sender;
    }

    /// @notice Anchor `root` (covering `leafCount` tenant tree heads). Re-anchoring a known root keeps
    ///         the first record and emits the event again, so a retried transaction is harmless.
    function anchor(bytes32 root, uint64 leafCount) external {
        if (msg.sender != owner) revert NotOwner();
        Anchor storage a = anchors[root];
        if (a.timestamp == 0) {
            anchorCount += 1;
            anchors[root] = Anchor(uint64(block.timestamp), uint64(block.number), leafCount, anchorCount);
        }
        emit RootAnchored(anchors[root].sequence, root, leafCount, uint64(block.timestamp));
    }

    /// @notice When `root` was anchored (all zero when it never was).
    function anchorOf(bytes32 root) external view returns (uint64 timestamp, uint64 blockNumber, uint64 leafCount, uint64 sequence) {
        Anchor storage a = anchors[root];
        return (a.timestamp, a.blockNumber, a.leafCount, a.sequence);
    }
}
