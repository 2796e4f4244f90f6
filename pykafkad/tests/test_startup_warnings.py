"""startup_warnings: the one line a KRaft config gets, naming what the broker does instead."""

from __future__ import annotations

from pykafkad.config import build_config, startup_warnings


def test_kraft_keys_on_zookeeper_say_so() -> None:
    config = build_config({"process.roles": "broker", "controller.quorum.voters": "1@h:9093",
                           "zookeeper.connect": "zk1:2181/kafka"})
    lines = [line for line in startup_warnings(config) if "KRaft" in line]
    assert lines == ["KRaft keys ignored (process.roles=broker, controller.quorum.voters=1@h:9093): pykafkad runs "
                     "as a single node or on ZooKeeper (zookeeper.connect), with no KRaft quorum; this broker will "
                     "join the cluster on ZooKeeper at zk1:2181/kafka"]


def test_no_kraft_keys_no_kraft_line() -> None:
    assert not [line for line in startup_warnings(build_config({"node.id": "1"})) if "KRaft" in line]
