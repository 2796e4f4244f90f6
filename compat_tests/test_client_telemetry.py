"""Client telemetry (KIP-714): subscriptions set with ``kafka-client-metrics.sh`` tell clients what to
push; a Java producer 4.4.0 pushes its metrics, and they appear on the broker's own ``/metrics``
labelled by client id and client instance id, until the producer closes (its terminating push
removes them).  GetTelemetrySubscriptions and PushTelemetry are served and advertised only with
``metrics.listener`` (Kafka serves them only with a plugin that receives the metrics), with Kafka's
errors for a stale subscription, an early push, an unaccepted compression and a push too large; the
number of series kept is bounded (``pykafkad.client.telemetry.max.series``).
"""

from __future__ import annotations

import subprocess
import time
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any

from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.metrics.v1 import metrics_pb2

from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.conftest import BrokerFactory
from compat_tests.java_tools import java_classpath, java_executable, run_tool
from compat_tests.raw_kafka import RawConnection
from wire.error_codes import ErrorCode

GET_SUBSCRIPTIONS, PUSH = 71, 72
WAIT_S = 60.0
NO_INSTANCE = uuid.UUID(int=0)


def _telemetry_broker(broker_factory: BrokerFactory, **overrides: str) -> tuple[BrokerProcess, int]:
    http_port = free_port()
    broker = broker_factory("telemetry", {"metrics.listener": f"http://127.0.0.1:{http_port}", **overrides})
    return broker, http_port


def _scrape(http_port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10) as answer:
        return answer.read().decode()


def _wait_scrape(http_port: int, what: str, condition: Callable[[str], bool]) -> str:
    deadline = time.monotonic() + WAIT_S
    while True:
        text = _scrape(http_port)
        if condition(text):
            return text
        assert time.monotonic() < deadline, f"{what} not on /metrics within {WAIT_S} s"
        time.sleep(0.2)


def _subscribe(broker: BrokerProcess, name: str, *args: str) -> None:
    run_tool("kafka-client-metrics", ["--bootstrap-server", broker.bootstrap, "--alter", "--name", name, *args])


def test_a_java_producers_pushed_metrics_are_on_metrics(broker_factory: BrokerFactory) -> None:
    broker, http_port = _telemetry_broker(broker_factory)
    _subscribe(broker, "telemetry-producers", "--metrics", "org.apache.kafka.producer.", "--interval", "500",
               "--match", "client_id=telemetry-.*")
    producer = subprocess.Popen(
        [java_executable(), "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", java_classpath(),
         "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server", broker.bootstrap, "--topic", "telemetry",
         "--command-property", "client.id=telemetry-producer"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert producer.stdin is not None
        producer.stdin.write("".join(f"record-{i}\n" for i in range(100)))
        producer.stdin.flush()
        text = _wait_scrape(http_port, "the producer's record-send-total",
                            lambda t: 'org_apache_kafka_producer_record_send_total{' in t
                            and 'client_id="telemetry-producer"' in t)
        sent = [line for line in text.splitlines()
                if line.startswith("org_apache_kafka_producer_record_send_total{")
                and 'client_id="telemetry-producer"' in line]
        assert sent and "client_instance_id=" in sent[0], sent
        # Only what the subscription asked for: no consumer metrics were pushed.
        assert "org_apache_kafka_consumer_" not in text
        producer.stdin.close()
        assert producer.wait(timeout=WAIT_S) == 0, producer.stderr.read() if producer.stderr else ""
    finally:
        if producer.poll() is None:
            producer.kill()
            producer.wait()
    # Closing, the producer pushed one last time saying it terminates: its series are gone.
    _wait_scrape(http_port, "the closed producer's series removed",
                 lambda t: 'client_id="telemetry-producer"' not in t)


def _subscriptions(conn: RawConnection, instance: uuid.UUID = NO_INSTANCE) -> dict[str, Any]:
    return conn.request(GET_SUBSCRIPTIONS, 0, {"client_instance_id": instance})


def _push(conn: RawConnection, answer: dict[str, Any], payload: bytes, **fields: Any) -> int:
    body = {"client_instance_id": answer["client_instance_id"], "subscription_id": answer["subscription_id"],
            "terminating": False, "compression_type": 0, "metrics": payload, **fields}
    return conn.request(PUSH, 0, body)["error_code"]


def _metrics_data(series: int) -> bytes:
    data = metrics_pb2.MetricsData()
    scope = data.resource_metrics.add().scope_metrics.add()
    for i in range(series):
        metric = scope.metrics.add(name=f"org.apache.kafka.test.series{i}")
        point = metric.gauge.data_points.add(as_double=float(i))
        point.attributes.append(common_pb2.KeyValue(key="node.id", value=common_pb2.AnyValue(string_value="1")))
    return data.SerializeToString()


def _push_when_due(conn: RawConnection, answer: dict[str, Any], payload: bytes) -> int:
    """Push, again while the broker says it is too early (half the push interval must pass)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        code = _push(conn, answer, payload)
        if code != ErrorCode.THROTTLING_QUOTA_EXCEEDED or time.monotonic() > deadline:
            return code
        time.sleep(0.02)


def test_telemetry_requests_and_their_errors(broker_factory: BrokerFactory) -> None:
    broker, http_port = _telemetry_broker(broker_factory, **{"pykafkad.client.telemetry.max.series": "5",
                                                              "telemetry.max.bytes": "2000"})
    with RawConnection(broker.port) as conn:
        _, versions = conn.api_versions()
        assert versions[GET_SUBSCRIPTIONS] == (0, 0) and versions[PUSH] == (0, 0)
        # No subscription fits: nothing is asked for, every five minutes.
        none = _subscriptions(conn)
        assert none["error_code"] == 0 and none["client_instance_id"] != NO_INSTANCE
        assert (none["requested_metrics"], none["push_interval_ms"]) == ([], 300000)
        assert none["telemetry_max_bytes"] == 2000

        _subscribe(broker, "raw-everything", "--metrics", "*", "--interval", "100")
        answer = _subscriptions(conn, none["client_instance_id"])
        assert answer["client_instance_id"] == none["client_instance_id"]
        assert (answer["requested_metrics"], answer["push_interval_ms"]) == (["*"], 100)
        assert answer["subscription_id"] != none["subscription_id"]

        assert _push(conn, none, _metrics_data(1)) == ErrorCode.UNKNOWN_SUBSCRIPTION_ID
        assert _push(conn, answer, _metrics_data(1), client_instance_id=NO_INSTANCE) == ErrorCode.INVALID_REQUEST
        assert _push(conn, answer, _metrics_data(1)) == ErrorCode.THROTTLING_QUOTA_EXCEEDED
        assert _push(conn, answer, _metrics_data(1), compression_type=1,
                     terminating=True) == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
        assert _push(conn, answer, b"x" * 2001, terminating=True) == ErrorCode.TELEMETRY_TOO_LARGE

        # Eight series pushed, five kept (the bound), three counted as dropped.
        assert _push_when_due(conn, answer, _metrics_data(8)) == ErrorCode.NONE
        text = _scrape(http_port)
        kept = [line for line in text.splitlines() if line.startswith("org_apache_kafka_test_series")]
        assert len(kept) == 5 and all('node_id="1"' in line for line in kept), kept
        assert "pykafkad_client_telemetry_dropped_series 3.0" in text

        # Names no Prometheus series may take, or the broker's own, are left out; /metrics still renders.
        bad = metrics_pb2.MetricsData()
        scope = bad.resource_metrics.add().scope_metrics.add()
        for name in ("", "9lives", "pykafkad_client_telemetry_dropped_series", "org.apache.kafka.test.series0"):
            point = scope.metrics.add(name=name).gauge.data_points.add(as_double=42.0)
            point.attributes.append(common_pb2.KeyValue(key="", value=common_pb2.AnyValue(string_value="x")))
        assert _push_when_due(conn, answer, bad.SerializeToString()) == ErrorCode.NONE
        text = _scrape(http_port)
        instance = answer["client_instance_id"]
        assert [line for line in text.splitlines() if " 42.0" in line] == [
            f'org_apache_kafka_test_series0{{client_id="compat-raw",client_instance_id="{instance}"}} 42.0']

        assert _push(conn, answer, b"", terminating=True) == ErrorCode.NONE
        assert "org_apache_kafka_test_series" not in _scrape(http_port)


def test_telemetry_is_not_served_without_metrics_listener(broker: BrokerProcess) -> None:
    with RawConnection(broker.port) as conn:
        _, versions = conn.api_versions()
        assert GET_SUBSCRIPTIONS not in versions and PUSH not in versions
        assert _subscriptions(conn)["error_code"] == ErrorCode.UNSUPPORTED_VERSION
