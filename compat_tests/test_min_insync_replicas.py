"""`min.insync.replicas` above a topic's replication factor: Kafka caps it at the replica count.

Kafka 4's leader checks acks=all against an effective min ISR of min(`min.insync.replicas`,
replicas), so a topic of replication factor 1 with `min.insync.replicas=2` takes acks=all, acks=1
and acks=0 alike (the replica manager's min-ISR check, new here, must not refuse it).  Each case
goes to pykafkad and to a real Kafka 4.4.0; codes and log end offsets must match.
NOT_ENOUGH_REPLICAS itself needs brokers down, so it is proven in the cluster tests.
"""

from __future__ import annotations

import time

import pytest

import wire
from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import unique_topic
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response, record_batch


def _end_offset(conn: RawConnection, topic: str) -> int:
    listed = conn.request(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]})
    return listed["topics"][0]["partitions"][0]["offset"]


def _answers(port: int) -> list[tuple[int, int | None, int]]:
    """(acks, error code or None for acks=0, log end offset after it), in order, on one topic."""
    topic = unique_topic("min-isr")
    found = []
    with RawConnection(port) as conn:
        conn.create_topic(topic, configs={"min.insync.replicas": "2"})
        conn.wait_for_leader(topic)
        for acks in (-1, 1, -1, 0):
            body = produce_body(topic, 0, record_batch([b"v1", b"v2"], int(time.time() * 1000)), acks=acks)
            if acks == 0:
                conn.send(wire.encode_request(0, 9, conn.correlation_id(), "compat-raw", body))
                code = None
            else:
                code = produce_partition_response(conn.request(0, 9, body))["error_code"]
            found.append((acks, code, _end_offset(conn, topic)))
    return found


@pytest.mark.compat_timeout(120)
def test_min_insync_replicas_capped_at_replication_factor_as_on_kafka(
        broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    ours = _answers(broker.port)
    assert ours == _answers(reference_kafka.port)
    assert ours == [(-1, 0, 2), (1, 0, 4), (-1, 0, 6), (0, None, 8)]
