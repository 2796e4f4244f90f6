"""The cluster's feature levels (KIP-584): which features this broker supports, the levels the
cluster has finalized, and their node in the metadata store.

Kafka's ZooKeeper mode kept them in the ``/feature`` znode; so do we, in the same JSON shape
(``{"version":2,"status":1,"features":{"transaction.version":{"max_version_level":2}}}``).  A
cluster whose node is absent runs at the default levels, those of a new Kafka 4.4 cluster (less the
features pykafkad does not implement).
ApiVersions reports the levels with an epoch (the node's version plus one, 0 while it is absent)
so clients see a change; ``kafka-features.sh`` changes them through UpdateFeatures.

The features are Kafka 4.4's, with its ranges, so ``kafka-features.sh upgrade --release 4.4``
(which names every one of them) is taken.  pykafkad acts on ``transaction.version`` and on
``group.version`` (KIP-848's consumer groups are served at level 1) and on ``share.version`` (share
groups at 1, their dead-letter topics at 2); the others are recorded and
described, and ``NOT_IMPLEMENTED`` says what a level above 0 would ask for that
pykafkad does not do (the broker logs it when one is set).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pykafkad.metadata.store import Node

FEATURE_ZNODE = "/feature"
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
METADATA_VERSION = "metadata.version"
ELIGIBLE_LEADER_REPLICAS_VERSION = "eligible.leader.replicas.version"
SHARE_VERSION = "share.version"
# metadata.version 3.3-IV3, the lowest Kafka sets (the first with feature level records).
MINIMUM_METADATA_VERSION = 7
# 4.4-IV2, Kafka 4.4's latest production metadata.version: the protocol pykafkad serves.
LATEST_METADATA_VERSION = 33
# name -> (min, max) level this broker can run at, as Kafka 4.4's broker describes them.  Level 0
# means the feature is off; a feature not listed supports level 0 only.
SUPPORTED: dict[str, tuple[int, int]] = {
    ELIGIBLE_LEADER_REPLICAS_VERSION: (0, 1),
    GROUP_VERSION: (0, 1),
    "kraft.version": (0, 1),
    METADATA_VERSION: (MINIMUM_METADATA_VERSION, LATEST_METADATA_VERSION),
    SHARE_VERSION: (0, 2),
    "streams.version": (0, 1),
    TRANSACTION_VERSION: (0, 2),
}
# What a level above 0 of these asks for that pykafkad does not do: the level is only recorded.
NOT_IMPLEMENTED: dict[str, str] = {
    ELIGIBLE_LEADER_REPLICAS_VERSION: "eligible leader replicas (KIP-966)",
    "kraft.version": "KRaft (pykafkad runs single-node or on ZooKeeper)",
    METADATA_VERSION: "behaviour by metadata.version (it serves Kafka 4.4's protocol at every level)",
    "streams.version": "the streams group protocol of KIP-1071 (StreamsGroupHeartbeat)",
}
# metadata.version levels that changed the metadata (Kafka's MetadataVersion.didMetadataChange):
# a downgrade across one of them could lose metadata, so Kafka refuses it.
METADATA_CHANGED_AT = frozenset({7, 8, 11, 13, 14, 15, 17, 23, 30, 32, 33})
# Features a level depends on: (feature, level) -> the metadata.version level it needs.
METADATA_VERSION_NEEDED = {(ELIGIBLE_LEADER_REPLICAS_VERSION, 1): 23}
# A cluster never told otherwise runs at these, as Kafka 4.4 bootstraps them: transaction.version=2,
# group.version=1 (KIP-848's consumer groups) and share.version=2 (share groups with their dead-letter
# topics); the streams and ELR levels Kafka also sets pykafkad leaves off, since it does not
# implement them.
DEFAULT_LEVELS: dict[str, int] = {METADATA_VERSION: LATEST_METADATA_VERSION, TRANSACTION_VERSION: 2,
                                  GROUP_VERSION: 1, SHARE_VERSION: 2}
_ZNODE_VERSION = 2
_ENABLED = 1


class FeatureError(ValueError):
    """A feature level this broker cannot run at."""


@dataclass(frozen=True)
class FinalizedFeatures:
    """The levels the cluster runs at, and the epoch that orders their changes."""

    levels: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_LEVELS))
    epoch: int = 0

    def level(self, name: str) -> int:
        return self.levels.get(name, 0)

    @property
    def transaction_version(self) -> int:
        return self.level(TRANSACTION_VERSION)


def check_level(name: str, level: int) -> None:
    """FeatureError unless this broker supports ``name`` at ``level``."""
    low, high = SUPPORTED.get(name, (0, 0))
    if not low <= level <= high:
        raise FeatureError(f"Feature {name} level {level} is outside the supported range {low}-{high}")


def metadata_changed(high: int, low: int) -> bool:
    """Whether a metadata.version downgrade from ``high`` to ``low`` crosses a metadata change."""
    return any(low < level <= high for level in METADATA_CHANGED_AT)


def encode(levels: dict[str, int]) -> bytes:
    return json.dumps({"version": _ZNODE_VERSION, "status": _ENABLED, "features": {
        name: {"max_version_level": level} for name, level in sorted(levels.items())}}).encode()


def decode(node: Node | None) -> FinalizedFeatures:
    """The levels a ``/feature`` node holds (the defaults when it is absent or unreadable)."""
    if node is None or not node.data:
        return FinalizedFeatures()
    try:
        doc = json.loads(node.data)
        levels = {str(name): int(v["max_version_level"]) for name, v in doc.get("features", {}).items()}
    except (ValueError, TypeError, KeyError, AttributeError):
        return FinalizedFeatures(epoch=node.version + 1)
    # metadata.version is always finalized; a node written before it was recorded runs at the latest.
    levels.setdefault(METADATA_VERSION, LATEST_METADATA_VERSION)
    return FinalizedFeatures({name: level for name, level in levels.items() if level > 0}, node.version + 1)
