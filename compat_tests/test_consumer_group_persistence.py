"""A consumer-protocol group (KIP-848) survives its coordinator: after kill -9 and a restart, the group
is back from ``__consumer_offsets`` with the same group and assignment epochs, the same members at
the same member epochs and the same partitions, so its members carry on heartbeating at their epochs
with no rebalance; a member that was revoking partitions still must revoke them; a deleted group
stays deleted.  A mixed group's classic member comes back too, and so does the classic group a mixed
group turns back into; so does a share group's membership.  The records are Kafka's: Kafka's own
GroupCoordinatorRecordSerde reads them.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

from compat_tests.conftest import BrokerFactory
from compat_tests.consumer_protocol_support import CONSUMER_PROTOCOL_OVERRIDES
from compat_tests.java_tools import java_executable, java_program
from compat_tests.raw_kafka import RawConnection
from compat_tests.test_consumer_group_heartbeat_kafka import Classic, Session, _ready
from compat_tests.test_share_group_heartbeat_kafka import PARTITIONS as SHARE_PARTITIONS
from compat_tests.test_share_group_heartbeat_kafka import TOPIC as SHARE_TOPIC
from compat_tests.test_share_group_heartbeat_kafka import ShareSession
from pykafkad.coordinator.group.consumer_protocol import encode_assignment

GROUP_RECORDS = Path(__file__).resolve().parent / "java" / "GroupRecords.java"
OVERRIDES = {**CONSUMER_PROTOCOL_OVERRIDES, "group.consumer.assignment.interval.ms": "0",
             "group.consumer.session.timeout.ms": "45000", "group.consumer.min.session.timeout.ms": "45000"}
# Share groups: heartbeats every half second, assignments at once.
SHARE_OVERRIDES = {"group.share.heartbeat.interval.ms": "500", "group.share.min.heartbeat.interval.ms": "500",
                   "group.share.assignment.interval.ms": "0"}


def _session(port: int, group: str) -> tuple[RawConnection, Session]:
    conn = RawConnection(port)
    _ready(conn, [group])
    s = Session(conn, group)
    s.learn("persisted")
    return conn, s


def test_group_resumes_after_coordinator_kill9(broker_factory: BrokerFactory) -> None:
    broker = broker_factory("kip848-persist", OVERRIDES)
    group = f"persist-{uuid.uuid4().hex[:8]}"
    with RawConnection(broker.port) as conn:
        conn.create_topic("persisted", 4)
        conn.wait_for_leader("persisted")
    conn, s = _session(broker.port, group)
    with conn:
        m1 = s.join("m1", ["persisted"], instance_id="i1")
        m2 = s.join("m2", ["persisted"], server_assignor="range")
        # m1 is told to give up half of its partitions and has not yet.
        told = s.heartbeat(member_id="m1", member_epoch=m1["epoch"])
        assert told["assignment"] == {"persisted": [0, 1]}, told
        assert s.commit("m2", m2["epoch"], topic="persisted") == 0
        before = s.describe()
        assert before["state"] == "Reconciling" and len(before["members"]) == 2, before

    broker.kill9()
    broker.start()
    conn, s = _session(broker.port, group)
    with conn:
        after = s.describe()
        assert after == before
        # m1 still owns the partitions it must revoke: at its epoch it is asked again, no new epoch.
        again = s.heartbeat(member_id="m1", member_epoch=m1["epoch"], owned={"persisted": [0, 1, 2, 3]})
        assert (again["error"], again["epoch"]) == (0, m1["epoch"]), again
        revoked = s.heartbeat(member_id="m1", member_epoch=m1["epoch"], owned={"persisted": [0, 1]})
        assert revoked["error"] == 0 and revoked["epoch"] > m1["epoch"], revoked
        m2_now = s.heartbeat(member_id="m2", member_epoch=m2["epoch"], owned={})
        assert m2_now["error"] == 0 and m2_now["assignment"] == {"persisted": [2, 3]}, m2_now
        code, offsets = s.fetch("m2", m2_now["epoch"])
        assert (code, offsets) == (0, {"persisted": [(0, 1)]}), offsets
        settled = s.describe()
        assert settled["state"] == "Stable" and settled["group_epoch"] == before["group_epoch"], settled

        # Both leave and the group is deleted: after another kill -9 it does not come back.
        assert s.heartbeat(member_id="m1", member_epoch=-1)["error"] == 0
        assert s.heartbeat(member_id="m2", member_epoch=-1)["error"] == 0
        assert conn.request(42, 2, {"groups_names": [group]})["results"][0]["error_code"] == 0

    decoded = subprocess.run([java_executable(), "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                              *java_program(GROUP_RECORDS), broker.bootstrap, group],
                             capture_output=True, text=True, timeout=120)
    assert decoded.returncode == 0, decoded.stderr[-3000:]
    lines = decoded.stdout.splitlines()
    assert any(line.startswith("ConsumerGroupMemberMetadataKey(groupId='" + group + "', memberId='m1')")
               and "instanceId='i1'" in line for line in lines), lines
    assert any(line.startswith("ConsumerGroupCurrentMemberAssignmentKey") and "memberEpoch=" in line
               for line in lines), lines
    assert any(line.startswith("ConsumerGroupTargetAssignmentMemberKey") for line in lines), lines
    # The deletion ended with the group metadata's tombstone.
    assert lines[-1].startswith("ConsumerGroupMetadataKey") and lines[-1].endswith("tombstone"), lines

    broker.kill9()
    broker.start()
    conn, s = _session(broker.port, group)
    with conn:
        gone = s.describe()
        assert gone["error"] == 69, gone


def test_a_mixed_group_resumes_and_downgrades_after_coordinator_kill9(broker_factory: BrokerFactory) -> None:
    """A classic member of a consumer-protocol group keeps its place, epoch and partitions across a
    kill -9 of its coordinator (its session timeout and protocols are in Kafka's ClassicMemberMetadata);
    after the consumer-protocol member leaves, the classic group it turned into is what comes back."""
    broker = broker_factory("kip848-mixed-persist", OVERRIDES)
    group = f"mixed-{uuid.uuid4().hex[:8]}"
    with RawConnection(broker.port) as conn:
        conn.create_topic("cg-t", 4)
        conn.wait_for_leader("cg-t")
    ids: dict[str, str] = {}
    conn, s = _session(broker.port, group)
    with conn:
        s.learn("cg-t")
        c1 = Classic(s, "c1", ids)
        assert c1.join()["error"] == 79
        assert c1.join()["generation"] == 1
        assert c1.sync({"c1": encode_assignment({"cg-t": [0, 1, 2, 3]}, 1)})["error"] == 0
        m1 = s.join("m1", ["cg-t"])
        assert m1["error"] == 0
        assert c1.join(owned={"cg-t": [0, 1, 2, 3]})["error"] == 0
        assert c1.sync()["assignment"] == {"cg-t": [0, 1]}
        assert c1.join(owned={"cg-t": [0, 1]})["generation"] == m1["epoch"]
        assert s.heartbeat(member_id="m1", member_epoch=m1["epoch"], owned={})["assignment"] == {"cg-t": [2, 3]}
        before = s.describe()
        assert before["state"] == "Stable" and sorted(m[5] for m in before["members"]) == [0, 1], before

    broker.kill9()
    broker.start()
    conn, s = _session(broker.port, group)
    with conn:
        s.learn("cg-t")
        c1.s = s
        assert s.describe() == before
        assert c1.heartbeat() == 0
        assert c1.sync()["assignment"] == {"cg-t": [0, 1]}
        # m1 leaves: only the classic member is left, and the group turns classic.
        assert s.heartbeat(member_id="m1", member_epoch=m1["epoch"], owned={"cg-t": [2, 3]})["error"] == 0
        assert s.heartbeat(member_id="m1", member_epoch=-1)["error"] == 0
        assert s.describe()["error"] == 69

    decoded = subprocess.run([java_executable(), "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                              *java_program(GROUP_RECORDS), broker.bootstrap, group],
                             capture_output=True, text=True, timeout=120)
    assert decoded.returncode == 0, decoded.stderr[-3000:]
    lines = decoded.stdout.splitlines()
    assert any(line.startswith("ConsumerGroupMemberMetadataKey") and "classicMemberMetadata=ClassicMemberMetadata("
               "sessionTimeoutMs=30000" in line for line in lines), lines
    # The downgrade: the consumer group's records tombstoned, its metadata last, then the classic group.
    assert lines[-2].startswith("ConsumerGroupMetadataKey") and lines[-2].endswith("tombstone"), lines
    assert lines[-1].startswith("GroupMetadataKey") and "protocolType='consumer'" in lines[-1], lines

    broker.kill9()
    broker.start()
    conn, s = _session(broker.port, group)
    with conn:
        c1.s = s
        described = conn.request(15, 5, {"groups": [group], "include_authorized_operations": False})["groups"][0]
        assert described["group_state"] in ("Stable", "PreparingRebalance"), described
        assert [m["member_id"] for m in described["members"]] == [c1.member_id], described
        assert c1.join(owned={"cg-t": [0, 1]})["error"] == 0


def test_a_share_group_resumes_after_coordinator_kill9(broker_factory: BrokerFactory) -> None:
    """A share group's members, epochs, assignments and initialized partitions are in Kafka's share
    group records (10-15): after kill -9 of the coordinator they are back, and a member heartbeats on
    at its epoch.  Kafka's serde reads the records, and a deleted share group stays deleted."""
    broker = broker_factory("share-persist", SHARE_OVERRIDES)
    group = f"share-persist-{uuid.uuid4().hex[:8]}"
    with RawConnection(broker.port) as conn:
        conn.create_topic(SHARE_TOPIC, SHARE_PARTITIONS)
        conn.wait_for_leader(SHARE_TOPIC)
        _ready(conn, [group])
        s = ShareSession(conn, group)
        m1, m2 = s.join("m1"), s.join("m2")
        epochs = s.wait_for("both assigned", {"m1": m1["epoch"], "m2": m2["epoch"]}, SHARE_PARTITIONS)
        before = s.describe()
        assert before["state"] == "Stable" and len(before["members"]) == 2, before

    broker.kill9()
    broker.start()
    with RawConnection(broker.port) as conn:
        _ready(conn, [group])
        s = ShareSession(conn, group)
        assert s.describe() == before
        again = s.heartbeat(member_id="m1", member_epoch=epochs["m1"])
        assert (again["error"], again["epoch"]) == (0, epochs["m1"]), again
        for member in ("m1", "m2"):
            assert s.heartbeat(member_id=member, member_epoch=-1)["error"] == 0
        assert conn.request(42, 2, {"groups_names": [group]})["results"][0]["error_code"] == 0

    decoded = subprocess.run([java_executable(), "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                              *java_program(GROUP_RECORDS), broker.bootstrap, group],
                             capture_output=True, text=True, timeout=120)
    assert decoded.returncode == 0, decoded.stderr[-3000:]
    lines = decoded.stdout.splitlines()
    assert any(line.startswith(f"ShareGroupMemberMetadataKey(groupId='{group}', memberId='m1')") for line in lines), \
        lines
    assert any(line.startswith("ShareGroupStatePartitionMetadataKey") and "initializedTopics=" in line
               for line in lines), lines
    assert lines[-1].startswith("ShareGroupMetadataKey") and lines[-1].endswith("tombstone"), lines

    broker.kill9()
    broker.start()
    with RawConnection(broker.port) as conn:
        _ready(conn, [group])
        assert ShareSession(conn, group).describe()["error"] == 69
