"""Client telemetry (KIP-714): the clients that asked for their metrics subscription, what each was
told to push, and the metrics they pushed, shown on the broker's own ``/metrics``.

A client asks with GetTelemetrySubscriptions which of its metrics to push and how often: the
CLIENT_METRICS subscriptions (``kafka-client-metrics.sh``, ``pykafkad.client_metrics``) whose
``match`` patterns fit it decide, by its client instance id, client id, software name and
version (from its ApiVersions) and source address and port.  It then pushes OpenTelemetry
``MetricsData`` with PushTelemetry.  Kafka hands pushed metrics to a plugin; pykafkad keeps the
latest value of each pushed series and ``TelemetryCollector`` renders them beside the broker's,
labelled ``client_id`` and ``client_instance_id``, so what a client sees (its lag, its request
latency, its errors) is scraped with the broker.  The number of series kept is bounded
(``pykafkad.client.telemetry.max.series``), and a client's series go when it says it is terminating
or stops pushing for three of its intervals.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from pykafkad.client_metrics import INTERVAL_MS, MATCH, METRICS
from pykafkad.errors import KafkaError
from pykafkad.regular_expression import whole_name_matcher
from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig
    from pykafkad.metadata.cluster_metadata import ClusterMetadata

log = logging.getLogger(__name__)

DEFAULT_PUSH_INTERVAL_MS = 300_000
ALL_METRICS = "*"
NO_INSTANCE = uuid.UUID(int=0)
# A push earlier than this share of its interval is refused (clients jitter their pushes).
EARLIEST_PUSH_SHARE = 0.5
# Intervals without a push after which a client's series are dropped.
STALE_INTERVALS = 3

_PROMETHEUS_NAME = re.compile(r"[^a-zA-Z0-9_]")
# Names a client may not take: the broker's own metric families, and Prometheus' reserved labels.
_RESERVED_PREFIXES = ("kafka_", "pykafkad_", "python_", "process_", "__")
# How often the table of client instances is swept for the stale ones, at most.
SWEEP_INTERVAL_S = 1.0


@dataclass(frozen=True)
class ClientIdentity:
    """What a subscription's ``match`` patterns test."""

    client_id: str
    software_name: str
    software_version: str
    source_address: str
    source_port: str

    def properties(self, instance_id: uuid.UUID) -> dict[str, str]:
        return {"client_instance_id": str(instance_id), "client_id": self.client_id,
                "client_software_name": self.software_name, "client_software_version": self.software_version,
                "client_source_address": self.source_address, "client_source_port": self.source_port}


@dataclass
class ClientInstance:
    identity: ClientIdentity
    subscription_id: int
    push_interval_ms: int
    last_request_s: float
    # The latest pushed value of each series: (metric name, labels) -> value.
    series: dict[tuple[str, tuple[tuple[str, str], ...]], float] = field(default_factory=dict)


class ClientTelemetry:
    """The client instances known to this broker and their pushed metrics."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata) -> None:
        self.metadata = metadata
        self.max_bytes: int = config["telemetry.max.bytes"]
        self.max_series: int = config["pykafkad.client.telemetry.max.series"]
        self.instances: dict[uuid.UUID, ClientInstance] = {}
        self.dropped_series = 0
        self._swept_s = 0.0

    # -- GetTelemetrySubscriptions -----------------------------------------------------------------

    def _matching(self, identity: ClientIdentity, instance_id: uuid.UUID) -> list[tuple[str, dict[str, str]]]:
        properties = identity.properties(instance_id)
        matched = []
        for name, configs in sorted(self.metadata.client_metrics.items()):
            if all(_matches(entry, properties) for entry in _entries(configs.get(MATCH, ""))):
                matched.append((name, configs))
        return matched

    def subscription(self, identity: ClientIdentity, instance_id: uuid.UUID) -> dict[str, object]:
        """The answer to GetTelemetrySubscriptions: a client without an instance id gets one."""
        if instance_id == NO_INSTANCE:
            instance_id = uuid.uuid4()
        self._make_room(instance_id)
        matched = self._matching(identity, instance_id)
        metrics: set[str] = set()
        for _, configs in matched:
            metrics.update(_entries(configs.get(METRICS, "")))
        requested = [ALL_METRICS] if ALL_METRICS in metrics else sorted(metrics)
        intervals = [int(configs.get(INTERVAL_MS) or DEFAULT_PUSH_INTERVAL_MS) for _, configs in matched]
        interval = min(intervals, default=DEFAULT_PUSH_INTERVAL_MS)
        # Changes whenever the subscriptions that fit the client change, so a push made under an
        # older one is told to ask again (UNKNOWN_SUBSCRIPTION_ID).
        subscription_id = zlib.crc32(repr((matched, str(instance_id))).encode()) & 0x7FFFFFFF
        known = self.instances.get(instance_id)
        self.instances[instance_id] = ClientInstance(identity, subscription_id, interval, time.monotonic(),
                                                     known.series if known is not None else {})
        return {"error_code": ErrorCode.NONE, "client_instance_id": instance_id, "subscription_id": subscription_id,
                "accepted_compression_types": [], "push_interval_ms": interval,
                "telemetry_max_bytes": self.max_bytes, "delta_temporality": False, "requested_metrics": requested}

    # -- PushTelemetry -----------------------------------------------------------------------------

    def push(self, instance_id: uuid.UUID, subscription_id: int, terminating: bool, compression_type: int,
             metrics: bytes) -> None:
        """Take one push; KafkaError with Kafka's code when it is refused."""
        if instance_id == NO_INSTANCE:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid client instance id")
        instance = self.instances.get(instance_id)
        if instance is None or instance.subscription_id != subscription_id:
            raise KafkaError(ErrorCode.UNKNOWN_SUBSCRIPTION_ID, f"Unknown client subscription id for {instance_id}")
        now = time.monotonic()
        if not terminating and now - instance.last_request_s < EARLIEST_PUSH_SHARE * instance.push_interval_ms / 1000:
            raise KafkaError(ErrorCode.THROTTLING_QUOTA_EXCEEDED, "Request received within push interval")
        if compression_type != 0:
            raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, "Compression type not accepted")
        if len(metrics) > self.max_bytes:
            raise KafkaError(ErrorCode.TELEMETRY_TOO_LARGE, f"Telemetry of {len(metrics)} bytes is larger than "
                             f"telemetry.max.bytes ({self.max_bytes})")
        instance.last_request_s = now
        if terminating:
            # The client is closing: its series leave with it.
            del self.instances[instance_id]
            return
        # protobuf and the OpenTelemetry messages are about 70 ms of a broker's start: loaded at the
        # first push.
        from google.protobuf.message import DecodeError

        try:
            series = _decode(metrics)
        except DecodeError as e:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"Unreadable metrics: {e}") from None
        room = self.max_series - sum(len(i.series) for k, i in self.instances.items() if k != instance_id)
        if len(series) > room:
            self.dropped_series += len(series) - max(room, 0)
            log.warning("client %s pushed %d metric series, %d kept: pykafkad.client.telemetry.max.series=%d "
                        "is reached", instance.identity.client_id, len(series), max(room, 0), self.max_series)
            series = dict(list(series.items())[:max(room, 0)])
        instance.series = series

    def forget_stale(self) -> None:
        now = time.monotonic()
        self._swept_s = now
        for instance_id, instance in list(self.instances.items()):
            if now - instance.last_request_s > STALE_INTERVALS * instance.push_interval_ms / 1000:
                del self.instances[instance_id]

    def _make_room(self, instance_id: uuid.UUID) -> None:
        """Clients that ask and never push, or make up instance ids, must not grow the table without
        bound: the stale go (at most once a second), and beyond the series bound the least recently
        heard-from client makes room."""
        if time.monotonic() - self._swept_s >= SWEEP_INTERVAL_S:
            self.forget_stale()
        if instance_id not in self.instances and len(self.instances) >= max(self.max_series, 1):
            oldest = min(self.instances, key=lambda k: self.instances[k].last_request_s)
            del self.instances[oldest]

    def snapshot(self) -> list[tuple[str, dict[str, str], float]]:
        """Every kept series with its labels, read on the event loop for a scrape."""
        self.forget_stale()
        out = []
        for instance_id, instance in self.instances.items():
            base = {"client_id": instance.identity.client_id, "client_instance_id": str(instance_id)}
            for (name, labels), value in instance.series.items():
                out.append((name, {**dict(labels), **base}, value))
        return out


def _entries(value: str) -> list[str]:
    return [e.strip() for e in value.split(",") if e.strip()]


def _matches(entry: str, properties: dict[str, str]) -> bool:
    key, _, pattern = entry.partition("=")
    return whole_name_matcher(pattern.strip())(properties.get(key.strip(), ""))


def prometheus_name(name: str) -> str:
    """An OpenTelemetry metric name (``org.apache.kafka.producer.record.send.total``) as Prometheus spells it."""
    return _PROMETHEUS_NAME.sub("_", name)


def _decode(payload: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The latest value of each gauge and sum data point of an OpenTelemetry ``MetricsData``."""
    from opentelemetry.proto.metrics.v1 import metrics_pb2

    data = metrics_pb2.MetricsData()
    data.ParseFromString(payload)
    series: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                kind = metric.WhichOneof("data")
                if kind not in ("gauge", "sum"):
                    continue  # histograms and summaries: not kept
                name = prometheus_name(metric.name)
                if not _acceptable(name):
                    continue
                for point in getattr(metric, kind).data_points:
                    labels = tuple(sorted((label, _attribute(a.value)) for a in point.attributes
                                          if _acceptable(label := prometheus_name(a.key))
                                          and label not in ("client_id", "client_instance_id")))
                    value = point.as_double if point.WhichOneof("value") == "as_double" else float(point.as_int)
                    series[(name, labels)] = value
    return series


def _acceptable(name: str) -> bool:
    """A name Prometheus takes and the broker's own metrics do not use."""
    return bool(name) and not name[0].isdigit() and not name.startswith(_RESERVED_PREFIXES)


def _attribute(value: object) -> str:
    kind = value.WhichOneof("value")  # type: ignore[attr-defined]
    return str(getattr(value, kind)) if kind else ""


class TelemetryCollector(Collector):
    """Renders the snapshot ``refresh`` took on the event loop (a scrape renders in a thread)."""

    def __init__(self, telemetry: ClientTelemetry) -> None:
        self.telemetry = telemetry
        self._snapshot: list[tuple[str, dict[str, str], float]] = []

    def refresh(self) -> None:
        self._snapshot = self.telemetry.snapshot()

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families: dict[str, GaugeMetricFamily] = {}
        for name, labels, value in self._snapshot:
            family = families.get(name)
            if family is None:
                family = families[name] = GaugeMetricFamily(name, "Pushed by clients (KIP-714)")
            family.add_sample(name, labels, value)
        yield from families.values()
        dropped = GaugeMetricFamily(
            "pykafkad_client_telemetry_dropped_series",
            "Pushed client metric series not kept: pykafkad.client.telemetry.max.series reached")
        dropped.add_metric([], self.telemetry.dropped_series)
        yield dropped
