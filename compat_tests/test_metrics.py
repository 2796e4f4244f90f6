"""The HTTP listener (``metrics.listener``): ``/metrics`` scraped after known workloads, with
Kafka's JMX-exporter names and the values the workload implies (bytes and records in and out,
requests, errors, latency, log offsets, consumer lag, connections), and the health probes."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from compat_tests.broker_process import BrokerError, BrokerProcess, free_port
from compat_tests.raw_kafka import RawConnection, produce_body, record_batch
from compat_tests.test_consumer_group_heartbeat_kafka import Classic, Session


class MetricsBroker:
    def __init__(self, work: Path) -> None:
        self.http_port = free_port()
        self.broker = BrokerProcess(work / "logs", {"metrics.listener": f"http://127.0.0.1:{self.http_port}",
                                                    "metrics.console.enable": "true"}, name="metrics")

    def get(self, path: str, host: str | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.http_port}{path}",
                                         headers={"Host": host} if host else {})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def scrape(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """Every sample of /metrics: (name, sorted labels) -> value."""
        status, body = self.get("/metrics")
        assert status == 200
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for family in text_string_to_metric_families(body.decode()) for s in family.samples}


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.fixture(scope="module")
def metrics(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetricsBroker]:
    server = MetricsBroker(tmp_path_factory.mktemp("metrics"))
    server.broker.start()
    yield server
    server.broker.close()


def test_probes_answer(metrics: MetricsBroker) -> None:
    assert metrics.get("/healthz") == (200, b"ok\n")
    status, body = metrics.get("/readyz")
    assert status == 200 and json.loads(body) == {"ready": True, "problems": []}
    status, body = metrics.get("/nope")
    assert status == 404 and b"/metrics" in body


def test_produce_and_fetch_are_counted_per_topic(metrics: MetricsBroker) -> None:
    topic = f"m-{uuid.uuid4().hex[:8]}"
    before = metrics.scrape()
    batch = record_batch([b"v" * 100] * 5, int(time.time() * 1000))
    with RawConnection(metrics.broker.port) as conn:
        conn.create_topic(topic)
        for _ in range(4):
            answer = conn.request(0, 9, produce_body(topic, 0, batch))
            assert answer["responses"][0]["partition_responses"][0]["error_code"] == 0
        fetched = conn.request(1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                       "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
                                           {"topic": topic, "partitions": [{"partition": 0, "fetch_offset": 0,
                                                                            "partition_max_bytes": 1 << 20}]}]})
        records = fetched["responses"][0]["partitions"][0]["records"]
        refused = conn.request(0, 9, produce_body(topic, 5, batch))  # no partition 5
        assert refused["responses"][0]["partition_responses"][0]["error_code"] == 3
        after = metrics.scrape()
    assert value(after, "kafka_server_brokertopicmetrics_messagesin_total", topic=topic) == 20
    assert value(after, "kafka_server_brokertopicmetrics_bytesin_total", topic=topic) == 4 * len(batch)
    assert value(after, "kafka_server_brokertopicmetrics_bytesout_total", topic=topic) == len(records) == 4 * len(batch)
    assert value(after, "kafka_server_brokertopicmetrics_failedproducerequests_total", topic=topic) == 1
    errors = {"request": "Produce", "error": "UNKNOWN_TOPIC_OR_PARTITION"}
    name = "kafka_network_requestmetrics_errors_total"
    assert value(after, name, **errors) - value(before, name, **errors) == 1
    produced = value(after, "kafka_network_requestmetrics_requests_total", request="Produce", version="9")
    assert produced - value(before, "kafka_network_requestmetrics_requests_total", request="Produce",
                            version="9") == 5
    for part in ("totaltimems", "requestqueuetimems", "localtimems", "remotetimems", "responsesendtimems"):
        name = f"kafka_network_requestmetrics_{part}_count"
        assert value(after, name, request="Produce") - value(before, name, request="Produce") == 5, part
    assert value(after, "kafka_log_log_logendoffset", topic=topic, partition="0") == 20
    assert value(after, "kafka_log_log_size", topic=topic, partition="0") == 4 * len(batch)
    assert value(after, "kafka_server_replicamanager_leadercount") >= 1
    assert value(after, "kafka_controller_kafkacontroller_activecontrollercount") == 1
    assert value(after, "kafka_server_replicamanager_underreplicatedpartitions") == 0
    assert value(after, "process_resident_memory_bytes") > 0 and value(after, "process_open_fds") > 0
    # The loop's lag is sampled every half second: wait for the first sample.
    deadline = time.monotonic() + 15
    while value(metrics.scrape(), "pykafkad_event_loop_lag_seconds_count") == 0:
        assert time.monotonic() < deadline, "the event loop lag was never sampled"
        time.sleep(0.1)


def test_consumer_lag_is_the_high_watermark_minus_the_committed_offset(metrics: MetricsBroker) -> None:
    topic, group = f"lag-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    batch = record_batch([b"x"] * 10, int(time.time() * 1000))
    with RawConnection(metrics.broker.port) as conn:
        conn.create_topic(topic)
        assert conn.request(0, 9, produce_body(topic, 0, batch))["responses"][0]["partition_responses"][0][
            "error_code"] == 0
        consumer = Consumer({"bootstrap.servers": metrics.broker.bootstrap, "group.id": group,
                             "enable.auto.commit": False})
        try:
            consumer.commit(offsets=[TopicPartition(topic, 0, 3)], asynchronous=False)
        finally:
            consumer.close()
        samples = metrics.scrape()
        assert value(samples, "kafka_consumergroup_lag", consumergroup=group, topic=topic, partition="0") == 7
        assert value(samples, "kafka_consumergroup_current_offset", consumergroup=group, topic=topic,
                     partition="0") == 3
        # Connections are counted per listener while they are open: this one at least.
        assert value(samples, "kafka_server_socketservermetrics_connection_count", listener="PLAINTEXT") >= 1


def test_a_taken_metrics_port_stops_the_start_with_one_line(metrics: MetricsBroker, tmp_path: Path) -> None:
    other = BrokerProcess(tmp_path / "logs", {"metrics.listener": f"http://127.0.0.1:{metrics.http_port}"},
                          name="taken")
    with pytest.raises(BrokerError) as refused:
        other.start(timeout=30)
    assert f"metrics.listener=http://127.0.0.1:{metrics.http_port}" in str(refused.value)
    bad = BrokerProcess(tmp_path / "logs2", {"metrics.listener": "127.0.0.1:9644"}, name="bad")
    with pytest.raises(BrokerError) as refused:
        bad.start(timeout=30)
    assert "not http://host:port" in str(refused.value)


def test_every_metric_the_grafana_dashboard_queries_is_served(metrics: MetricsBroker) -> None:
    dashboard = json.loads((Path(__file__).parent.parent / "deploy" / "grafana" / "pykafkad.json").read_text())
    queried = {name for panel in dashboard["panels"] for target in panel["targets"]
               for name in re.findall(r"\b((?:kafka|pykafkad|process)_[a-z_]+)\b", target["expr"])}
    # Workload enough for every family to have a sample: a topic with data, a committed group.
    topic, group = f"dash-{uuid.uuid4().hex[:8]}", f"dash-{uuid.uuid4().hex[:8]}"
    with RawConnection(metrics.broker.port) as conn:
        conn.create_topic(topic)
        conn.request(0, 9, produce_body(topic, 0, record_batch([b"d"], int(time.time() * 1000))))
        consumer = Consumer({"bootstrap.servers": metrics.broker.bootstrap, "group.id": group})
        try:
            consumer.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
        finally:
            consumer.close()
        served = {name for name, _ in metrics.scrape()}
    missing = sorted(q for q in queried if q not in served)
    assert queried and not missing, missing


def test_the_admin_api_shows_the_cluster_topics_groups_and_logs(metrics: MetricsBroker) -> None:
    topic, group = f"api-{uuid.uuid4().hex[:8]}", f"api-{uuid.uuid4().hex[:8]}"
    batch = record_batch([b"a"] * 6, int(time.time() * 1000))
    with RawConnection(metrics.broker.port) as conn:
        conn.create_topic(topic, partitions=2)
        conn.request(0, 9, produce_body(topic, 1, batch))
    consumer = Consumer({"bootstrap.servers": metrics.broker.bootstrap, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        got = 0
        deadline = time.monotonic() + 30
        while got < 6 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            got += msg is not None and msg.error() is None
        consumer.commit(offsets=[TopicPartition(topic, 1, 4)], asynchronous=False)

        def get(path: str) -> object:
            status, body = metrics.get(path)
            assert status == 200, (path, status, body)
            return json.loads(body)

        cluster = get("/api/cluster")
        assert cluster["controller_id"] == 1 and [b["id"] for b in cluster["brokers"]] == [1]
        assert cluster["brokers"][0]["leaders"] >= 2
        listed = {t["name"]: t for t in get("/api/topics")}
        assert listed[topic]["partitions"] == 2 and listed[topic]["under_replicated"] == 0
        described = get(f"/api/topics/{topic}")
        part = described["partitions"][1]
        assert (part["leader"], part["isr"], part["log_end_offset"], part["high_watermark"]) == (1, [1], 6, 6)
        assert part["size_bytes"] == len(batch)
        groups = {g["group_id"]: g for g in get("/api/groups")}
        assert groups[group]["state"] == "Stable" and groups[group]["members"] == 1
        detail = get(f"/api/groups/{group}")
        [member] = detail["members"]
        assert sorted(member["assignment"][topic]) == [0, 1]
        [offset] = [o for o in detail["offsets"] if o["partition"] == 1]
        assert (offset["committed_offset"], offset["lag"], offset["member_id"]) == (4, 2, member["member_id"])
    finally:
        consumer.close()
    assert any("created topic" in line["message"] and topic in line["message"] for line in get("/api/logs?lines=500"))
    status, body = metrics.get("/api/topics/no-such-topic")
    assert status == 404 and json.loads(body) == {"error": "topic no-such-topic does not exist"}


def test_the_admin_api_shows_a_consumer_protocol_group_with_its_epochs(metrics: MetricsBroker) -> None:
    """A KIP-848 group (``group.protocol=consumer``) shows its type, assignor, group and assignment
    epochs, and each member's epoch, target assignment and protocol (a classic member joins it)."""
    topic, group = f"api848-{uuid.uuid4().hex[:8]}", f"api848-{uuid.uuid4().hex[:8]}"
    with RawConnection(metrics.broker.port) as conn:
        conn.create_topic(topic, partitions=2)
    consumer = Consumer({"bootstrap.servers": metrics.broker.bootstrap, "group.id": group,
                         "group.protocol": "consumer", "auto.offset.reset": "earliest"})
    try:
        assigned: list[int] = []
        consumer.subscribe([topic], on_assign=lambda c, ps: assigned.extend(p.partition for p in ps))
        deadline = time.monotonic() + 30
        while sorted(assigned) != [0, 1] and time.monotonic() < deadline:
            consumer.poll(0.2)
        assert sorted(assigned) == [0, 1]
        status, body = metrics.get(f"/api/groups/{group}")
        assert status == 200, body
        detail = json.loads(body)
        assert (detail["type"], detail["state"], detail["protocol"]) == ("consumer", "Stable", "uniform")
        assert detail["group_epoch"] == detail["assignment_epoch"] > 0
        [member] = detail["members"]
        assert member["member_epoch"] == detail["assignment_epoch"]
        assert member["assignment"] == member["target_assignment"] == {topic: [0, 1]}
        listed = {g["group_id"]: g for g in json.loads(metrics.get("/api/groups")[1])}
        assert (listed[group]["type"], listed[group]["members"]) == ("consumer", 1)
        status, page = metrics.get(f"/groups/{group}")
        assert status == 200 and b"consumer protocol" in page and b"group epoch" in page, page[:2000]

        # A classic member joins the group (KIP-848's mixed groups): each member shows its protocol.
        with RawConnection(metrics.broker.port) as conn:
            session = Session(conn, group)
            classic = Classic(session, "classic", {})
            classic.join()
            assert classic.join()["error"] == 0
        detail = json.loads(metrics.get(f"/api/groups/{group}")[1])
        assert sorted(m["protocol"] for m in detail["members"]) == ["classic", "consumer"], detail
        status, page = metrics.get(f"/groups/{group}")
        assert status == 200 and b"<th>Protocol</th>" in page and b"<td>classic</td>" in page, page[:3000]
    finally:
        consumer.close()


def test_a_loopback_listener_answers_only_to_loopback_names(metrics: MetricsBroker) -> None:
    """Another site's page cannot reach the console by pointing a name of its own at 127.0.0.1."""
    assert metrics.get("/healthz", host=f"localhost:{metrics.http_port}")[0] == 200
    status, body = metrics.get("/api/topics", host="attacker.example")
    assert status == 403 and b"127.0.0.1, localhost" in body


def test_the_console_is_off_unless_enabled_and_never_with_an_authorizer(tmp_path: Path) -> None:
    port = free_port()
    plain = BrokerProcess(tmp_path / "logs", {"metrics.listener": f"http://127.0.0.1:{port}"}, name="no-console")
    plain.start()
    try:
        for path in ("/", "/api/topics", "/browse"):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10)
                raise AssertionError(f"{path} was served without metrics.console.enable")
            except urllib.error.HTTPError as e:
                assert e.code == 404 and b"metrics.console.enable=true" in e.read()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            assert answer.status == 200
    finally:
        plain.close()
    guarded = BrokerProcess(tmp_path / "logs2", {"metrics.listener": f"http://127.0.0.1:{free_port()}",
                                                 "metrics.console.enable": "true",
                                                 "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"},
                            name="console-acls")
    with pytest.raises(BrokerError) as refused:
        guarded.start(timeout=30)
    assert "metrics.console.enable=true cannot be combined with authorizer.class.name" in str(refused.value)


def test_a_deleted_topic_takes_its_series_with_it(metrics: MetricsBroker) -> None:
    topic = f"gone-{uuid.uuid4().hex[:8]}"
    with RawConnection(metrics.broker.port) as conn:
        conn.create_topic(topic)
        conn.request(0, 9, produce_body(topic, 0, record_batch([b"x"], int(time.time() * 1000))))
        assert value(metrics.scrape(), "kafka_server_brokertopicmetrics_messagesin_total", topic=topic) == 1
        deleted = conn.request(20, 6, {"topics": [{"name": topic, "topic_id": uuid.UUID(int=0)}],
                                       "timeout_ms": 30000})
        assert deleted["responses"][0]["error_code"] == 0
    deadline = time.monotonic() + 30
    while any(labels and dict(labels).get("topic") == topic for _, labels in metrics.scrape()):
        assert time.monotonic() < deadline, f"{topic}'s series outlived the topic"
        time.sleep(0.1)
