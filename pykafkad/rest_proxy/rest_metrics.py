"""The REST proxy's metrics (in the broker's /metrics, and the proxy's own): requests by endpoint
and status with their latency, consumer instances alive, and records through HTTP."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

REQUESTS = Counter("pykafkad_rest_requests", "REST proxy requests answered", ["method", "endpoint", "status"])
LATENCY = Histogram("pykafkad_rest_request_seconds", "REST proxy request latency", ["method", "endpoint"])
CONSUMER_INSTANCES = Gauge("pykafkad_rest_consumer_instances", "v2 consumer instances alive on this proxy")
RECORDS_PRODUCED = Counter("pykafkad_rest_records_produced", "Records produced through the REST proxy", ["topic"])
RECORDS_CONSUMED = Counter("pykafkad_rest_records_consumed", "Records read through the REST proxy", ["topic"])
