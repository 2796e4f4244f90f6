"""Observability: Prometheus metrics with Kafka's JMX-exporter names, and the health endpoints,
served over HTTP on ``metrics.listener``."""
