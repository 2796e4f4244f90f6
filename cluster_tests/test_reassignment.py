"""Partition reassignment with Kafka's own ``kafka-reassign-partitions.sh``: a new broker gets no
partitions until replicas are moved onto it (--generate / --execute / --verify) under an acks=all
load with nothing lost; the replication factor of a topic is raised and its old leader killed; a
throttled reassignment is listed, cancelled, started again and completed across a controller kill.

ZooKeeper and four brokers on 127.0.0.1; every wait is on a ZooKeeper watch or a client event.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cluster_tests.clients import Load, produce, read_everything
from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection

STATE = "/brokers/topics/{topic}/partitions/{partition}/state"
ALTER_PARTITION_REASSIGNMENTS = 45
INVALID_REPLICATION_FACTOR = 38
REMOVAL_TIMEOUT_S = 30.0
REPO_ROOT = Path(__file__).resolve().parent.parent


def _start(cluster: Cluster, ids: list[int]) -> ZooKeeperView:
    for node_id in ids:
        cluster.start_broker(node_id, {"auto.leader.rebalance.enable": "false"})
    view = ZooKeeperView(cluster.zk_connect)
    view.wait_children("/brokers/ids", lambda live: live == [str(i) for i in ids])
    return view


def _create(cluster: Cluster, view: ZooKeeperView, topic: str, assignment: str) -> None:
    run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", topic,
                              "--replica-assignment", assignment])
    for p, replicas in enumerate(assignment.split(",")):
        expected = sorted(int(r) for r in replicas.split(":"))
        view.wait_data(STATE.format(topic=topic, partition=p),
                       lambda s, e=expected: s is not None and sorted(s["isr"]) == e)


def _reassign(cluster: Cluster, *args: str, check: bool = True) -> str:
    done = run_tool("kafka-reassign-partitions", ["--bootstrap-server", cluster.bootstrap, *args], check=check)
    return done.stdout + done.stderr


def _plan(path: Path, topic: str, targets: dict[int, list[int]]) -> str:
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic, "partition": p, "replicas": r} for p, r in targets.items()]}))
    return str(path)


def _wait_assigned(view: ZooKeeperView, topic: str, targets: dict[int, list[int]]) -> dict[str, Any]:
    """Until the topic's assignment is ``targets`` with no reassignment left, and each partition's
    ISR is its replicas; returns the assignment node."""
    node = view.wait_data(f"/brokers/topics/{topic}", lambda a: a is not None and all(
        a["partitions"][str(p)] == r for p, r in targets.items()) and not a["adding_replicas"]
        and not a["removing_replicas"], timeout=90)
    for p, replicas in targets.items():
        view.wait_data(STATE.format(topic=topic, partition=p),
                       lambda s, r=replicas: sorted(s["isr"]) == sorted(r) and s["leader"] in r)
    return node


def _wait_gone(path: Path) -> None:
    """Until a replica's directory has been removed (the broker deletes it in the background)."""
    deadline = time.monotonic() + REMOVAL_TIMEOUT_S
    while path.exists():
        assert time.monotonic() < deadline, f"{path} was never removed"
        time.sleep(0.05)


def _replica_dir(cluster: Cluster, node_id: int, topic: str, partition: int) -> Path:
    return cluster.root / f"broker-{node_id}" / "logs" / f"{topic}-{partition}"


def _check_no_loss(bootstrap: str, topic: str, partitions: int, acked: dict[int, tuple[int, int]]) -> None:
    got = read_everything(bootstrap, topic, partitions, len(acked))
    where = {(p, o): v for v, p, o in got}
    assert len(where) == len(got), "a record was read twice"
    values = [v for v, _, _ in got]
    assert len(values) == len(set(values)), "a value was written twice"
    for value, position in acked.items():
        assert where.get(position) == value, f"acknowledged {value} at {position}, found {where.get(position)}"


@pytest.mark.cluster_timeout(300)
def test_replicas_move_onto_a_new_broker_under_load(cluster: Cluster, tmp_path: Path) -> None:
    view = _start(cluster, [1, 2, 3])
    try:
        _create(cluster, view, "moving", "1:2,2:3")
        # A broker that joins later is given nothing of the existing topics by itself, as in Kafka.
        cluster.start_broker(4, {"auto.leader.rebalance.enable": "false"})
        view.wait_children("/brokers/ids", lambda live: live == ["1", "2", "3", "4"])
        assert not _replica_dir(cluster, 4, "moving", 0).exists()
        assert view.json("/brokers/topics/moving")["partitions"] == {"0": [1, 2], "1": [2, 3]}

        load = Load(cluster.bootstrap, "moving").start()
        load.wait_acked(300)

        topics_file = tmp_path / "topics.json"
        topics_file.write_text(json.dumps({"version": 1, "topics": [{"topic": "moving"}]}))
        out = _reassign(cluster, "--topics-to-move-json-file", str(topics_file), "--broker-list", "2,3,4",
                        "--generate")
        assert "Current partition replica assignment" in out, out
        proposed = json.loads(out.split("Proposed partition reassignment configuration")[1].strip().splitlines()[0])
        assert {p["partition"] for p in proposed["partitions"]} == {0, 1}
        assert all(set(p["replicas"]) <= {2, 3, 4} and len(p["replicas"]) == 2 for p in proposed["partitions"])

        targets = {0: [4, 3], 1: [3, 4]}
        plan = _plan(tmp_path / "plan.json", "moving", targets)
        out = _reassign(cluster, "--reassignment-json-file", plan, "--execute", "--throttle", "50000000")
        assert "Successfully started partition reassignments for moving-0,moving-1" in out, out
        _wait_assigned(view, "moving", targets)

        out = _reassign(cluster, "--reassignment-json-file", plan, "--verify")
        assert "Reassignment of partition moving-0 is completed." in out, out
        assert "Reassignment of partition moving-1 is completed." in out, out
        assert "Clearing broker-level throttles on brokers" in out, out
        configs = view.json("/config/topics/moving")["config"]
        assert "leader.replication.throttled.replicas" not in configs, configs

        described = run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--describe",
                                              "--topic", "moving"]).stdout
        assert "Partition: 0\tLeader: 4\tReplicas: 4,3\tIsr:" in described or \
            "Partition: 0\tLeader: 3\tReplicas: 4,3\tIsr:" in described, described
        assert "Replicas: 3,4" in described, described

        # The brokers left out delete their replicas.
        for node_id, partition in ((1, 0), (2, 0), (2, 1)):
            _wait_gone(_replica_dir(cluster, node_id, "moving", partition))

        # Broker 1 holds nothing now: decommissioned, it stops and the load goes on.
        load.wait_acked(len(load.acked) + 300)
        cluster.brokers[1].stop()
        view.wait_children("/brokers/ids", lambda live: live == ["2", "3", "4"])
        load.wait_acked(len(load.acked) + 300)
        load.stop()
        _check_no_loss(cluster.bootstrap, "moving", 2, load.acked)
    finally:
        view.close()


@pytest.mark.cluster_timeout(240)
def test_replication_factor_raised_then_the_old_leader_killed(cluster: Cluster, tmp_path: Path) -> None:
    view = _start(cluster, [1, 2, 3])
    try:
        _create(cluster, view, "grow", "1")
        acked = produce(cluster.bootstrap, "grow", list(range(500)))
        targets = {0: [1, 2, 3]}
        # KIP-860: a request that may not change the replication factor is refused.
        with RawConnection(cluster.brokers[2].port) as conn:
            answer = conn.request(ALTER_PARTITION_REASSIGNMENTS, 1, {
                "timeout_ms": 10000, "allow_replication_factor_change": False,
                "topics": [{"name": "grow", "partitions": [{"partition_index": 0, "replicas": [1, 2, 3]}]}]})
        refused = answer["responses"][0]["partitions"][0]
        assert (refused["error_code"], refused["error_message"]) == (
            INVALID_REPLICATION_FACTOR, "The replication factor is changed from 1 to 3")
        assert "--disallow-replication-factor-change" in _reassign(cluster, "--help", check=False)
        out = _reassign(cluster, "--reassignment-json-file", _plan(tmp_path / "plan.json", "grow", targets),
                        "--execute")
        assert "Successfully started partition reassignment for grow-0" in out, out
        _wait_assigned(view, "grow", targets)

        cluster.brokers[1].kill9()
        state = view.wait_data(STATE.format(topic="grow", partition=0), lambda s: s["leader"] in (2, 3))
        assert sorted(state["isr"]) == [2, 3]
        _check_no_loss(cluster.bootstrap, "grow", 1, acked)
    finally:
        view.close()


@pytest.mark.cluster_timeout(300)
def test_throttled_reassignment_cancelled_then_completed_across_a_controller_kill(
        cluster: Cluster, tmp_path: Path) -> None:
    view = _start(cluster, [1, 2, 3])
    try:
        _create(cluster, view, "slow", "1:2")
        # More than one fetch's worth (replica.fetch.max.bytes, 1 MiB), so a 1 byte/s throttle
        # keeps the move in progress after its first fetch.
        acked = produce(cluster.bootstrap, "slow", list(range(3000)), size=1000, acks="1",
                        **{"batch.size": 100000, "linger.ms": 20})
        targets = {0: [2, 3]}
        plan = _plan(tmp_path / "plan.json", "slow", targets)
        out = _reassign(cluster, "--reassignment-json-file", plan, "--execute", "--throttle", "1")
        assert "Successfully started partition reassignment for slow-0" in out, out
        assert "The inter-broker throttle limit was set to 1 B/s" in out, out

        node = view.json("/brokers/topics/slow")
        assert (node["partitions"]["0"], node["adding_replicas"], node["removing_replicas"]) == \
            ([2, 3, 1], {"0": [3]}, {"0": [1]})
        out = _reassign(cluster, "--list")
        assert "slow-0: replicas: 2,3,1. adding: 3. removing: 1." in out, out
        out = _reassign(cluster, "--reassignment-json-file", plan, "--verify")
        assert "Reassignment of partition slow-0 is still in progress." in out, out

        out = _reassign(cluster, "--reassignment-json-file", plan, "--cancel")
        assert "Successfully cancelled partition reassignment for: slow-0" in out, out
        node = view.wait_data("/brokers/topics/slow", lambda a: not a["adding_replicas"])
        # The original replicas, in the order of the full set, as Kafka 4.1 reverts them.
        assert node["partitions"]["0"] == [2, 1] and not node["removing_replicas"]
        _wait_gone(_replica_dir(cluster, 3, "slow", 0))
        # Nothing left to cancel: the tool asks for no partition.
        out = _reassign(cluster, "--reassignment-json-file", plan, "--cancel")
        assert "slow-0" not in out.splitlines()[0], out
        out = _reassign(cluster, "--list")
        assert "No partition reassignments found." in out, out

        # Again, and the controller is killed while it is under way; a new one completes it once
        # the throttle is raised.
        out = _reassign(cluster, "--reassignment-json-file", plan, "--execute", "--throttle", "1")
        assert "Successfully started partition reassignment for slow-0" in out, out
        controller = view.json("/controller")["brokerid"]
        cluster.brokers[controller].kill9()
        view.wait_data("/controller", lambda c: c is not None and c["brokerid"] != controller)
        assert view.json("/brokers/topics/slow")["adding_replicas"] == {"0": [3]}
        cluster.start_broker(controller, {"auto.leader.rebalance.enable": "false"})
        view.wait_children("/brokers/ids", lambda live: live == ["1", "2", "3"])
        out = _reassign(cluster, "--reassignment-json-file", plan, "--execute", "--additional",
                        "--throttle", "100000000")
        _wait_assigned(view, "slow", targets)
        _wait_gone(_replica_dir(cluster, 1, "slow", 0))
        _check_no_loss(cluster.bootstrap, "slow", 1, acked)
    finally:
        view.close()


@pytest.mark.cluster_timeout(240)
def test_a_broker_down_while_its_replicas_left_removes_them_when_it_returns(
        cluster: Cluster, tmp_path: Path) -> None:
    view = _start(cluster, [1, 2, 3])
    try:
        _create(cluster, view, "left", "1:2")
        _create(cluster, view, "dropped", "2:3")
        acked = produce(cluster.bootstrap, "left", list(range(300)))
        cluster.brokers[2].stop()
        view.wait_children("/brokers/ids", lambda live: live == ["1", "3"])

        # While broker 2 is down, its replica of left-0 is moved to broker 3 and "dropped" is deleted.
        targets = {0: [1, 3]}
        _reassign(cluster, "--reassignment-json-file", _plan(tmp_path / "plan.json", "left", targets), "--execute")
        _wait_assigned(view, "left", targets)
        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--delete", "--topic", "dropped"])
        view.wait_children("/brokers/topics", lambda topics: "dropped" not in topics)
        assert _replica_dir(cluster, 2, "left", 0).exists() and _replica_dir(cluster, 2, "dropped", 0).exists()

        cluster.start_broker(2, {"auto.leader.rebalance.enable": "false"})
        assert not _replica_dir(cluster, 2, "left", 0).exists()
        assert not _replica_dir(cluster, 2, "dropped", 0).exists()
        assert "is stray" in cluster.brokers[2].stderr_tail(40)
        _check_no_loss(cluster.bootstrap, "left", 1, acked)
    finally:
        view.close()


def _pykafkad(cluster: Cluster, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pykafkad", *args, "-b", cluster.bootstrap], capture_output=True,
                          text=True, timeout=120, cwd=REPO_ROOT)
    assert (done.returncode == 0) == ok, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.mark.cluster_timeout(240)
def test_pykafkad_reassign_shows_a_throttled_move_copying_then_done(cluster: Cluster) -> None:
    """``pykafkad reassign``: a move throttled to 1 B/s holds still after its first fetch (1 MiB of
    3 MB), so its progress is seen part way; a second start raises the throttle and waits; a watcher
    started before sees the rest, and the throttle is cleared once nothing is moving."""
    view = _start(cluster, [1, 2, 3])
    try:
        _create(cluster, view, "watched", "1:2")
        acked = produce(cluster.bootstrap, "watched", list(range(3000)), size=1000, acks="1",
                        **{"batch.size": 100000, "linger.ms": 20})
        plan = ("--topic", "watched", "--partition", "0", "--replicas", "2,3")
        out = _pykafkad(cluster, "reassign", "start", *plan, "--throttle", "1").stdout
        assert "replication throttled to 1 B/s on brokers 1,2,3" in out and "started reassigning watched-0" in out
        assert view.json("/config/topics/watched")["config"] == {
            "leader.replication.throttled.replicas": "0:1,0:2", "follower.replication.throttled.replicas": "0:3"}
        assert view.json("/config/brokers/3")["config"] == {
            "leader.replication.throttled.rate": "1", "follower.replication.throttled.rate": "1"}

        # Broker 3's first fetch lands, then the throttle holds it: the move is part way.
        deadline = time.monotonic() + 60
        while True:
            moves = json.loads(_pykafkad(cluster, "reassign", "status", "--json").stdout)["reassignments"]
            assert len(moves) == 1, moves
            if moves[0]["copied_bytes"] > 0:
                break
            assert time.monotonic() < deadline, moves
            time.sleep(0.2)
        move = moves[0]
        assert (move["topic"], move["partition"], move["adding"], move["removing"]) == ("watched", 0, [3], [1])
        assert move["leader_bytes"] >= 3_000_000 and 0 < move["percent"] < 100, move
        table = _pykafkad(cluster, "reassign", "status").stdout
        assert "1 reassignment(s) in progress" in table and "COPIED" in table and "%)" in table, table

        watcher = subprocess.Popen([sys.executable, "-m", "pykafkad", "reassign", "status", "--wait", "-b",
                                    cluster.bootstrap], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   cwd=REPO_ROOT)
        try:
            first = watcher.stderr.readline()
            assert first.startswith("copied ") and "0 of 1 partition(s) moved" in first, first
            assert "(100%)" not in first, first
            done = _pykafkad(cluster, "reassign", "start", *plan, "--throttle", "100000000", "--wait")
            assert "1 partition(s) moved" in done.stdout, done.stdout
            assert done.stderr.splitlines()[-1].endswith("(100%), 1 of 1 partition(s) moved"), done.stderr
            rest, errors = watcher.communicate(timeout=120)
        finally:
            watcher.kill()
        assert watcher.returncode == 0, rest + errors
        assert (first + errors).splitlines()[-1].endswith("(100%), 1 of 1 partition(s) moved"), errors
        assert "1 partition(s) moved" in rest, rest
        _wait_assigned(view, "watched", {0: [2, 3]})
        assert "throttled" not in json.dumps(view.json("/config/topics/watched")), view.json("/config/topics/watched")
        for node_id in (1, 2, 3):
            assert "throttled" not in json.dumps(view.json(f"/config/brokers/{node_id}"))

        out = _pykafkad(cluster, "reassign", "cancel", "--all").stdout
        assert "nothing to cancel" in out, out
        refused = _pykafkad(cluster, "reassign", "cancel", "--topic", "watched", "--partition", "0", ok=False)
        assert "NO_REASSIGNMENT_IN_PROGRESS" in refused.stdout and "pykafkad reassign status" in refused.stdout
        bad = _pykafkad(cluster, "reassign", "start", "--topic", "watched", "--partition", "0", "--replicas", "2,9",
                        ok=False)
        assert "INVALID_REPLICA_ASSIGNMENT" in bad.stdout and "pykafkad cluster info" in bad.stdout, bad.stdout
        _check_no_loss(cluster.bootstrap, "watched", 1, acked)
    finally:
        view.close()
