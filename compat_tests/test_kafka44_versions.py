"""The versions Kafka 4.4 added to APIs pykafkad serves, answered as Apache Kafka 4.4.0 answers them.

Each case sends the same raw requests to pykafkad and to the reference Kafka 4.4.0 (compat_tests'
``reference_kafka``) and compares what comes back, with each broker's own names (cluster id, node
id, topics) replaced by their roles:

- ApiVersions v5 (KIP-1242): the cluster id and node id a client believes it reached.  Neither is
  fine; one without the other is INVALID_REQUEST; a mismatch is REBOOTSTRAP_REQUIRED, with no API
  list, on a connection that stays open.
- Metadata v13: the top-level error code.
- ListOffsets v9-v11: the tiered-storage lookups (latest tiered -5, earliest pending upload -6) find
  nothing without tiered storage; a special timestamp older than the request's version, or one
  Kafka does not know, is UNSUPPORTED_VERSION (pykafkad used to answer INVALID_REQUEST, and to take
  -3 and -4 at every version).
- DescribeGroups v6 (KIP-1043): an unknown group is GROUP_ID_NOT_FOUND with a message; DeleteGroups
  v3 carries an error message field.
- DescribeLogDirs v5: ``is_cordoned`` (false: pykafkad has no cordoned log dirs).
- ListTransactions v2 (KIP-1152): an RE2 pattern the whole transactional id must match;
  INVALID_REGULAR_EXPRESSION for one RE2 refuses (a lookbehind, which Java's own regex would take).
- Fetch v18: the follower's high watermark (a tagged field) is accepted; records as in v17.
- OffsetCommit and OffsetFetch v10: topics by id; an id that names no topic is UNKNOWN_TOPIC_ID.
- FindCoordinator v6: share-partition keys (KIP-932); a malformed one, or one before v6, is
  INVALID_REQUEST; a well-formed one has no coordinator here (share groups are not served).
"""

from __future__ import annotations

import base64
import time
import uuid
from typing import Any

from confluent_kafka import Producer
from kafka import KafkaConsumer, KafkaProducer

from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic, unique_topic
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response, record_batch
from wire.error_codes import ErrorCode

API_VERSIONS, METADATA, LIST_OFFSETS, FETCH, PRODUCE = 18, 3, 2, 1, 0
FIND_COORDINATOR, DESCRIBE_GROUPS, DELETE_GROUPS, DESCRIBE_LOG_DIRS, LIST_TRANSACTIONS = 10, 15, 42, 35, 66
OFFSET_COMMIT, OFFSET_FETCH = 8, 9
COORDINATOR_TIMEOUT_S = 60.0


def _identity(conn: RawConnection) -> tuple[str, int]:
    md = conn.request(METADATA, 13, {"topics": None, "allow_auto_topic_creation": False,
                                     "include_topic_authorized_operations": False})
    assert md["error_code"] == 0, md
    [node] = md["brokers"]
    return md["cluster_id"], node["node_id"]


def _api_versions_checks(port: int) -> dict[str, Any]:
    with RawConnection(port) as conn:
        cluster_id, node_id = _identity(conn)
    cases = {
        "neither": (None, -1),
        "both right": (cluster_id, node_id),
        "cluster only": (cluster_id, -1),
        "node only": (None, node_id),
        "empty cluster id": ("", -1),
        "wrong node": (cluster_id, node_id + 7),
        "wrong cluster": ("some-other-cluster", node_id),
        "both wrong": ("some-other-cluster", node_id + 7),
    }
    seen = {}
    for label, (cid, nid) in cases.items():
        with RawConnection(port) as conn:
            answer = conn.request(API_VERSIONS, 5, {"client_software_name": "pykafkad-tests",
                                                    "client_software_version": "1", "cluster_id": cid,
                                                    "node_id": nid})
            # The connection stays usable whatever the answer.
            assert _identity(conn) == (cluster_id, node_id)
        seen[label] = (answer["error_code"], bool(answer["api_keys"]), answer["finalized_features_epoch"] >= 0)
    return seen


def test_api_versions_v5_checks_the_target_as_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    ours = _api_versions_checks(broker.port)
    assert ours["wrong node"][0] == ErrorCode.REBOOTSTRAP_REQUIRED
    assert ours["node only"][0] == ErrorCode.INVALID_REQUEST
    assert ours == _api_versions_checks(reference_kafka.port)


def _list_offsets_table(port: int) -> dict[str, Any]:
    topic, empty = unique_topic("list-offsets-44"), unique_topic("list-offsets-44-empty")
    seen: dict[str, Any] = {}
    with RawConnection(port) as conn:
        for name in (topic, empty):
            conn.create_topic(name)
            conn.wait_for_leader(name)
        now = int(time.time() * 1000)
        written = conn.request(PRODUCE, 9, produce_body(topic, 0, record_batch([b"a", b"b", b"c"], now)))
        assert produce_partition_response(written)["error_code"] == 0, written
        for version in range(1, 12):
            for name, timestamps in ((topic, (-1, -2, -3, -4, -5, -6, -7, -100, now, now + 3_600_000)),
                                     (empty, (-1, -3))):
                for ts in timestamps:
                    answer = conn.request(LIST_OFFSETS, version, {
                        "replica_id": -1, "isolation_level": 0, "timeout_ms": 1000,
                        "topics": [{"name": name, "partitions": [
                            {"partition_index": 0, "current_leader_epoch": -1, "timestamp": ts}]}]})
                    [part] = answer["topics"][0]["partitions"]
                    role = "topic" if name == topic else "empty"
                    shown = "now" if ts == now else "later" if ts > now else ts
                    seen[f"v{version} {role} {shown}"] = (part["error_code"], part["offset"], part["leader_epoch"])
    return seen


def test_list_offsets_special_timestamps_by_version_as_kafka(broker: BrokerProcess,
                                                             reference_kafka: BrokerProcess) -> None:
    ours = _list_offsets_table(broker.port)
    assert ours["v11 topic -6"] == (0, -1, -1)
    assert ours["v8 topic -5"][0] == ErrorCode.UNSUPPORTED_VERSION
    theirs = _list_offsets_table(reference_kafka.port)
    assert {k: v for k, v in ours.items() if v != theirs[k]} == {}


def _wait_for_group_coordinator(conn: RawConnection, group: str) -> None:
    deadline = time.monotonic() + COORDINATOR_TIMEOUT_S
    while True:
        answer = conn.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]})
        if answer["coordinators"][0]["error_code"] == 0:
            return
        assert time.monotonic() < deadline, answer
        time.sleep(0.1)


def _group_answers(port: int) -> dict[str, Any]:
    unknown = unique_topic("no-such-group")
    seen: dict[str, Any] = {}
    with RawConnection(port) as conn:
        _wait_for_group_coordinator(conn, unknown)
        for version in (5, 6):
            deadline = time.monotonic() + COORDINATOR_TIMEOUT_S
            while True:
                [group] = conn.request(DESCRIBE_GROUPS, version, {
                    "groups": [unknown], "include_authorized_operations": False})["groups"]
                if group["error_code"] not in (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR):
                    break
                assert time.monotonic() < deadline, group
                time.sleep(0.1)
            message = group.get("error_message")
            seen[f"describe v{version}"] = (group["error_code"], group["group_state"], len(group["members"]),
                                            message.replace(unknown, "<group>") if message else message)
        for version in (2, 3):
            [result] = conn.request(DELETE_GROUPS, version, {"groups_names": [unknown]})["results"]
            seen[f"delete v{version}"] = (result["error_code"], result.get("error_message"))
        dirs = conn.request(DESCRIBE_LOG_DIRS, 5, {"topics": None})
        seen["log dirs v5"] = (dirs["error_code"], {(r["error_code"], r["is_cordoned"]) for r in dirs["results"]})
    return seen


def test_unknown_groups_and_log_dirs_in_new_versions_as_kafka(broker: BrokerProcess,
                                                              reference_kafka: BrokerProcess) -> None:
    ours = _group_answers(broker.port)
    assert ours["describe v6"][0] == ErrorCode.GROUP_ID_NOT_FOUND
    assert ours == _group_answers(reference_kafka.port)


PATTERNS = ("", None, "{prefix}-a.*", "{prefix}-a", "b", "^{prefix}-a", ".*", "(?i){upper}-A.*",
            "{prefix}-(a|b)-1", "((", "(?<=a)b")


def _listed_by_pattern(port: int) -> dict[str, Any]:
    prefix = unique_topic("txn-pattern")
    ids = {f"{prefix}-a-1": "a-1", f"{prefix}-b-1": "b-1", f"{prefix}-ab": "ab"}
    producers = []
    for txn_id in ids:
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "transactional.id": txn_id})
        producer.init_transactions(60)
        producers.append(producer)
    seen: dict[str, Any] = {}
    with RawConnection(port) as conn:
        for pattern in PATTERNS:
            sent = pattern.format(prefix=prefix, upper=prefix.upper()) if pattern else pattern
            answer = conn.request(LIST_TRANSACTIONS, 2, {"state_filters": [], "producer_id_filters": [],
                                                         "duration_filter": -1, "transactional_id_pattern": sent})
            listed = sorted(ids[t["transactional_id"]] for t in answer["transaction_states"]
                            if t["transactional_id"] in ids)
            seen[repr(pattern)] = (answer["error_code"], listed)
    for producer in producers:
        producer.flush(10)
    return seen


def test_list_transactions_by_re2_pattern_as_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    ours = _listed_by_pattern(broker.port)
    assert ours["'(?<=a)b'"] == (ErrorCode.INVALID_REGULAR_EXPRESSION, [])
    assert ours["'{prefix}-a.*'"] == (0, ["a-1", "ab"])
    assert ours["'{prefix}-a'"] == (0, [])
    assert ours == _listed_by_pattern(reference_kafka.port)


def _fetched(port: int) -> dict[str, Any]:
    topic = unique_topic("fetch-v18")
    seen: dict[str, Any] = {}
    with RawConnection(port) as conn:
        conn.create_topic(topic)
        conn.wait_for_leader(topic)
        written = conn.request(PRODUCE, 9, produce_body(topic, 0, record_batch([b"x", b"y"], int(time.time() * 1000))))
        assert produce_partition_response(written)["error_code"] == 0, written
        topic_id = conn.request(METADATA, 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                               "allow_auto_topic_creation": False,
                                               "include_topic_authorized_operations": False})["topics"][0]["topic_id"]
        for version, hw in ((17, None), (18, 2), (18, -1)):
            partition: dict[str, Any] = {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                                         "last_fetched_epoch": -1, "log_start_offset": -1,
                                         "partition_max_bytes": 1 << 20}
            if hw is not None:
                partition["high_watermark"] = hw
            answer = conn.request(FETCH, version, {
                "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
                "session_id": 0, "session_epoch": -1, "topics": [{"topic_id": topic_id, "partitions": [partition]}],
                "forgotten_topics_data": [], "rack_id": ""})
            [part] = answer["responses"][0]["partitions"]
            records = part["records"]
            seen[f"v{version} hw {hw}"] = (answer["error_code"], part["error_code"], part["high_watermark"],
                                           len(bytes(records)) > 0 if records is not None else None)
    return seen


def test_fetch_v18_as_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    ours = _fetched(broker.port)
    assert ours["v18 hw 2"] == (0, 0, 2, True)
    assert ours == _fetched(reference_kafka.port)


def _offsets_by_topic_id(port: int) -> dict[str, Any]:
    topic, group = unique_topic("offsets-by-id"), unique_topic("offsets-by-id-group")
    bogus = uuid.UUID("11111111-2222-3333-4444-555555555555")
    seen: dict[str, Any] = {}
    with RawConnection(port) as conn:
        conn.create_topic(topic, partitions=2)
        conn.wait_for_leader(topic)
        topic_id = conn.request(METADATA, 12, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                               "allow_auto_topic_creation": False,
                                               "include_topic_authorized_operations": False})["topics"][0]["topic_id"]
        roles = {topic_id: "topic", bogus: "bogus"}
        _wait_for_group_coordinator(conn, group)

        def partition(index: int, offset: int, metadata: str = "") -> dict[str, Any]:
            return {"partition_index": index, "committed_offset": offset, "committed_leader_epoch": -1,
                    "committed_metadata": metadata}

        deadline = time.monotonic() + COORDINATOR_TIMEOUT_S
        while True:
            committed = conn.request(OFFSET_COMMIT, 10, {
                "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"topic_id": topic_id, "partitions": [partition(0, 5, "m"), partition(7, 5)]},
                           {"topic_id": bogus, "partitions": [partition(0, 1)]}]})
            codes = {(roles[t["topic_id"]], p["partition_index"]): p["error_code"]
                     for t in committed["topics"] for p in t["partitions"]}
            if codes[("topic", 0)] not in (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR):
                break
            assert time.monotonic() < deadline, committed
            time.sleep(0.1)
        seen["commit v10"] = codes
        for label, topics in (("fetch v10 named", [{"topic_id": topic_id, "partition_indexes": [0, 1]},
                                                   {"topic_id": bogus, "partition_indexes": [0]}]),
                              ("fetch v10 all", None)):
            [fetched] = conn.request(OFFSET_FETCH, 10, {"groups": [
                {"group_id": group, "member_id": None, "member_epoch": -1, "topics": topics}],
                "require_stable": False})["groups"]
            seen[label] = (fetched["error_code"], {
                (roles[t["topic_id"]], p["partition_index"]): (p["committed_offset"], p["metadata"], p["error_code"])
                for t in fetched["topics"] for p in t["partitions"]})
    return seen


def test_offsets_by_topic_id_as_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    ours = _offsets_by_topic_id(broker.port)
    assert ours["commit v10"][("bogus", 0)] == ErrorCode.UNKNOWN_TOPIC_ID
    assert ours["fetch v10 all"] == (0, {("topic", 0): (5, "m", 0)})
    assert ours == _offsets_by_topic_id(reference_kafka.port)


def _coordinator_codes(port: int) -> dict[str, Any]:
    share_key = "some-group:" + base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=") + ":0"
    seen: dict[str, Any] = {}
    with RawConnection(port) as conn:
        group = unique_topic("coordinator-v6")
        _wait_for_group_coordinator(conn, group)
        for label, version, key_type, key in (("group v6", 6, 0, group), ("share key v5", 5, 2, share_key),
                                              ("malformed share key v6", 6, 2, "no-colons"),
                                              ("share key, partition not a number", 6, 2, share_key[:-1] + "x"),
                                              ("unknown key type", 6, 7, group)):
            [found] = conn.request(FIND_COORDINATOR, version, {"key_type": key_type, "coordinator_keys": [key]})[
                "coordinators"]
            seen[label] = found["error_code"]
    return seen


def test_find_coordinator_v6_as_kafka(broker: BrokerProcess, reference_kafka: BrokerProcess) -> None:
    ours = _coordinator_codes(broker.port)
    assert ours["group v6"] == 0 and ours["malformed share key v6"] == ErrorCode.INVALID_REQUEST
    assert ours == _coordinator_codes(reference_kafka.port)
    # A well-formed share-partition key is coordinated by the leader of its __share_group_state
    # partition (share.version 2 on a new cluster, as on Kafka): this broker, once the topic is made.
    share_key = "g:" + base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=") + ":3"
    with RawConnection(broker.port) as conn:
        deadline = time.monotonic() + 30
        while True:
            [found] = conn.request(FIND_COORDINATOR, 6, {"key_type": 2,
                                                         "coordinator_keys": [share_key]})["coordinators"]
            if found["error_code"] != ErrorCode.COORDINATOR_NOT_AVAILABLE or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    assert (found["error_code"], found["port"]) == (ErrorCode.NONE, broker.port), found


def test_kafka_python_pinned_to_an_older_broker_version_consumes_in_a_group(broker: BrokerProcess) -> None:
    """kafka-python infers the broker's version from the APIs it advertises (4.3 here); a client pinned
    to an older ``api_version`` then uses its own table of that version's APIs instead of the broker's
    list, so every version Kafka 4.1 served must be served (FindCoordinator v6 was not, and the
    group never found its coordinator)."""
    topic, group = unique_topic("kafka-python-pinned"), unique_topic("kafka-python-pinned-group")
    create_topic(broker.bootstrap, topic)
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, api_version=(4, 1))
    for i in range(5):
        producer.send(topic, f"v-{i}".encode())
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=broker.bootstrap, group_id=group, api_version=(4, 1),
                             auto_offset_reset="earliest", consumer_timeout_ms=30000)
    try:
        got = []
        for message in consumer:
            got.append(message.value)
            if len(got) == 5:
                break
        consumer.commit()
    finally:
        consumer.close()
    assert sorted(got) == [f"v-{i}".encode() for i in range(5)]
