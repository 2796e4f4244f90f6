"""The metrics read from the broker's state when Prometheus scrapes, rather than counted as it
works: partitions and leaders, replication health, each log's size and offsets, connections per
listener, and consumer lag (each group's committed offsets against the high watermark, for the
groups this broker coordinates; no exporter of its own needed)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from pykafkad.broker import Broker


class BrokerStateCollector(Collector):
    def __init__(self, broker: Broker, connections: Callable[[], dict[str, int]]) -> None:
        self.broker = broker
        self.connections = connections
        # (group, topic, partition, committed offset, lag), refreshed before each scrape.
        self.lag: list[tuple[str, str, int, int, int]] = []

    async def refresh(self) -> None:
        """Read the committed offsets of the groups this broker coordinates (through their actors)."""
        broker = self.broker
        lag: list[tuple[str, str, int, int, int]] = []
        for group_id in sorted(broker.groups.group_ids()):
            result = await broker.groups.call(group_id, "fetch", {"topics": None, "require_stable": False})
            for topic in result.get("topics", []):
                for p in topic["partitions"]:
                    committed = p["committed_offset"]
                    partition = broker.replicas.get(topic["name"], p["partition_index"])
                    if committed < 0 or partition is None:
                        continue  # no replica here: its high watermark is another broker's to tell
                    lag.append((group_id, topic["name"], p["partition_index"], committed,
                                max(0, partition.high_watermark - committed)))
        self.lag = lag

    def collect(self) -> Iterator[GaugeMetricFamily]:
        broker = self.broker
        md = broker.metadata
        partitions = broker.replicas.partitions()
        led = [p for p in partitions if p.is_leader]
        under_replicated = sum(1 for p in led if len(p.isr) < len(p.replicas))
        under_min_isr = sum(1 for p in led if len(p.isr) < broker.replicas.min_insync_replicas(p))
        controller = md.controller_id == broker.config.node_id
        offline = sum(1 for t in md.topics.values() for p in t.partitions if p.leader not in md.brokers)
        for name, doc, value in (
            ("kafka_server_replicamanager_partitioncount", "Replicas this broker hosts", len(partitions)),
            ("kafka_server_replicamanager_leadercount", "Partitions this broker leads", len(led)),
            ("kafka_server_replicamanager_underreplicatedpartitions",
             "Partitions this broker leads whose ISR lacks a replica", under_replicated),
            ("kafka_server_replicamanager_underminisrpartitioncount",
             "Partitions this broker leads whose ISR is below min.insync.replicas", under_min_isr),
            ("kafka_controller_kafkacontroller_activecontrollercount", "1 on the active controller", int(controller)),
            # As in Kafka, only the controller counts offline partitions (those without a live leader).
            ("kafka_controller_kafkacontroller_offlinepartitionscount", "Partitions without a live leader",
             offline if controller else 0),
        ):
            yield GaugeMetricFamily(name, doc, value=value)
        size = GaugeMetricFamily("kafka_log_log_size", "Bytes of a partition's log", labels=["topic", "partition"])
        start = GaugeMetricFamily("kafka_log_log_logstartoffset", "A partition's log start offset",
                                  labels=["topic", "partition"])
        end = GaugeMetricFamily("kafka_log_log_logendoffset", "A partition's log end offset",
                                labels=["topic", "partition"])
        for p in partitions:
            labels = [p.topic, str(p.index)]
            size.add_metric(labels, p.log.size_bytes())
            start.add_metric(labels, p.log.log_start_offset)
            end.add_metric(labels, p.log_end_offset)
        yield from (size, start, end)
        connections = GaugeMetricFamily("kafka_server_socketservermetrics_connection_count",
                                        "Open client connections per listener", labels=["listener"])
        for listener, count in sorted(self.connections().items()):
            connections.add_metric([listener], count)
        yield connections
        lag = GaugeMetricFamily("kafka_consumergroup_lag", "High watermark minus the group's committed offset",
                                labels=["consumergroup", "topic", "partition"])
        current = GaugeMetricFamily("kafka_consumergroup_current_offset", "The group's committed offset",
                                    labels=["consumergroup", "topic", "partition"])
        for group, topic, index, committed, behind in self.lag:
            lag.add_metric([group, topic, str(index)], behind)
            current.add_metric([group, topic, str(index)], committed)
        yield from (lag, current)
