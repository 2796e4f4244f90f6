"""Writing a transaction's markers: a COMMIT or ABORT marker in every partition it wrote to.

Each partition's leader writes its marker (WriteTxnMarkers, Kafka's inter-broker API): this broker
directly when it leads the partition, others over a link to their listener.  A partition whose
leader is unknown or moving is tried again after a short backoff until its marker is written and
replicated; one whose topic is gone needs none.  A partition that refuses the marker as stale
(INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED) was ended by a newer marker, so it is
done too; Kafka leaves such a transaction pending instead, until its coordinator moves.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from pykafkad.network.tls import inter_broker_context
from pykafkad.replica.broker_link import BrokerLinkError, BrokerLinkPool
from pykafkad.security.sasl_client import inter_broker_sasl
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig
    from pykafkad.metadata.cluster_metadata import ClusterMetadata
    from pykafkad.replica.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

WRITE_TXN_MARKERS = 27
WRITE_TXN_MARKERS_VERSION = 1
RETRY_BACKOFF_S = 0.1
MARKER_TIMEOUT_S = 30.0
# Answers that end a partition's part: written, or nothing left to write.
DONE = frozenset({ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.INVALID_PRODUCER_EPOCH,
                  ErrorCode.TRANSACTION_COORDINATOR_FENCED})


class TransactionMarkers:
    """Writes markers through the partitions' leaders; ``write`` returns once all are written."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata, replicas: ReplicaManager) -> None:
        self.config = config
        self.metadata = metadata
        self.replicas = replicas
        self._links = BrokerLinkPool(f"txn-markers-{config.node_id}", ssl_context=inter_broker_context(config),
                                     sasl=inter_broker_sasl(config))

    async def write(self, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int,
                    partitions: set[tuple[str, int]]) -> None:
        left = set(partitions)
        while left:
            by_leader: dict[int, list[tuple[str, int]]] = {}
            for topic, index in sorted(left):
                info = self.metadata.topics.get(topic)
                if info is None or index >= len(info.partitions):
                    left.discard((topic, index))  # deleted: no marker to write
                    continue
                by_leader.setdefault(info.partitions[index].leader, []).append((topic, index))
            results: dict[tuple[str, int], ErrorCode] = {}
            async with trio.open_nursery() as nursery:
                for leader, tps in by_leader.items():
                    nursery.start_soon(self._write_at, leader, tps, producer_id, producer_epoch, commit,
                                       coordinator_epoch, results)
            for tp, code in results.items():
                if code in DONE:
                    if code != ErrorCode.NONE:
                        log.info("%s-%d: marker for producer %d not needed: %s", *tp, producer_id, code.name)
                    left.discard(tp)
            if left:
                await trio.sleep(RETRY_BACKOFF_S)

    async def _write_at(self, leader: int, tps: list[tuple[str, int]], producer_id: int, producer_epoch: int,
                        commit: bool, coordinator_epoch: int, results: dict[tuple[str, int], ErrorCode]) -> None:
        if leader == self.config.node_id:
            for topic, index in tps:
                results[(topic, index)] = await self.replicas.write_marker(
                    topic, index, producer_id, producer_epoch, commit, coordinator_epoch, MARKER_TIMEOUT_S)
            return
        broker = self.metadata.brokers.get(leader)
        if broker is None:
            return  # no leader now: asked again after the backoff
        topics: dict[str, list[int]] = {}
        for topic, index in tps:
            topics.setdefault(topic, []).append(index)
        body: dict[str, Any] = {"markers": [{
            "producer_id": producer_id, "producer_epoch": producer_epoch, "transaction_result": commit,
            "topics": [{"name": t, "partition_indexes": ps} for t, ps in topics.items()],
            "coordinator_epoch": coordinator_epoch}]}
        try:
            answer = await self._links.request(broker.host, broker.port, WRITE_TXN_MARKERS,
                                               WRITE_TXN_MARKERS_VERSION, body, MARKER_TIMEOUT_S + 5)
        except BrokerLinkError as e:
            log.info("markers for producer %d at broker %d: %s; retrying", producer_id, leader, e)
            return
        for marker in answer["markers"]:
            for topic_result in marker["topics"]:
                for p in topic_result["partitions"]:
                    try:
                        code = ErrorCode(p["error_code"])
                    except ValueError:
                        code = ErrorCode.UNKNOWN_SERVER_ERROR
                    results[(topic_result["name"], p["partition_index"])] = code
