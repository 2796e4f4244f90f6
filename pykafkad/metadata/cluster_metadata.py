"""The cluster metadata model: brokers, topics, partitions, leaders, epochs, replicas, ISR, topic IDs, configs.

Handlers read and change the cluster only through ``ClusterMetadata``; where the model is
kept is a ``MetadataStore``'s business.  Today that is ``FileMetadataStore`` (one JSON
document under the first log dir, replaced atomically).  A ZooKeeper store for a later
multi-broker mode maps the same records onto Kafka's znodes (``/brokers/ids/<id>``,
``/brokers/topics/<topic>``, ``/config/topics/<topic>``, ``/cluster/id``) without the
handlers changing.
"""

from __future__ import annotations

import base64
import json
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME = 249


def topic_name_problem(name: str | None) -> str | None:
    """Kafka's topic-name rules; returns the reason a name is illegal, or None."""
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return "Topic name cannot be \".\" or \"..\""
    if len(name) > MAX_TOPIC_NAME:
        return f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME} characters"
    if not _TOPIC_NAME.match(name):
        return (f"Topic name \"{name}\" is illegal, it contains a character other than "
                "ASCII alphanumerics, '.', '_' and '-'")
    return None


@dataclass
class BrokerInfo:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass
class PartitionInfo:
    index: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]


@dataclass
class TopicInfo:
    name: str
    topic_id: uuid.UUID
    partitions: list[PartitionInfo]
    configs: dict[str, str] = field(default_factory=dict)
    internal: bool = False


class MetadataStore(Protocol):
    """Where the cluster model is persisted."""

    def load(self) -> dict | None: ...

    def save(self, document: dict) -> None: ...


class FileMetadataStore:
    """The model as one JSON file, written to a temp file, fsynced and renamed over the old one."""

    FILE_NAME = "pykafkad-cluster-metadata.json"

    def __init__(self, log_dir: Path) -> None:
        self.path = log_dir / self.FILE_NAME

    def load(self) -> dict | None:
        if not self.path.exists():
            return None
        return json.loads(self.path.read_text())

    def save(self, document: dict) -> None:
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            json.dump(document, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def new_cluster_id() -> str:
    """A cluster id shaped like Kafka's: a random UUID in URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class ClusterMetadata:
    """The one model of the cluster this broker serves."""

    def __init__(self, store: MetadataStore, node_id: int, host: str, port: int,
                 cluster_id: str | None = None) -> None:
        self._store = store
        self.node_id = node_id
        self.topics: dict[str, TopicInfo] = {}
        self.topics_by_id: dict[uuid.UUID, TopicInfo] = {}
        self.next_producer_id_block = 0
        # Dynamic broker configs by resource name: "" is the cluster default, "<id>" one broker.
        self.broker_configs: dict[str, dict[str, str]] = {}
        document = store.load()
        if document is not None:
            self.cluster_id: str = document["cluster_id"]
            self.next_producer_id_block = document.get("next_producer_id_block", 0)
            self.broker_configs = {k: dict(v) for k, v in document.get("broker_configs", {}).items()}
            for t in document["topics"]:
                topic = TopicInfo(
                    name=t["name"],
                    topic_id=uuid.UUID(t["topic_id"]),
                    partitions=[PartitionInfo(**p) for p in t["partitions"]],
                    configs=dict(t.get("configs", {})),
                    internal=t.get("internal", False),
                )
                self._index(topic)
        else:
            self.cluster_id = cluster_id or new_cluster_id()
        # The broker registers itself each start: its endpoint may have changed.
        self.brokers = {node_id: BrokerInfo(node_id, host, port)}
        self.controller_id = node_id
        self._persist()

    def _index(self, topic: TopicInfo) -> None:
        self.topics[topic.name] = topic
        self.topics_by_id[topic.topic_id] = topic

    def _persist(self) -> None:
        self._store.save(
            {
                "cluster_id": self.cluster_id,
                "next_producer_id_block": self.next_producer_id_block,
                "broker_configs": self.broker_configs,
                "topics": [
                    {
                        "name": t.name,
                        "topic_id": str(t.topic_id),
                        "internal": t.internal,
                        "configs": t.configs,
                        "partitions": [p.__dict__ for p in t.partitions],
                    }
                    for t in sorted(self.topics.values(), key=lambda t: t.name)
                ],
            }
        )

    def _new_partition(self, index: int, replicas: list[int] | None = None) -> PartitionInfo:
        replicas = replicas or [self.node_id]
        return PartitionInfo(index=index, leader=self.node_id, leader_epoch=0, replicas=replicas,
                             isr=list(replicas))

    def create_topic(self, name: str, num_partitions: int, configs: dict[str, str],
                     assignments: list[list[int]] | None = None, internal: bool = False) -> TopicInfo:
        topic_id = uuid.uuid4()
        while topic_id in self.topics_by_id or topic_id.int == 0:
            topic_id = uuid.uuid4()
        partitions = [
            self._new_partition(i, assignments[i] if assignments else None) for i in range(num_partitions)
        ]
        topic = TopicInfo(name=name, topic_id=topic_id, partitions=partitions, configs=dict(configs),
                          internal=internal)
        self._index(topic)
        self._persist()
        return topic

    def delete_topic(self, name: str) -> TopicInfo:
        topic = self.topics.pop(name)
        self.topics_by_id.pop(topic.topic_id, None)
        self._persist()
        return topic

    def add_partitions(self, name: str, new_total: int,
                       assignments: list[list[int]] | None = None) -> list[PartitionInfo]:
        topic = self.topics[name]
        start = len(topic.partitions)
        added = [
            self._new_partition(i, assignments[i - start] if assignments else None)
            for i in range(start, new_total)
        ]
        topic.partitions.extend(added)
        self._persist()
        return added

    def set_topic_configs(self, name: str, configs: dict[str, str]) -> None:
        """Replace a topic's config overrides."""
        self.topics[name].configs = dict(configs)
        self._persist()

    def set_broker_configs(self, resource: str, configs: dict[str, str]) -> None:
        """Replace the dynamic configs of one broker ("<id>") or of the cluster default ("")."""
        if configs:
            self.broker_configs[resource] = dict(configs)
        else:
            self.broker_configs.pop(resource, None)
        self._persist()

    def allocate_producer_id_block(self, size: int) -> int:
        """Reserve ``size`` producer ids that no later start of this broker hands out again."""
        first = self.next_producer_id_block
        self.next_producer_id_block = first + size
        self._persist()
        return first
