"""The metadata file of pykafkad before the metadata store: one JSON document, read into nodes.

Such a file holds ``cluster_id``, ``next_producer_id_block``, ``broker_configs`` and ``topics``
(name, id, configs, partitions with leader, epoch, replicas and ISR).  ``to_nodes`` gives the same
facts as Kafka's znodes, so a data directory written by an earlier version starts unchanged.
"""

from __future__ import annotations

import uuid

from pykafkad.metadata import znodes
from pykafkad.metadata.znodes import PartitionState


def to_nodes(document: dict) -> dict[str, bytes]:
    nodes: dict[str, bytes] = {path: b"" for path in znodes.PERSISTENT_PATHS}
    nodes[znodes.CLUSTER_ID] = znodes.encode_cluster_id(document["cluster_id"])
    next_block = int(document.get("next_producer_id_block", 0))
    if next_block > 0:
        nodes[znodes.PRODUCER_ID_BLOCK] = znodes.encode_producer_id_block(-1, 0, next_block - 1)
    for resource, configs in document.get("broker_configs", {}).items():
        if configs:
            nodes[znodes.broker_config_path(resource)] = znodes.encode_config(dict(configs))
    for topic in document.get("topics", []):
        name = topic["name"]
        partitions = sorted(topic["partitions"], key=lambda p: p["index"])
        nodes[znodes.topic_path(name)] = znodes.encode_assignment(
            uuid.UUID(topic["topic_id"]), [list(p["replicas"]) for p in partitions])
        nodes[znodes.topic_config_path(name)] = znodes.encode_config(dict(topic.get("configs", {})))
        nodes[znodes.partitions_path(name)] = b""
        for p in partitions:
            nodes[znodes.partition_path(name, p["index"])] = b""
            nodes[znodes.partition_state_path(name, p["index"])] = znodes.encode_partition_state(
                PartitionState(p["leader"], p["leader_epoch"], list(p["isr"]), 0))
    return nodes
