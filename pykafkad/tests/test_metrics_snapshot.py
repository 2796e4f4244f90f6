"""A scrape renders its text in a thread: ``collect`` must read only the snapshot that ``refresh``
took on the event loop, never the broker's live state."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import trio

from pykafkad.coordinator.group.requests import FetchOffsets
from pykafkad.observability.broker_state import BrokerStateCollector
from pykafkad.replica.fetch_session import FetchSessions


class _Untouchable:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"collect() read broker.{name} off the event loop")


def _partition(topic: str, index: int, leader: bool, isr: list[int]) -> SimpleNamespace:
    log = SimpleNamespace(size_bytes=lambda: 1000 * (index + 1), log_start_offset=index)
    return SimpleNamespace(topic=topic, index=index, is_leader=leader, isr=isr, replicas=[1, 2], log=log,
                           log_end_offset=10 + index, high_watermark=8 + index)


def _broker() -> SimpleNamespace:
    partitions = [_partition("orders", 0, True, [1, 2]), _partition("orders", 1, True, [1])]

    async def call(group_id: str, request: FetchOffsets) -> dict[str, Any]:
        assert request == FetchOffsets()
        return {"topics": [{"name": "orders", "partitions": [{"partition_index": 1, "committed_offset": 5}]}]}

    return SimpleNamespace(
        groups=SimpleNamespace(group_ids=lambda: ["billing"], call=call),
        replicas=SimpleNamespace(partitions=lambda: partitions, min_insync_replicas=lambda p: 2,
                                 get=lambda t, i: partitions[i], fetch_sessions=FetchSessions()),
        metadata=SimpleNamespace(controller_id=1, brokers={1: None, 2: None},
                                 topics={"orders": SimpleNamespace(partitions=[SimpleNamespace(leader=1)] * 2)}),
        config=SimpleNamespace(node_id=1))


def _samples(collector: BrokerStateCollector) -> dict[tuple[str, tuple[str, ...]], float]:
    return {(s.name, tuple(s.labels.values())): s.value for family in collector.collect() for s in family.samples}


def test_collect_reads_only_the_snapshot_taken_on_the_loop() -> None:
    collector = BrokerStateCollector(_broker(), lambda: {"PLAINTEXT": 3})  # type: ignore[arg-type]
    before = _samples(collector)  # registration collects before any refresh: every family, zeros
    assert before[("kafka_server_replicamanager_partitioncount", ())] == 0
    trio.run(collector.refresh)
    collector.broker = _Untouchable()  # type: ignore[assignment]
    collector.connections = _Untouchable()  # type: ignore[assignment]
    got = _samples(collector)
    assert got[("kafka_server_replicamanager_partitioncount", ())] == 2
    assert got[("kafka_server_replicamanager_underreplicatedpartitions", ())] == 1
    assert got[("kafka_server_replicamanager_underminisrpartitioncount", ())] == 1
    assert got[("kafka_controller_kafkacontroller_activecontrollercount", ())] == 1
    assert got[("kafka_log_log_size", ("orders", "1"))] == 2000
    assert got[("kafka_log_log_logendoffset", ("orders", "0"))] == 10
    assert got[("kafka_server_socketservermetrics_connection_count", ("PLAINTEXT",))] == 3
    assert got[("kafka_consumergroup_lag", ("billing", "orders", "1"))] == 4
    assert {name for name, _ in before} <= {name for name, _ in got}
