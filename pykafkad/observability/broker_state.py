"""The metrics read from the broker's state when Prometheus scrapes, rather than counted as it
works: partitions and leaders, replication health, each log's size and offsets, connections per
listener, and consumer lag (each group's committed offsets against the high watermark, for the
groups this broker coordinates; no exporter of its own needed).

``refresh`` reads the broker's state on the event loop into a ``StateSnapshot`` of plain values;
``collect`` formats only that snapshot, so a scrape can render its text off the loop (in a thread)
without touching state the loop is changing."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from pykafkad.coordinator.group.requests import FetchOffsets

if TYPE_CHECKING:
    from pykafkad.broker import Broker


@dataclass(frozen=True)
class StateSnapshot:
    """What one scrape reports, read at one moment on the event loop."""

    # (metric name, help, value) of the broker-wide gauges.
    gauges: list[tuple[str, str, int]] = field(default_factory=list)
    # (topic, partition, log size, log start offset, log end offset) per hosted replica.
    logs: list[tuple[str, int, int, int, int]] = field(default_factory=list)
    connections: dict[str, int] = field(default_factory=dict)
    # (group, topic, partition, committed offset, lag).
    lag: list[tuple[str, str, int, int, int]] = field(default_factory=list)


_GAUGES = (
    ("kafka_server_replicamanager_partitioncount", "Replicas this broker hosts"),
    ("kafka_server_replicamanager_leadercount", "Partitions this broker leads"),
    ("kafka_server_replicamanager_underreplicatedpartitions", "Partitions this broker leads whose ISR lacks a replica"),
    ("kafka_server_replicamanager_underminisrpartitioncount",
     "Partitions this broker leads whose ISR is below min.insync.replicas"),
    ("kafka_controller_kafkacontroller_activecontrollercount", "1 on the active controller"),
    ("kafka_controller_kafkacontroller_offlinepartitionscount", "Partitions without a live leader"),
    ("kafka_server_fetchsessioncache_numincrementalfetchsessions",
     "Fetch sessions (KIP-227) this broker holds for its followers"),
    ("kafka_server_fetchsessioncache_numincrementalfetchpartitionscached",
     "Partitions in the fetch sessions this broker holds"),
)


class BrokerStateCollector(Collector):
    def __init__(self, broker: Broker, connections: Callable[[], dict[str, int]]) -> None:
        self.broker = broker
        self.connections = connections
        self.snapshot = StateSnapshot(gauges=[(name, doc, 0) for name, doc in _GAUGES])

    async def refresh(self) -> None:
        """Read the broker's state, and the committed offsets of the groups this broker coordinates
        (through their actors), into a new snapshot."""
        broker = self.broker
        lag: list[tuple[str, str, int, int, int]] = []
        for group_id in sorted(broker.groups.group_ids()):
            result = await broker.groups.call(group_id, FetchOffsets())
            for topic in result.get("topics", []):
                for p in topic["partitions"]:
                    committed = p["committed_offset"]
                    partition = broker.replicas.get(topic["name"], p["partition_index"])
                    if committed < 0 or partition is None:
                        continue  # no replica here: its high watermark is another broker's to tell
                    lag.append((group_id, topic["name"], p["partition_index"], committed,
                                max(0, partition.high_watermark - committed)))
        md = broker.metadata
        partitions = broker.replicas.partitions()
        led = [p for p in partitions if p.is_leader]
        controller = md.controller_id == broker.config.node_id
        # As in Kafka, only the controller counts offline partitions (those without a live leader).
        offline = sum(1 for t in md.topics.values() for p in t.partitions if p.leader not in md.brokers)
        values = (len(partitions), len(led), sum(1 for p in led if len(p.isr) < len(p.replicas)),
                  sum(1 for p in led if len(p.isr) < broker.replicas.min_insync_replicas(p)), int(controller),
                  offline if controller else 0, len(broker.replicas.fetch_sessions),
                  broker.replicas.fetch_sessions.partitions_cached())
        self.snapshot = StateSnapshot(
            gauges=[(name, doc, value) for (name, doc), value in zip(_GAUGES, values, strict=True)],
            logs=[(p.topic, p.index, p.log.size_bytes(), p.log.log_start_offset, p.log_end_offset)
                  for p in partitions],
            connections=dict(self.connections()), lag=lag)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        snapshot = self.snapshot
        for name, doc, value in snapshot.gauges:
            yield GaugeMetricFamily(name, doc, value=value)
        size = GaugeMetricFamily("kafka_log_log_size", "Bytes of a partition's log", labels=["topic", "partition"])
        start = GaugeMetricFamily("kafka_log_log_logstartoffset", "A partition's log start offset",
                                  labels=["topic", "partition"])
        end = GaugeMetricFamily("kafka_log_log_logendoffset", "A partition's log end offset",
                                labels=["topic", "partition"])
        for topic, index, log_size, log_start, log_end in snapshot.logs:
            labels = [topic, str(index)]
            size.add_metric(labels, log_size)
            start.add_metric(labels, log_start)
            end.add_metric(labels, log_end)
        yield from (size, start, end)
        connections = GaugeMetricFamily("kafka_server_socketservermetrics_connection_count",
                                        "Open client connections per listener", labels=["listener"])
        for listener, count in sorted(snapshot.connections.items()):
            connections.add_metric([listener], count)
        yield connections
        lag = GaugeMetricFamily("kafka_consumergroup_lag", "High watermark minus the group's committed offset",
                                labels=["consumergroup", "topic", "partition"])
        current = GaugeMetricFamily("kafka_consumergroup_current_offset", "The group's committed offset",
                                    labels=["consumergroup", "topic", "partition"])
        for group, topic, index, committed, behind in snapshot.lag:
            lag.add_metric([group, topic, str(index)], behind)
            current.add_metric([group, topic, str(index)], committed)
        yield from (lag, current)
