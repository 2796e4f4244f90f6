"""Group configs in a cluster: configs set on a group through one broker are kept in ZooKeeper
(``/config/groups/<group id>``, the id sanitized as a quota entity's) and every broker's cache hears
of them; deleting every key through another broker removes the node, and the group is no longer
listed anywhere."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from cluster_tests.conftest import Cluster
from cluster_tests.zookeeper_server import zk_cli
from compat_tests.raw_kafka import RawConnection

WAIT_S = 30.0
GROUP, SET, DELETE = 32, 0, 1


def _alter(port: int, group: str, ops: list[tuple[str, int, str | None]]) -> tuple[int, str | None]:
    with RawConnection(port) as conn:
        [result] = conn.request(44, 1, {"resources": [
            {"resource_type": GROUP, "resource_name": group,
             "configs": [{"name": k, "config_operation": op, "value": v} for k, op, v in ops]}],
            "validate_only": False})["responses"]
    return result["error_code"], result["error_message"]


def _described(port: int, group: str) -> dict[str, tuple[str, int]]:
    with RawConnection(port) as conn:
        [result] = conn.request(32, 4, {"resources": [
            {"resource_type": GROUP, "resource_name": group, "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False})["results"]
    assert result["error_code"] == 0, result
    return {c["name"]: (c["value"], c["config_source"]) for c in result["configs"]}


def _listed(port: int) -> list[str]:
    with RawConnection(port) as conn:
        answer = conn.request(74, 1, {"resource_types": [GROUP]})
    return sorted(r["resource_name"] for r in answer["config_resources"])


def _wait(what: str, check: Callable[[], bool]) -> None:
    """Until ``check()`` holds: each broker's cache applies a ZooKeeper change when its watch fires."""
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_group_configs_set_on_one_broker_are_seen_by_another(cluster: Cluster) -> None:
    one, two = cluster.start_broker(1), cluster.start_broker(2)
    assert _alter(one.port, "apps/orders", [("consumer.session.timeout.ms", SET, "50000"),
                                            ("consumer.heartbeat.interval.ms", SET, "6000")]) == (0, None)
    node = json.loads(zk_cli(cluster.zk_connect, "get", "/config/groups/apps%2Forders"))
    assert node == {"version": 1, "config": {"consumer.session.timeout.ms": "50000",
                                             "consumer.heartbeat.interval.ms": "6000"}}
    _wait("broker 2 describes the group's configs", lambda: {
        k: v for k, v in _described(two.port, "apps/orders").items() if v[1] == 8} == {
        "consumer.session.timeout.ms": ("50000", 8), "consumer.heartbeat.interval.ms": ("6000", 8)})
    assert "apps/orders" in _listed(two.port)

    assert _alter(two.port, "apps/orders", [("consumer.session.timeout.ms", DELETE, None),
                                            ("consumer.heartbeat.interval.ms", DELETE, None)]) == (0, None)
    _wait("broker 1 no longer lists the group", lambda: "apps/orders" not in _listed(one.port))
    assert _described(one.port, "apps/orders")["consumer.session.timeout.ms"] == ("45000", 5)
    assert "apps%2Forders" not in zk_cli(cluster.zk_connect, "ls", "/config/groups")
