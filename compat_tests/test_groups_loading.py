"""ListGroups while the group coordinator loads a ``__consumer_offsets`` partition it leads.

Kafka 4.1's group coordinator (GroupCoordinatorService.listGroups) reads every partition it
coordinates; one still loading fails the whole listing with COORDINATOR_LOAD_IN_PROGRESS and no
groups, and clients (AdminClient.listConsumerGroups, kafka-consumer-groups.sh --list) retry.
Before, pykafkad answered NONE with the groups of the partitions already loaded, so a listing
taken while a new leader loaded looked complete without the loading partitions' groups.  The
requests for one group (DescribeGroups, JoinGroup, OffsetFetch) answer it too.

pykafkad loads the partitions it leads before it listens, so a restarted broker has no window;
a partition starts loading while the broker serves when it becomes leader (failover) or when the
topic is created.  Here the topic is created by FindCoordinator, and the loads are held by the
broker's test-only hold (env PYKAFKAD_TEST_HOLD_COORDINATOR_LOADS, a file that, while it exists,
keeps loads waiting) so the answers during the load are seen without racing it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from compat_tests.clients import unique_topic
from compat_tests.conftest import BrokerFactory
from compat_tests.raw_kafka import RawConnection
from pykafkad.coordinator.coordinator_partitions import HOLD_LOADS_ENV
from wire.error_codes import ErrorCode as E

OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, JOIN, DESCRIBE, LIST = 8, 9, 10, 11, 15, 16
TIMEOUT_S = 30.0


def _list(conn: RawConnection, version: int = 4) -> tuple[int, list[str]]:
    answer = conn.request(LIST, version, {"states_filter": [], "types_filter": []})
    return answer["error_code"], sorted(g["group_id"] for g in answer["groups"])


def _group_answers(conn: RawConnection, group: str, topic: str) -> dict[str, Any]:
    """What the requests for one group answer: their error codes."""
    described = conn.request(DESCRIBE, 5, {"groups": [group], "include_authorized_operations": False})
    joined = conn.request(JOIN, 5, {
        "group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
        "group_instance_id": None, "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b""}]})
    fetched = conn.request(OFFSET_FETCH, 3, {"group_id": group,
                                             "topics": [{"name": topic, "partition_indexes": [0]}]})
    return {"describe": described["groups"][0]["error_code"], "join": joined["error_code"],
            "offset fetch": fetched["error_code"]}


@pytest.mark.compat_timeout(120)
def test_list_groups_while_groups_load(broker_factory: BrokerFactory, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    hold = tmp_path / "hold-coordinator-loads"
    monkeypatch.setenv(HOLD_LOADS_ENV, str(hold))
    b = broker_factory("groups-loading")
    group, topic = "loading-group", unique_topic("loading")
    with RawConnection(b.port) as conn:
        assert _list(conn) == (E.NONE, [])  # no offsets topic yet: nothing to load
        conn.create_topic(topic)
        hold.touch()
        found = conn.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})
        assert found["coordinators"][0]["error_code"] == E.NONE, found
        # __consumer_offsets now exists and its partitions, led here, are being loaded.
        for version in (0, 4, 5):
            assert _list(conn, version) == (E.COORDINATOR_LOAD_IN_PROGRESS, []), f"ListGroups v{version}"
        assert _group_answers(conn, group, topic) == {
            "describe": E.COORDINATOR_LOAD_IN_PROGRESS, "join": E.COORDINATOR_LOAD_IN_PROGRESS,
            "offset fetch": E.COORDINATOR_LOAD_IN_PROGRESS}
        hold.unlink()
        deadline = time.monotonic() + TIMEOUT_S
        while (listed := _list(conn))[0] != E.NONE:
            assert listed[0] == E.COORDINATOR_LOAD_IN_PROGRESS and time.monotonic() < deadline, listed
            time.sleep(0.05)
        committed = conn.request(OFFSET_COMMIT, 2, {
            "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "retention_time_ms": -1,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 3,
                                                       "committed_metadata": ""}]}]})
        assert committed["topics"][0]["partitions"][0]["error_code"] == E.NONE, committed
        assert _list(conn) == (E.NONE, [group])
