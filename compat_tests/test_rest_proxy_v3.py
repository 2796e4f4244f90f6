"""The REST proxy (issue 30), API v3: plain HTTP (httpx, and a raw socket for streaming) against the
proxy in the broker and on its own
against the reference Apache Kafka: the cluster and brokers, topics with their configs and
partitions, records streamed in and answered one line each, and consumer groups with their lag, in
Confluent's resource shapes.  ACLs are in test_rest_proxy_auth.py (they need an authorizer).
"""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer
from confluent_kafka.serialization import MessageField, SerializationContext

from compat_tests.broker_process import BrokerProcess
from compat_tests.storage_support import wait_for
from compat_tests.test_rest_proxy import RestBroker, StandaloneRest

JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RestBroker]:
    found = RestBroker(tmp_path_factory.mktemp("rest-v3")).start()
    yield found
    found.close()


def _cluster(http: Any) -> str:
    listing = http.get("/v3/clusters").json()
    assert listing["kind"] == "KafkaClusterList" and len(listing["data"]) == 1
    return listing["data"][0]["cluster_id"]


def _lines(answer: Any) -> list[dict[str, Any]]:
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "application/json"
    return [json.loads(line) for line in answer.text.split("\r\n") if line]


def test_the_cluster_and_its_brokers_in_confluents_shapes(rest: RestBroker) -> None:
    cluster_id = _cluster(rest.http)
    admin = AdminClient({"bootstrap.servers": rest.broker.bootstrap})
    assert cluster_id == admin.describe_cluster().result(30).cluster_id
    cluster = rest.http.get(f"/v3/clusters/{cluster_id}").json()
    assert cluster["kind"] == "KafkaCluster"
    assert cluster["metadata"] == {"self": f"{rest.url}/v3/clusters/{cluster_id}",
                                   "resource_name": f"crn:///kafka={cluster_id}"}
    assert cluster["controller"] == {"related": f"{rest.url}/v3/clusters/{cluster_id}/brokers/1"}
    assert cluster["topics"] == {"related": f"{rest.url}/v3/clusters/{cluster_id}/topics"}
    missing = rest.http.get("/v3/clusters/not-this-one")
    assert (missing.status_code, missing.json()["error_code"]) == (404, 404)
    assert missing.headers["content-type"] == "application/json"

    brokers = rest.http.get(f"/v3/clusters/{cluster_id}/brokers").json()
    assert brokers["kind"] == "KafkaBrokerList" and brokers["metadata"]["next"] is None
    [broker] = brokers["data"]
    assert (broker["broker_id"], broker["host"], broker["port"]) == (1, "127.0.0.1", rest.broker.port)
    assert rest.http.get(f"/v3/clusters/{cluster_id}/brokers/1").json() == broker
    assert rest.http.get(f"/v3/clusters/{cluster_id}/brokers/7").status_code == 404
    configs = rest.http.get(f"/v3/clusters/{cluster_id}/brokers/1/configs").json()
    assert configs["kind"] == "KafkaBrokerConfigList"
    names = [c["name"] for c in configs["data"]]
    assert names == sorted(names) and "num.partitions" in names
    one = rest.http.get(f"/v3/clusters/{cluster_id}/brokers/1/configs/num.partitions").json()
    assert (one["kind"], one["broker_id"], one["value"]) == ("KafkaBrokerConfig", 1, "1")


def test_topics_are_created_configured_grown_and_deleted(rest: RestBroker) -> None:
    cluster_id = _cluster(rest.http)
    base = f"/v3/clusters/{cluster_id}/topics"
    created = rest.http.post(base, headers=JSON, json={
        "topic_name": "v3-orders", "partitions_count": 2, "replication_factor": 1,
        "configs": [{"name": "retention.ms", "value": "3600000"}]})
    assert created.status_code == 201, created.text
    assert created.headers["location"] == f"{rest.url}{base}/v3-orders"
    topic = created.json()
    assert (topic["kind"], topic["topic_name"], topic["partitions_count"], topic["replication_factor"],
            topic["is_internal"]) == ("KafkaTopic", "v3-orders", 2, 1, False)
    assert topic["metadata"]["resource_name"] == f"crn:///kafka={cluster_id}/topic=v3-orders"
    assert rest.http.get(f"{base}/v3-orders").json() == topic
    listed = rest.http.get(base).json()
    assert listed["kind"] == "KafkaTopicList"
    assert "v3-orders" in [t["topic_name"] for t in listed["data"]]
    assert "__consumer_offsets" not in [t["topic_name"] for t in listed["data"]]
    again = rest.http.post(base, headers=JSON, json={"topic_name": "v3-orders"})
    assert (again.status_code, again.json()["error_code"]) == (400, 40002), again.text
    too_many = rest.http.post(base, headers=JSON, json={"topic_name": "v3-wide", "replication_factor": 3})
    assert (too_many.status_code, too_many.json()["error_code"]) == (400, 40002), too_many.text
    placed = rest.http.post(base, headers=JSON, json={"topic_name": "v3-placed", "replicas_assignments": {"0": [1]}})
    assert placed.status_code == 201 and placed.json()["partitions_count"] == 1, placed.text
    empty = rest.http.post(base, headers=JSON, content=b"")
    assert (empty.status_code, empty.json()["error_code"]) == (422, 42206)

    configs = f"{base}/v3-orders/configs"
    retention = rest.http.get(f"{configs}/retention.ms").json()
    assert (retention["kind"], retention["value"], retention["is_default"], retention["source"]) == (
        "KafkaTopicConfig", "3600000", False, "DYNAMIC_TOPIC_CONFIG")
    assert rest.http.put(f"{configs}/cleanup.policy", headers=JSON, json={"value": "compact"}).status_code == 204
    assert rest.http.post(f"{configs}:alter", headers=JSON, json={"data": [
        {"name": "retention.ms", "operation": "DELETE"}, {"name": "segment.ms", "value": "600000"}]}).status_code == 204
    values = {c["name"]: c for c in rest.http.get(configs).json()["data"]}
    assert values["cleanup.policy"]["value"] == "compact"
    assert values["retention.ms"]["is_default"] and values["retention.ms"]["value"] == "604800000"
    assert values["segment.ms"]["value"] == "600000"
    assert rest.http.delete(f"{configs}/cleanup.policy").status_code == 204
    assert rest.http.get(f"{configs}/cleanup.policy").json()["value"] == "delete"

    def produce_to(partition: int) -> int:
        record = {"value": {"type": "JSON", "data": partition}, "partition_id": partition}
        return _lines(rest.http.post(f"{base}/v3-orders/records", headers=JSON,
                                     content=json.dumps(record).encode()))[0]["error_code"]

    assert produce_to(1) == 200
    grown = rest.http.patch(f"{base}/v3-orders", headers=JSON, json={"partitions_count": 3})
    assert grown.status_code == 200 and grown.json()["partitions_count"] == 3, grown.text
    # The proxy's producer knew 2 partitions: within seconds it takes records for the third.
    wait_for("records for the new partition", lambda: produce_to(2) == 200, timeout=20)
    partitions = rest.http.get(f"{base}/v3-orders/partitions").json()
    assert [p["partition_id"] for p in partitions["data"]] == [0, 1, 2]
    assert partitions["data"][2]["leader"] == {"related": f"{rest.url}{base}/v3-orders/partitions/2/replicas/1"}
    assert rest.http.get(f"{base}/v3-orders/partitions/5").json()["error_code"] == 40402

    assert rest.http.delete(f"{base}/v3-orders").status_code == 204
    gone = rest.http.get(f"{base}/v3-orders")
    assert (gone.status_code, gone.json()["error_code"]) == (404, 40403)


def test_records_in_one_request_are_answered_one_line_each_in_order(rest: RestBroker) -> None:
    cluster_id = _cluster(rest.http)
    rest.http.post(f"/v3/clusters/{cluster_id}/topics", headers=JSON,
                   json={"topic_name": "v3-records", "partitions_count": 2})
    schema = json.dumps({"type": "record", "name": "Reading", "fields": [{"name": "celsius", "type": "double"}]})
    records = [
        {"key": {"type": "STRING", "data": "sensor-1"}, "value": {"type": "JSON", "data": {"on": True}},
         "partition_id": 1, "headers": [{"name": "origin", "value": base64.b64encode(b"http").decode()}],
         "timestamp": "2026-01-02T03:04:05.678Z"},
        {"value": {"type": "BINARY", "data": base64.b64encode(b"\x00\x01").decode()}, "partition_id": 0},
        {"value": {"type": "BINARY", "data": "%% not base64"}},
        {"value": {"type": "AVRO", "schema": schema, "data": {"celsius": 21.5}}, "partition_id": 0},
        {"value": {"data": {"celsius": 22.0}}, "partition_id": 0},  # the subject's latest schema
        {"partition_id": 7},
    ]
    # Sent as a stream of chunks (httpx sends a generator chunked), objects split across them.
    text = "\n".join(json.dumps(r) for r in records)
    answers = _lines(rest.http.post(f"/v3/clusters/{cluster_id}/topics/v3-records/records", headers=JSON,
                                    content=(text[i:i + 40].encode() for i in range(0, len(text), 40))))
    assert [a["error_code"] for a in answers] == [200, 200, 400, 200, 200, 40402]
    first = answers[0]
    assert (first["cluster_id"], first["topic_name"], first["partition_id"], first["offset"], first["timestamp"]) == (
        cluster_id, "v3-records", 1, 0, "2026-01-02T03:04:05.678Z")
    assert first["key"] == {"type": "STRING", "size": 8} and first["value"] == {"type": "JSON", "size": 11}
    assert "key" not in answers[1] and answers[1]["value"] == {"type": "BINARY", "size": 2}
    assert "not a valid base64 string" in answers[2]["message"]
    assert answers[3]["value"]["subject"] == "v3-records-value" and answers[3]["value"]["schema_version"] == 1
    assert answers[4]["value"]["schema_id"] == answers[3]["value"]["schema_id"]
    assert [a["offset"] for a in answers[1:5] if a["error_code"] == 200] == [0, 1, 2]

    consumer = Consumer({"bootstrap.servers": rest.broker.bootstrap, "group.id": "v3-records-check"})
    consumer.assign([TopicPartition("v3-records", 0, 0), TopicPartition("v3-records", 1, 0)])
    got: list[Any] = []
    wait_for("4 records", lambda: got.extend(m for m in consumer.consume(10, 0.5) if m.error() is None)
             or len(got) >= 4)
    consumer.close()
    by_place = {(m.partition(), m.offset()): m for m in got}
    keyed = by_place[(1, 0)]
    assert (keyed.key(), keyed.value(), keyed.headers(), keyed.timestamp()[1]) == (
        b"sensor-1", b'{"on":true}', [("origin", b"http")], 1767323045678)
    deserialize = AvroDeserializer(SchemaRegistryClient({"url": rest.registry_url}))
    assert [deserialize(by_place[(0, o)].value(), SerializationContext("v3-records", MessageField.VALUE))
            for o in (1, 2)] == [{"celsius": 21.5}, {"celsius": 22.0}]

    broken = _lines(rest.http.post(f"/v3/clusters/{cluster_id}/topics/v3-records/records", headers=JSON,
                                   content=b'{"value": {"type": "JSON", "data": 1}} {"value": '))
    assert [a["error_code"] for a in broken] == [200, 400]
    unknown = rest.http.post(f"/v3/clusters/{cluster_id}/topics/v3-nowhere/records", headers=JSON, json={})
    assert (unknown.status_code, unknown.json()["error_code"]) == (404, 40403)


def test_a_record_is_answered_while_the_stream_it_came_in_stays_open(rest: RestBroker) -> None:
    """Streaming mode: one connection, records written over time; each is answered before the next
    is sent."""
    cluster_id = _cluster(rest.http)
    rest.http.post(f"/v3/clusters/{cluster_id}/topics", headers=JSON, json={"topic_name": "v3-stream"})
    with socket.create_connection(("127.0.0.1", rest.rest_port), timeout=30) as sock:
        sock.sendall(f"POST /v3/clusters/{cluster_id}/topics/v3-stream/records HTTP/1.1\r\n"
                     "Host: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
        reader = sock.makefile("rb")
        assert reader.readline().startswith(b"HTTP/1.1 200")
        offsets = []
        for n in range(3):
            record = json.dumps({"value": {"type": "JSON", "data": n}}).encode()
            sock.sendall(f"{len(record):x}\r\n".encode() + record + b"\r\n")
            line = b""
            while not line.startswith(b"{"):  # past the headers and the chunk sizes
                line = reader.readline()
            offsets.append(json.loads(line)["offset"])
        sock.sendall(b"0\r\n\r\n")
    assert offsets == [0, 1, 2]


def test_consumer_groups_their_members_and_lag(rest: RestBroker) -> None:
    cluster_id = _cluster(rest.http)
    base = f"/v3/clusters/{cluster_id}"
    rest.http.post(f"{base}/topics", headers=JSON, json={"topic_name": "v3-lagging", "partitions_count": 1})
    body = "\n".join(json.dumps({"value": {"type": "JSON", "data": n}}) for n in range(5))
    assert all(a["error_code"] == 200 for a in _lines(rest.http.post(f"{base}/topics/v3-lagging/records",
                                                                      headers=JSON, content=body.encode())))
    consumer = Consumer({"bootstrap.servers": rest.broker.bootstrap, "group.id": "v3-laggards",
                         "client.id": "laggard", "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["v3-lagging"])
    try:
        read: list[Any] = []
        wait_for("2 records", lambda: read.extend(m for m in consumer.consume(2 - len(read), 0.5)
                                                  if m.error() is None) or len(read) >= 2)
        consumer.commit(asynchronous=False)
        group = rest.http.get(f"{base}/consumer-groups/v3-laggards").json()
        assert (group["kind"], group["state"], group["is_simple"], group["partition_assignor"]) == (
            "KafkaConsumerGroup", "STABLE", False, "range")
        assert "v3-laggards" in [g["consumer_group_id"] for g in
                                 rest.http.get(f"{base}/consumer-groups").json()["data"]]
        [member] = rest.http.get(f"{base}/consumer-groups/v3-laggards/consumers").json()["data"]
        assert member["client_id"] == "laggard"
        assignments = rest.http.get(f"{base}/consumer-groups/v3-laggards/consumers/{member['consumer_id']}"
                                    "/assignments").json()
        assert [(a["topic_name"], a["partition_id"]) for a in assignments["data"]] == [("v3-lagging", 0)]
        [lag] = rest.http.get(f"{base}/consumer-groups/v3-laggards/lags").json()["data"]
        assert (lag["current_offset"], lag["log_end_offset"], lag["lag"], lag["consumer_id"]) == (
            2, 5, 3, member["consumer_id"])
        summary = rest.http.get(f"{base}/consumer-groups/v3-laggards/lag-summary").json()
        assert (summary["max_lag"], summary["total_lag"], summary["max_lag_topic_name"]) == (3, 3, "v3-lagging")
    finally:
        consumer.close()
    assert rest.http.get(f"{base}/consumer-groups/no-such-group").status_code == 404


def test_the_standalone_proxy_speaks_v3_to_apache_kafka(reference_kafka: BrokerProcess, tmp_path: Path) -> None:
    proxy = StandaloneRest(reference_kafka.bootstrap, tmp_path / "rest.log")
    try:
        cluster_id = _cluster(proxy.http)
        base = f"/v3/clusters/{cluster_id}"
        created = proxy.http.post(f"{base}/topics", headers=JSON, json={"topic_name": "v3-on-kafka",
                                                                         "partitions_count": 2})
        assert created.status_code == 201, created.text
        answers = _lines(proxy.http.post(f"{base}/topics/v3-on-kafka/records", headers=JSON, content=(
            json.dumps({"value": {"type": "JSON", "data": n}, "partition_id": 1}).encode() for n in range(3))))
        assert [(a["error_code"], a["partition_id"], a["offset"]) for a in answers] == [(200, 1, n) for n in range(3)]
        wait_for("the topic's configs", lambda: proxy.http.get(f"{base}/topics/v3-on-kafka/configs/cleanup.policy")
                 .status_code == 200)
        assert proxy.http.get(f"{base}/brokers").json()["data"][0]["broker_id"] == 1
        configs = f"{base}/topics/v3-on-kafka/configs"
        assert proxy.http.post(f"{configs}:alter", headers=JSON, json={"data": [
            {"name": "retention.ms", "value": "3600000"}]}).status_code == 204
        assert {c["name"]: c["value"] for c in proxy.http.get(configs).json()["data"]}["retention.ms"] == "3600000"
        grown = proxy.http.patch(f"{base}/topics/v3-on-kafka", headers=JSON, json={"partitions_count": 3})
        assert grown.status_code == 200, grown.text
        wait_for("3 partitions", lambda: [p["partition_id"] for p in proxy.http.get(
            f"{base}/topics/v3-on-kafka/partitions").json()["data"]] == [0, 1, 2])

        consumer = Consumer({"bootstrap.servers": reference_kafka.bootstrap, "group.id": "v3-kafka-readers",
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.assign([TopicPartition("v3-on-kafka", 1, 0)])
        try:
            read: list[Any] = []
            wait_for("a record", lambda: read.extend(m for m in consumer.consume(1, 0.5) if m.error() is None)
                     or len(read) >= 1)
            consumer.commit(asynchronous=False)
        finally:
            consumer.close()
        wait_for("the group", lambda: "v3-kafka-readers" in [
            g["consumer_group_id"] for g in proxy.http.get(f"{base}/consumer-groups").json()["data"]])
        lags = {(x["partition_id"], x["lag"]) for x in
                proxy.http.get(f"{base}/consumer-groups/v3-kafka-readers/lags").json()["data"]}
        assert (1, 2) in lags, lags
        assert proxy.http.delete(f"{base}/topics/v3-on-kafka").status_code == 204
    finally:
        assert proxy.stop() == 0


def test_a_client_that_writes_its_whole_body_before_reading_gets_every_answer(rest: RestBroker) -> None:
    """httpx (as curl) sends all of a request before it reads the answer: the proxy goes on reading
    records while their answers wait, rather than stop reading once the answers fill the socket's
    buffers (which deadlocked, each side waiting for the other)."""
    cluster_id = _cluster(rest.http)
    rest.http.post(f"/v3/clusters/{cluster_id}/topics", headers=JSON,
                   json={"topic_name": "v3-bulk", "partitions_count": 4})
    count = 5_000
    line = json.dumps({"value": {"type": "JSON", "data": {"payload": "x" * 1000}}}).encode() + b"\n"
    answers = _lines(rest.http.post(f"/v3/clusters/{cluster_id}/topics/v3-bulk/records", headers=JSON,
                                    content=(line * 100 for _ in range(count // 100))))
    assert len(answers) == count and all(a["error_code"] == 200 for a in answers)
