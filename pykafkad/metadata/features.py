"""The cluster's feature levels (KIP-584): which features this broker supports, the levels the
cluster has finalized, and their node in the metadata store.

Kafka's ZooKeeper mode kept them in the ``/feature`` znode; so do we, in the same JSON shape
(``{"version":2,"status":1,"features":{"transaction.version":{"max_version_level":2}}}``).  A
cluster whose node is absent runs at the default levels, those of a new Kafka 4.1 cluster.
ApiVersions reports the levels with an epoch (the node's version plus one, 0 while it is absent)
so clients see a change; ``kafka-features.sh`` changes them through UpdateFeatures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pykafkad.metadata.store import Node

FEATURE_ZNODE = "/feature"
TRANSACTION_VERSION = "transaction.version"
# name -> (min, max) level this broker can run at.  Level 0 means the feature is off.
SUPPORTED: dict[str, tuple[int, int]] = {TRANSACTION_VERSION: (0, 2)}
# A cluster never told otherwise runs at these (Kafka 4.1 bootstraps transaction.version=2).
DEFAULT_LEVELS: dict[str, int] = {TRANSACTION_VERSION: 2}
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
    if name not in SUPPORTED:
        raise FeatureError(f"Feature {name} is not supported by this broker; supported features: "
                           f"{', '.join(sorted(SUPPORTED))}")
    low, high = SUPPORTED[name]
    if not low <= level <= high:
        raise FeatureError(f"Feature {name} level {level} is outside the supported range {low}-{high}")


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
    return FinalizedFeatures({name: level for name, level in levels.items() if level > 0}, node.version + 1)
