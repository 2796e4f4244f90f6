"""This broker's report of its replicas on failed log dirs, for the controller: the node's layout and
its writer.

Kafka's ZooKeeper-mode broker told the controller of a failed log dir through a
``/log_dir_event_notification`` node, and the controller learnt which replicas were offline from the
broker's LeaderAndIsr answers (KAFKA_STORAGE_ERROR).  pykafkad's controller sends no requests to
brokers: it reacts to nodes.  So a broker with a failed log dir writes the replicas in it to the
ephemeral node ``/brokers/offline_replicas/<id>`` (``{"version": 1, "log_dirs": [...],
"partitions": {"<topic>": [<partition>, ...]}}``) and deletes it once its dirs are online again; a
broker that dies takes its node with it, as its replicas are then offline anyway.  The controller's
side is ``controller/offline_replicas.py``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

import trio

from pykafkad.metadata.store import MetadataStore, NodeExistsError, NoNodeError, StoreError

log = logging.getLogger(__name__)

OFFLINE_REPLICAS = "/brokers/offline_replicas"

TopicPartition = tuple[str, int]


def offline_replicas_path(node_id: int) -> str:
    return f"{OFFLINE_REPLICAS}/{node_id}"


def encode(log_dirs: Iterable[str], partitions: Iterable[TopicPartition]) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for topic, index in sorted(partitions):
        by_topic.setdefault(topic, []).append(index)
    return json.dumps({"version": 1, "log_dirs": sorted(log_dirs), "partitions": by_topic},
                      separators=(",", ":")).encode()


def decode(data: bytes) -> frozenset[TopicPartition]:
    doc = json.loads(data) if data else {}
    return frozenset((topic, int(i)) for topic, indexes in (doc.get("partitions") or {}).items() for i in indexes)


class OfflineReplicasReport:
    """This broker's own node: written whenever the replicas on its failed log dirs change, and again
    on a new ZooKeeper session (the old one took the ephemeral node with it)."""

    def __init__(self, store: MetadataStore, node_id: int) -> None:
        self.store = store
        self.path = offline_replicas_path(node_id)
        self._written: bytes | None = None  # None: no node
        self._lock = trio.Lock()
        store.on_new_session(self._session_lost)

    def _session_lost(self) -> None:
        self._written = None

    async def write(self, log_dirs: Iterable[str], partitions: Iterable[TopicPartition]) -> bool:
        """Make the node say ``partitions`` (on ``log_dirs``) are offline, or remove it when there are
        none; whether the store took it."""
        partitions = list(partitions)
        data = encode(log_dirs, partitions) if partitions else None
        async with self._lock:
            if data == self._written:
                return True
            try:
                if data is None:
                    try:
                        await self.store.delete(self.path)
                    except NoNodeError:
                        pass
                else:
                    try:
                        await self.store.set(self.path, data)
                    except NoNodeError:
                        try:
                            await self.store.create(self.path, data, ephemeral=True)
                        except NodeExistsError:
                            await self.store.set(self.path, data)
            except StoreError as e:
                log.warning("reporting the replicas on failed log dirs to the controller: %s", e)
                return False
            self._written = data
            return True
