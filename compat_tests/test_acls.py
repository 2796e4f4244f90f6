"""Authorization with ACLs (``authorizer.class.name``, ``super.users``): ``kafka-acls.sh`` adds, lists
and removes them; stock clients get what their principal's ACLs allow and Kafka's errors for the
rest; and a matrix of raw requests shows that each API family refuses an unauthorized principal
with the right error code and without effect.

The broker has a SASL_PLAINTEXT listener (PLAIN users admin, a super user, alice and bob) and a
PLAINTEXT one, where every client is ``User:ANONYMOUS``: the raw requests of the matrix go there.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.certificates import Authority
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection, produce_body, record_batch

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" '
        'user_alice="alice-secret" user_bob="bob-secret";')
TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED = 29, 30, 31
TRANSACTIONAL_ID_AUTHORIZATION_FAILED, SECURITY_DISABLED = 53, 54
READ, WRITE, DESCRIBE = 3, 4, 8


class AclBroker:
    def __init__(self, work: Path) -> None:
        self.broker = BrokerProcess(work / "logs", name="acls")
        self.sasl_port = free_port()
        listeners = f"PLAINTEXT://127.0.0.1:{self.broker.port},SASL_PLAINTEXT://127.0.0.1:{self.sasl_port}"
        self.broker.overrides.update({
            "listeners": listeners, "advertised.listeners": listeners,
            "sasl.enabled.mechanisms": "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
            "authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:admin",
            # A consumer's first join to its new group is not held back Kafka's default 3 s.
            "group.initial.rebalance.delay.ms": "0",
        })
        self.admin_properties = work / "admin.properties"
        self.admin_properties.write_text(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
            'password="admin-secret";\n')

    def config(self, user: str, **extra: Any) -> dict[str, Any]:
        return {"bootstrap.servers": f"127.0.0.1:{self.sasl_port}", "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": f"{user}-secret", **extra}

    def admin(self) -> AdminClient:
        return AdminClient(self.config("admin"))

    def acls(self, *args: str, check: bool = True) -> str:
        """``kafka-acls.sh`` as the super user."""
        done = run_tool("kafka-acls", ["--bootstrap-server", f"127.0.0.1:{self.sasl_port}", "--command-config",
                                       str(self.admin_properties), *args], check=check)
        return done.stdout + done.stderr

    def create_topic(self, name: str, partitions: int = 1) -> None:
        admin = self.admin()  # kept until the result is in: a collected client cancels its requests
        admin.create_topics([NewTopic(name, partitions, 1)])[name].result(timeout=30)

    def end_offset(self, topic: str, partition: int = 0) -> int:
        consumer = Consumer(self.config("admin", **{"group.id": "watermarks"}))
        try:
            return consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)[1]
        finally:
            consumer.close()


@pytest.fixture(scope="module")
def acl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclBroker]:
    server = AclBroker(tmp_path_factory.mktemp("acls"))
    server.broker.start()
    yield server
    server.broker.close()


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _produce(config: dict[str, Any], topic: str, values: list[bytes]) -> list[KafkaError | None]:
    errors: list[KafkaError | None] = []
    producer = Producer({**config, "message.timeout.ms": 10000, "retries": 0})
    for value in values:
        producer.produce(topic, value, on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(30)
    return errors


def _consume(config: dict[str, Any], topic: str, group: str, count: int) -> tuple[list[bytes], KafkaError | None]:
    consumer = Consumer({**config, "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got: list[bytes] = []
    error = None
    try:
        for _ in range(60):
            msg = consumer.poll(0.5)
            if msg is None:
                if len(got) >= count:
                    break
                continue
            if msg.error() is not None:
                error = msg.error()
                break
            got.append(msg.value())
            if len(got) >= count:
                consumer.commit(asynchronous=False)
                break
    finally:
        consumer.close()
    return got, error


def test_kafka_acls_adds_lists_and_removes_acls(acl: AclBroker) -> None:
    topic = _name("tool")
    acl.acls("--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Describe",
             "--topic", topic)
    acl.acls("--add", "--deny-principal", "User:bob", "--allow-host", "*", "--deny-host", "127.0.0.1",
             "--operation", "Write", "--topic", topic, check=False)
    acl.acls("--add", "--allow-principal", "User:alice", "--operation", "All", "--group", "app-",
             "--resource-pattern-type", "prefixed")
    listed = acl.acls("--list", "--topic", topic)
    assert "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)" in listed, listed
    assert "(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)" in listed, listed
    prefixed = acl.acls("--list", "--group", "app-", "--resource-pattern-type", "prefixed")
    assert "name=app-, patternType=PREFIXED" in prefixed and "operation=ALL" in prefixed, prefixed
    acl.acls("--remove", "--force", "--allow-principal", "User:alice", "--operation", "Read", "--topic", topic)
    listed = acl.acls("--list", "--topic", topic)
    assert "operation=READ" not in listed and "operation=DESCRIBE" in listed, listed
    acl.acls("--remove", "--force", "--topic", topic)
    acl.acls("--remove", "--force", "--group", "app-", "--resource-pattern-type", "prefixed")
    assert "principal=" not in acl.acls("--list", "--topic", topic)


def test_a_principal_gets_what_its_acls_allow_and_nothing_else(acl: AclBroker) -> None:
    topic, group = _name("orders"), _name("alice-group")
    acl.create_topic(topic)
    acl.acls("--add", "--allow-principal", "User:alice", "--producer", "--topic", topic)
    acl.acls("--add", "--allow-principal", "User:alice", "--consumer", "--topic", topic, "--group", group)
    alice, bob = acl.config("alice"), acl.config("bob")
    assert _produce(alice, topic, [b"a0", b"a1", b"a2"]) == [None, None, None]
    got, error = _consume(alice, topic, group, 3)
    assert error is None and got == [b"a0", b"a1", b"a2"]
    # bob: refused with Kafka's codes and no effect.
    errors = _produce(bob, topic, [b"b0"])
    assert errors[0] is not None and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, errors
    assert acl.end_offset(topic) == 3
    got, error = _consume(bob, topic, _name("bob-group"), 1)
    assert got == [] and error is not None
    assert error.code() in (KafkaError.GROUP_AUTHORIZATION_FAILED, KafkaError.TOPIC_AUTHORIZATION_FAILED), error
    assert topic not in AdminClient(bob).list_topics(timeout=30).topics
    assert topic in AdminClient(alice).list_topics(timeout=30).topics
    bobs = _name("bobs")
    bob_admin = AdminClient(bob)
    with pytest.raises(KafkaException) as refused:
        bob_admin.create_topics([NewTopic(bobs, 1, 1)])[bobs].result(timeout=30)
    assert refused.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert bobs not in acl.admin().list_topics(timeout=30).topics


def test_deny_wins_over_allow_and_prefixes_and_wildcards_match(acl: AclBroker) -> None:
    prefix = _name("den")
    open_topic, closed_topic = f"{prefix}-open", f"{prefix}-closed"
    acl.create_topic(open_topic)
    acl.create_topic(closed_topic)
    acl.acls("--add", "--allow-principal", "User:*", "--operation", "Write", "--operation", "Describe",
             "--topic", prefix, "--resource-pattern-type", "prefixed")
    try:
        acl.acls("--add", "--deny-principal", "User:alice", "--operation", "Write", "--topic", closed_topic)
        alice, bob = acl.config("alice"), acl.config("bob")
        assert _produce(alice, open_topic, [b"x"]) == [None]
        assert _produce(bob, closed_topic, [b"y"]) == [None]
        errors = _produce(alice, closed_topic, [b"z"])
        assert errors[0] is not None and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
        assert acl.end_offset(closed_topic) == 1 and acl.end_offset(open_topic) == 1
    finally:
        # User:* may write somewhere while this ACL lasts, which lets anyone be an idempotent producer.
        acl.acls("--remove", "--force", "--topic", prefix, "--resource-pattern-type", "prefixed")


# -- the matrix: raw requests as User:ANONYMOUS on the PLAINTEXT listener -------------------------


def _topic_error(response: dict[str, Any], key: str = "topics", parts: str = "partitions") -> int:
    return response[key][0][parts][0]["error_code"]


def _group_offsets(acl: AclBroker, group: str) -> dict[tuple[str, int], int]:
    admin = acl.admin()
    listed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
    return {(tp.topic, tp.partition): tp.offset for tp in listed[group].result(timeout=30).topic_partitions
            if tp.offset >= 0}


def _topic_config(acl: AclBroker, topic: str, key: str) -> str:
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    admin = acl.admin()
    configs = admin.describe_configs([resource])[resource].result(timeout=30)
    return configs[key].value


MatrixCase = Callable[[AclBroker, RawConnection, str], None]


def _produce_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    response = conn.request(0, 9, produce_body(topic, 0, record_batch([b"intruder"], int(time.time() * 1000))))
    assert response["responses"][0]["partition_responses"][0]["error_code"] == TOPIC_AUTHORIZATION_FAILED
    assert acl.end_offset(topic) == 1


def _fetch_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    response = conn.request(1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                    "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
                                        {"topic": topic, "partitions": [{"partition": 0, "fetch_offset": 0,
                                                                         "partition_max_bytes": 1 << 20}]}]})
    part = response["responses"][0]["partitions"][0]
    assert part["error_code"] == TOPIC_AUTHORIZATION_FAILED and not part["records"]


def _follower_fetch_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    response = conn.request(1, 12, {"replica_id": 7, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                    "session_id": 0, "session_epoch": -1, "topics": [
                                        {"topic": topic, "partitions": [{"partition": 0, "fetch_offset": 0,
                                                                         "partition_max_bytes": 1 << 20}]}]})
    assert response["responses"][0]["partitions"][0]["error_code"] == TOPIC_AUTHORIZATION_FAILED


def _list_offsets_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    response = conn.request(2, 7, {"replica_id": -1, "topics": [{"name": topic, "partitions": [
        {"partition_index": 0, "timestamp": -1}]}]})
    assert _topic_error(response) == TOPIC_AUTHORIZATION_FAILED


def _metadata_hides(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    every = conn.request(3, 12, {"topics": None})
    assert topic not in [t["name"] for t in every["topics"]]
    named = conn.request(3, 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                 "allow_auto_topic_creation": False})
    assert named["topics"][0]["error_code"] == TOPIC_AUTHORIZATION_FAILED and not named["topics"][0]["partitions"]


def _create_topic_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    name = f"{topic}-new"
    response = conn.request(19, 7, {"topics": [{"name": name, "num_partitions": 1, "replication_factor": 1}],
                                    "timeout_ms": 30000})
    assert response["topics"][0]["error_code"] == TOPIC_AUTHORIZATION_FAILED
    assert name not in acl.admin().list_topics(timeout=30).topics


def _delete_topic_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    response = conn.request(20, 6, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}], "timeout_ms": 30000})
    assert response["responses"][0]["error_code"] == TOPIC_AUTHORIZATION_FAILED
    assert topic in acl.admin().list_topics(timeout=30).topics


def _create_partitions_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    response = conn.request(37, 3, {"topics": [{"name": topic, "count": 3, "assignments": None}],
                                    "timeout_ms": 30000, "validate_only": False})
    assert response["results"][0]["error_code"] == TOPIC_AUTHORIZATION_FAILED
    assert len(acl.admin().list_topics(timeout=30).topics[topic].partitions) == 1


def _delete_records_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    response = conn.request(21, 2, {"topics": [{"name": topic, "partitions": [{"partition_index": 0, "offset": 1}]}],
                                    "timeout_ms": 30000})
    assert _topic_error(response) == TOPIC_AUTHORIZATION_FAILED
    consumer = Consumer(acl.config("admin", **{"group.id": "lows"}))
    try:
        assert consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)[0] == 0
    finally:
        consumer.close()


def _configs_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    described = conn.request(32, 4, {"resources": [{"resource_type": 2, "resource_name": topic,
                                                    "configuration_keys": None},
                                                   {"resource_type": 4, "resource_name": "",
                                                    "configuration_keys": None}]})
    assert [r["error_code"] for r in described["results"]] == [TOPIC_AUTHORIZATION_FAILED,
                                                                CLUSTER_AUTHORIZATION_FAILED]
    altered = conn.request(44, 1, {"resources": [{"resource_type": 2, "resource_name": topic, "configs": [
        {"name": "retention.ms", "config_operation": 0, "value": "1000"}]}], "validate_only": False})
    assert altered["responses"][0]["error_code"] == TOPIC_AUTHORIZATION_FAILED
    assert _topic_config(acl, topic, "retention.ms") == "604800000"


def _group_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    group = f"{topic}-group"
    found = conn.request(10, 4, {"key_type": 0, "coordinator_keys": [group]})
    assert found["coordinators"][0]["error_code"] == GROUP_AUTHORIZATION_FAILED
    joined = conn.request(11, 9, {"group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000,
                                  "member_id": "", "protocol_type": "consumer",
                                  "protocols": [{"name": "range", "metadata": b""}]})
    assert joined["error_code"] == GROUP_AUTHORIZATION_FAILED
    committed = conn.request(8, 9, {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                                    "topics": [{"name": topic, "partitions": [
                                        {"partition_index": 0, "committed_offset": 1}]}]})
    assert _topic_error(committed) == GROUP_AUTHORIZATION_FAILED
    fetched = conn.request(9, 9, {"groups": [{"group_id": group, "topics": None}]})
    assert fetched["groups"][0]["error_code"] == GROUP_AUTHORIZATION_FAILED
    described = conn.request(15, 5, {"groups": [group]})
    assert described["groups"][0]["error_code"] == GROUP_AUTHORIZATION_FAILED
    deleted = conn.request(42, 2, {"groups_names": [group]})
    assert deleted["results"][0]["error_code"] == GROUP_AUTHORIZATION_FAILED
    assert _group_offsets(acl, group) == {}


def _producer_ids_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    txn = conn.request(22, 5, {"transactional_id": f"{topic}-txn", "transaction_timeout_ms": 60000,
                               "producer_id": -1, "producer_epoch": -1})
    assert txn["error_code"] == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    idempotent = conn.request(22, 5, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                      "producer_id": -1, "producer_epoch": -1})
    assert idempotent["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    found = conn.request(10, 4, {"key_type": 1, "coordinator_keys": [f"{topic}-txn"]})
    assert found["coordinators"][0]["error_code"] == TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def _cluster_operations_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    created = conn.request(30, 3, {"creations": [{"resource_type": 2, "resource_name": topic,
                                                  "resource_pattern_type": 3, "principal": "User:ANONYMOUS",
                                                  "host": "*", "operation": 2, "permission_type": 3}]})
    assert created["results"][0]["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    assert "ANONYMOUS" not in acl.acls("--list", "--topic", topic)
    described = conn.request(29, 3, {"resource_type_filter": 1, "pattern_type_filter": 1, "operation": 1,
                                     "permission_type": 1})
    assert described["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    deleted = conn.request(31, 3, {"filters": [{"resource_type_filter": 1, "pattern_type_filter": 1,
                                                "operation": 1, "permission_type": 1}]})
    assert deleted["filter_results"][0]["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    assert "User:alice" in acl.acls("--list", "--topic", topic)
    assert conn.request(35, 4, {"topics": None})["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    elected = conn.request(43, 2, {"election_type": 0, "topic_partitions": None, "timeout_ms": 10000})
    assert elected["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    moved = conn.request(45, 0, {"timeout_ms": 10000, "topics": [{"name": topic, "partitions": [
        {"partition_index": 0, "replicas": [1]}]}]})
    assert moved["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    scram = conn.request(51, 0, {"deletions": [], "upsertions": [{"name": "mallory", "mechanism": 1,
                                                                  "iterations": 8192, "salt": b"s" * 16,
                                                                  "salted_password": b"p" * 32}]})
    assert scram["results"][0]["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    assert conn.request(50, 0, {"users": None})["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    quota = {"entity": [{"entity_type": "client-id", "entity_name": topic}],
             "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}
    altered = conn.request(49, 1, {"entries": [quota], "validate_only": False})
    assert altered["entries"][0]["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    described = conn.request(48, 1, {"components": [], "strict": False})
    assert described["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    shown = run_tool("kafka-configs", ["--bootstrap-server", f"127.0.0.1:{acl.sasl_port}", "--command-config",
                                       str(acl.admin_properties), "--describe", "--entity-type", "clients",
                                       "--entity-name", topic]).stdout
    assert "producer_byte_rate" not in shown, shown


def _transactions_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    txn, group = f"{topic}-txn", f"{topic}-group"
    added = conn.request(24, 3, {"v3_and_below_transactional_id": txn, "v3_and_below_producer_id": 1,
                                 "v3_and_below_producer_epoch": 0,
                                 "v3_and_below_topics": [{"name": topic, "partitions": [0]}]})
    part = added["results_by_topic_v3_and_below"][0]["results_by_partition"][0]
    assert part["partition_error_code"] == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    offsets = conn.request(25, 3, {"transactional_id": txn, "producer_id": 1, "producer_epoch": 0, "group_id": group})
    assert offsets["error_code"] == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    ended = conn.request(26, 3, {"transactional_id": txn, "producer_id": 1, "producer_epoch": 0, "committed": True})
    assert ended["error_code"] == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    committed = conn.request(28, 3, {"transactional_id": txn, "group_id": group, "producer_id": 1, "producer_epoch": 0,
                                     "generation_id": -1, "member_id": "", "group_instance_id": None, "topics": [
                                         {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                                         "committed_leader_epoch": -1,
                                                                         "committed_metadata": ""}]}]})
    assert _topic_error(committed) == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert _group_offsets(acl, group) == {}
    described = conn.request(65, 0, {"transactional_ids": [txn]})
    assert described["transaction_states"][0]["error_code"] == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert conn.request(66, 1, {"state_filters": [], "producer_id_filters": []})["transaction_states"] == []
    producers = conn.request(61, 0, {"topics": [{"name": topic, "partition_indexes": [0]}]})
    assert _topic_error(producers) == TOPIC_AUTHORIZATION_FAILED
    markers = conn.request(27, 1, {"markers": [{"producer_id": 1, "producer_epoch": 0, "transaction_result": True,
                                                "topics": [{"name": topic, "partition_indexes": [0]}],
                                                "coordinator_epoch": 0}]})
    assert markers["markers"][0]["topics"][0]["partitions"][0]["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    assert acl.end_offset(topic) == 1  # no marker written


def _members_and_replicas_refused(acl: AclBroker, conn: RawConnection, topic: str) -> None:
    group = f"{topic}-group"
    beat = conn.request(12, 4, {"group_id": group, "generation_id": 1, "member_id": "m"})
    assert beat["error_code"] == GROUP_AUTHORIZATION_FAILED
    synced = conn.request(14, 5, {"group_id": group, "generation_id": 1, "member_id": "m",
                                  "protocol_type": "consumer", "protocol_name": "range", "assignments": []})
    assert synced["error_code"] == GROUP_AUTHORIZATION_FAILED
    left = conn.request(13, 5, {"group_id": group, "members": [{"member_id": "m"}]})
    assert left["error_code"] == GROUP_AUTHORIZATION_FAILED
    deleted = conn.request(47, 0, {"group_id": group, "topics": [{"name": topic, "partitions": [
        {"partition_index": 0}]}]})
    assert deleted["error_code"] == GROUP_AUTHORIZATION_FAILED
    assert conn.request(16, 4, {"states_filter": []})["groups"] == []
    epochs = conn.request(23, 4, {"replica_id": -1, "topics": [{"topic": topic, "partitions": [
        {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]})
    assert epochs["topics"][0]["partitions"][0]["error_code"] == TOPIC_AUTHORIZATION_FAILED
    follower = conn.request(23, 4, {"replica_id": 2, "topics": [{"topic": topic, "partitions": [
        {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]})
    assert follower["topics"][0]["partitions"][0]["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    moved = conn.request(34, 2, {"dirs": [{"path": str(acl.broker.log_dir), "topics": [
        {"name": topic, "partitions": [0]}]}]})
    assert moved["results"][0]["partitions"][0]["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    features = conn.request(57, 1, {"timeout_ms": 10000, "feature_updates": [
        {"feature": "transaction.version", "max_version_level": 1, "upgrade_type": 1}], "validate_only": False})
    assert features["error_code"] == CLUSTER_AUTHORIZATION_FAILED
    listed = conn.request(46, 0, {"timeout_ms": 10000, "topics": None})
    assert listed["error_code"] == CLUSTER_AUTHORIZATION_FAILED


MATRIX: dict[str, MatrixCase] = {
    "produce": _produce_refused, "fetch": _fetch_refused, "follower fetch": _follower_fetch_refused,
    "list offsets": _list_offsets_refused, "metadata": _metadata_hides, "create topics": _create_topic_refused,
    "delete topics": _delete_topic_refused, "create partitions": _create_partitions_refused,
    "delete records": _delete_records_refused, "configs": _configs_refused, "groups and offsets": _group_refused,
    "producer ids and transactions": _producer_ids_refused, "cluster operations": _cluster_operations_refused,
    "transactions": _transactions_refused, "members, epochs and replicas": _members_and_replicas_refused,
}


@pytest.mark.parametrize("case", list(MATRIX))
def test_each_api_family_refuses_an_unauthorized_principal_without_effect(acl: AclBroker, case: str) -> None:
    topic = _name("matrix")
    acl.create_topic(topic)
    assert _produce(acl.config("admin"), topic, [b"first"]) == [None]
    # Someone else's ACL on the topic, so it is not a resource without ACLs.
    acl.acls("--add", "--allow-principal", "User:alice", "--operation", "All", "--topic", topic)
    with RawConnection(acl.broker.port) as conn:
        MATRIX[case](acl, conn, topic)
        # The broker goes on serving the refused connection.
        assert conn.api_versions(3)[0] == 0


def test_granted_acls_let_the_same_requests_through_with_their_authorized_operations(acl: AclBroker) -> None:
    topic, group = _name("granted"), _name("granted-group")
    acl.create_topic(topic)
    acl.acls("--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Write", "--operation", "Read",
             "--topic", topic)
    acl.acls("--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Read", "--group", group)
    with RawConnection(acl.broker.port) as conn:
        produced = conn.request(0, 9, produce_body(topic, 0, record_batch([b"ok"], int(time.time() * 1000))))
        assert produced["responses"][0]["partition_responses"][0]["error_code"] == 0
        named = conn.request(3, 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                     "allow_auto_topic_creation": False, "include_topic_authorized_operations": True})
        # READ and WRITE granted, DESCRIBE implied by them; nothing else.
        assert named["topics"][0]["error_code"] == 0
        assert named["topics"][0]["topic_authorized_operations"] == (1 << READ) | (1 << WRITE) | (1 << DESCRIBE)
        committed = conn.request(8, 9, {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                                        "topics": [{"name": topic, "partitions": [
                                            {"partition_index": 0, "committed_offset": 1}]}]})
        assert _topic_error(committed) == 0
        # CREATE without DESCRIBE_CONFIGS: the topic is made, its configs are not shown.
        made = f"{topic}-made"
        acl.acls("--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Create", "--topic", made)
        created = conn.request(19, 7, {"topics": [{"name": made, "num_partitions": 1, "replication_factor": 1}],
                                       "timeout_ms": 30000})
        answer = created["topics"][0]
        assert (answer["error_code"], answer["topic_config_error_code"], answer["configs"]) == (0, 29, None)
    assert made in acl.admin().list_topics(timeout=30).topics
    assert acl.end_offset(topic) == 1
    assert list(_group_offsets(acl, group).values()) == [1]


def test_acls_need_an_authorizer(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "logs", name="no-authorizer")
    broker.start()
    try:
        with RawConnection(broker.port) as conn:
            described = conn.request(29, 3, {"resource_type_filter": 1, "pattern_type_filter": 1, "operation": 1,
                                             "permission_type": 1})
            assert described["error_code"] == SECURITY_DISABLED
            assert described["error_message"] == "No Authorizer is configured on the broker"
    finally:
        broker.close()


def test_a_certificate_subject_is_mapped_to_its_principal(tmp_path: Path) -> None:
    ca = Authority(tmp_path / "pki")
    _, _, keystore = ca.issue("broker")
    broker = BrokerProcess(tmp_path / "logs", name="tls-acls")
    ssl_port = free_port()
    listeners = f"PLAINTEXT://127.0.0.1:{broker.port},SSL://127.0.0.1:{ssl_port}"
    broker.overrides.update({
        "listeners": listeners, "advertised.listeners": listeners, "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore), "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(ca.cert_path), "ssl.client.auth": "required",
        "ssl.principal.mapping.rules": "RULE:^CN=([a-zA-Z]+)-app$/$1/L,DEFAULT",
        "authorizer.class.name": STANDARD_AUTHORIZER, "super.users": "User:ANONYMOUS",
    })
    broker.start()
    try:
        topic = _name("mapped")
        with RawConnection(broker.port) as conn:
            conn.create_topic(topic)
            created = conn.request(30, 3, {"creations": [{"resource_type": 2, "resource_name": topic,
                                                          "resource_pattern_type": 3, "principal": "User:alice",
                                                          "host": "*", "operation": WRITE,
                                                          "permission_type": 3}]})
            assert created["results"][0]["error_code"] == 0

        def client(name: str) -> dict[str, Any]:
            key, cert, _ = ca.issue(name, client=True)
            return {"bootstrap.servers": f"127.0.0.1:{ssl_port}", "security.protocol": "SSL",
                    "ssl.ca.location": str(ca.cert_path), "ssl.key.location": str(key),
                    "ssl.certificate.location": str(cert)}

        # CN=Alice-app -> User:alice (the rule, lower-cased); CN=eve -> User:CN=eve (DEFAULT).
        assert _produce(client("Alice-app"), topic, [b"from alice"]) == [None]
        errors = _produce(client("eve"), topic, [b"from eve"])
        assert errors[0] is not None and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
        assert "Principal = User:CN=eve is Denied operation = " in broker.stderr_text()
    finally:
        broker.close()


def test_acls_survive_a_restart(acl: AclBroker) -> None:
    topic = _name("kept")
    acl.acls("--add", "--allow-principal", "User:bob", "--operation", "Read", "--topic", topic)
    acl.broker.restart()
    assert "(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)" in acl.acls("--list", "--topic", topic)


def test_pykafkad_acl_commands(acl: AclBroker, tmp_path: Path) -> None:
    topic = _name("cli")

    def cli(*args: str, properties: Path = acl.admin_properties) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pykafkad", "acl", *args, "-b", f"127.0.0.1:{acl.sasl_port}",
                               "--command-config", str(properties)], capture_output=True, text=True, timeout=120)

    created = cli("create", "--topic", topic, "--principal", "User:alice", "--operation", "read",
                  "--operation", "describe", "--json")
    assert created.returncode == 0, created.stderr
    assert len(json.loads(created.stdout)) == 2
    listed = json.loads(cli("list", "--topic", topic, "--json").stdout)
    assert sorted(a["operation"] for a in listed) == ["describe", "read"]
    assert {a["principal"] for a in listed} == {"User:alice"} and {a["permission"] for a in listed} == {"allow"}
    assert "User:alice" in acl.acls("--list", "--topic", topic)
    bob = tmp_path / "bob.properties"
    bob.write_text(acl.admin_properties.read_text().replace('"admin"', '"bob"').replace("admin-secret", "bob-secret"))
    refused = cli("delete", "--topic", topic, properties=bob)
    assert refused.returncode == 1 and "CLUSTER_AUTHORIZATION_FAILED" in refused.stderr, refused.stderr
    deleted = cli("delete", "--topic", topic, "--operation", "read", "--json")
    assert [a["operation"] for a in json.loads(deleted.stdout)] == ["read"]
    assert [a["operation"] for a in json.loads(cli("list", "--topic", topic, "--json").stdout)] == ["describe"]


def test_auto_creation_needs_create_as_well_as_write(acl: AclBroker) -> None:
    """With auto.create.topics.enable (on here), a produce to a missing topic creates it only for a
    principal that may CREATE it: WRITE on a prefix is not enough."""
    prefix = _name("auto")
    acl.acls("--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Write", "--operation", "Describe",
             "--topic", prefix, "--resource-pattern-type", "prefixed")
    try:
        with RawConnection(acl.broker.port) as conn:
            answer = conn.request(0, 9, produce_body(f"{prefix}-a", 0, record_batch([b"x"], int(time.time() * 1000))))
            assert answer["responses"][0]["partition_responses"][0]["error_code"] == 3
            assert f"{prefix}-a" not in acl.admin().list_topics(timeout=30).topics
            acl.acls("--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Create", "--topic", prefix,
                     "--resource-pattern-type", "prefixed")
            answer = conn.request(0, 9, produce_body(f"{prefix}-b", 0, record_batch([b"y"], int(time.time() * 1000))))
            assert answer["responses"][0]["partition_responses"][0]["error_code"] in (0, 5, 6)
            assert f"{prefix}-b" in acl.admin().list_topics(timeout=30).topics
    finally:
        acl.acls("--remove", "--force", "--topic", prefix, "--resource-pattern-type", "prefixed")
