"""The registry's Prometheus metrics: requests by endpoint and status (an ASGI wrapper around the
app), and, read from its state when scraped, the subjects, the schemas per type and how far the
registry is behind the end of its topic.  In the broker they are on the broker's ``/metrics``; the
standalone registry serves them at its own ``/metrics``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from prometheus_client import REGISTRY, Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from pykafkad.schema_registry.registry_state import RegistryState

log = logging.getLogger(__name__)

REQUESTS = Counter("pykafkad_schema_registry_requests", "Schema registry requests, by endpoint and HTTP status",
                   ["method", "endpoint", "status"])
FORWARDED = Counter("pykafkad_schema_registry_forwarded_requests",
                    "Writes this instance forwarded to the primary (primary_election)")


class StateCollector(Collector):
    """Gauges read from the registry's state at each scrape."""

    def __init__(self, state: RegistryState, lag: Any, is_primary: Any) -> None:
        self.state = state
        self.lag = lag  # a callable: records between the registry's position and its topic's end, or None
        self.is_primary = is_primary  # a callable

    def collect(self) -> Iterator[GaugeMetricFamily]:
        subjects = GaugeMetricFamily("pykafkad_schema_registry_subjects", "Subjects with a live version")
        subjects.add_metric([], len(self.state.subject_names()))
        yield subjects
        schemas = GaugeMetricFamily("pykafkad_schema_registry_schemas", "Schema ids held, by schema type",
                                    labels=["type"])
        counts = {"AVRO": 0, "JSON": 0, "PROTOBUF": 0}
        for version in self.state.by_id.values():
            counts[version.schema_type] = counts.get(version.schema_type, 0) + 1
        for schema_type, count in sorted(counts.items()):
            schemas.add_metric([schema_type], count)
        yield schemas
        primary = GaugeMetricFamily("pykafkad_schema_registry_primary",
                                    "1 while this instance is the primary that takes the writes")
        primary.add_metric([], 1 if self.is_primary() else 0)
        yield primary
        behind = self.lag()
        if behind is not None:
            lag = GaugeMetricFamily("pykafkad_schema_registry_lag_records",
                                    "Records of the registry's topic not read yet, as of the last fetch")
            lag.add_metric([], behind)
            yield lag


def register_collector(collector: StateCollector) -> bool:
    """Add the gauges to the process's metrics; False (one WARN line) if another registry in this
    process has them already."""
    try:
        REGISTRY.register(collector)
    except ValueError:
        log.warning("schema registry: another registry in this process reports the registry gauges; these are not")
        return False
    return True


def unregister_collector(collector: StateCollector) -> None:
    try:
        REGISTRY.unregister(collector)
    except KeyError:
        pass  # never registered
