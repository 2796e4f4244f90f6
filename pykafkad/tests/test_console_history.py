"""The console's history: records/s per topic between two samples (only partitions led here), total
lag per group, and a topic or group that is gone takes its history with it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import trio

from pykafkad.coordinator.group.requests import FetchOffsets
from pykafkad.observability import history
from pykafkad.observability.history import History
from pykafkad.share.share_group_offsets import ShareOffset


def _partition(topic: str, leader: bool, end: int, hw: int) -> SimpleNamespace:
    return SimpleNamespace(topic=topic, index=0, is_leader=leader, log_end_offset=end, high_watermark=hw)


def test_rates_lag_and_forgetting(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(history.time, "time", lambda: now[0])
    partitions = {"orders": _partition("orders", True, 100, 100), "copied": _partition("copied", False, 500, 500)}
    committed = {"billing": 40}
    groups = ["billing", "jobs"]

    async def call(group_id: str, request: FetchOffsets) -> dict[str, Any]:
        assert request == FetchOffsets()
        return {"topics": [{"name": "orders", "partitions": [{"partition_index": 0,
                                                               "committed_offset": committed[group_id]}]}]}

    async def share_offsets(group_id: str) -> list[tuple[str, int, ShareOffset]]:
        # "jobs" is a share group: no committed offsets, its share-partitions' lag instead.
        return [("orders", 0, ShareOffset(start_offset=90, lag=7))] if group_id == "jobs" else []

    async def share_or_classic(group_id: str, request: FetchOffsets) -> dict[str, Any]:
        return {"topics": []} if group_id == "jobs" else await call(group_id, request)

    broker: Any = SimpleNamespace(
        replicas=SimpleNamespace(partitions=lambda: list(partitions.values()),
                                 get=lambda topic, index: partitions.get(topic)),
        groups=SimpleNamespace(group_ids=lambda: list(groups), call=share_or_classic),
        share_group_offsets=SimpleNamespace(of_group=share_offsets))
    seen = History(broker)

    trio.run(seen.sample)
    assert seen.topic_rates == {}  # one sample is no rate yet
    assert list(seen.group_lag["billing"]) == [(1000.0, 60)]
    assert list(seen.group_lag["jobs"]) == [(1000.0, 7)]
    now[0] += 5
    partitions["orders"].log_end_offset = partitions["orders"].high_watermark = 350
    committed["billing"] = 300
    trio.run(seen.sample)
    assert list(seen.topic_rates["orders"]) == [(1005.0, 50.0)]  # 250 records in 5 s
    assert "copied" not in seen.topic_rates  # a follower's copy is its leader's to count
    assert list(seen.group_lag["billing"]) == [(1000.0, 60), (1005.0, 50)]

    del partitions["orders"], committed["billing"]
    groups.clear()
    now[0] += 5
    trio.run(seen.sample)
    assert seen.topic_rates == {} and seen.group_lag == {}
