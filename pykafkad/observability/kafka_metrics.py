"""The metrics the broker counts as it works, named as Prometheus's JMX exporter names Kafka's
MBeans (``kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=T`` becomes
``kafka_server_brokertopicmetrics_bytesin_total{topic="T"}``), so dashboards and alerts written
for Kafka read pykafkad too.

Each is counted once per request, batch or partition answer, never per record.  They live in
prometheus-client's process-wide registry: one broker per process, as in Kafka.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram, disable_created_metrics

# Kafka's exporter has no *_created series: leave them out, they double what a scrape carries.
disable_created_metrics()

# Request latency buckets in milliseconds, as Kafka reports request times.
_MS_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)

REQUESTS = Counter("kafka_network_requestmetrics_requests", "Requests handled, per API and version",
                   ["request", "version"])
ERRORS = Counter("kafka_network_requestmetrics_errors", "Error codes answered, per API and error",
                 ["request", "error"])
TOTAL_TIME = Histogram("kafka_network_requestmetrics_totaltimems",
                       "Request time from its last byte received to its response sent, ms", ["request"],
                       buckets=_MS_BUCKETS)
QUEUE_TIME = Histogram("kafka_network_requestmetrics_requestqueuetimems",
                       "Time from a request's last byte to its handler starting, ms", ["request"],
                       buckets=_MS_BUCKETS)
LOCAL_TIME = Histogram("kafka_network_requestmetrics_localtimems",
                       "Time the handler worked on the request itself, ms", ["request"], buckets=_MS_BUCKETS)
REMOTE_TIME = Histogram("kafka_network_requestmetrics_remotetimems",
                        "Time the request waited for others (acks=all replication, a fetch's long poll), ms",
                        ["request"], buckets=_MS_BUCKETS)
SEND_TIME = Histogram("kafka_network_requestmetrics_responsesendtimems", "Time sending the response, ms",
                      ["request"], buckets=_MS_BUCKETS)

MESSAGES_IN = Counter("kafka_server_brokertopicmetrics_messagesin", "Records appended as leader", ["topic"])
BYTES_IN = Counter("kafka_server_brokertopicmetrics_bytesin", "Record bytes appended from producers", ["topic"])
BYTES_OUT = Counter("kafka_server_brokertopicmetrics_bytesout", "Record bytes sent to consumers", ["topic"])
BYTES_REJECTED = Counter("kafka_server_brokertopicmetrics_bytesrejected", "Record bytes of refused produce requests",
                         ["topic"])
REPLICATION_BYTES_OUT = Counter("kafka_server_brokertopicmetrics_replicationbytesout",
                                "Record bytes sent to followers", ["topic"])
FAILED_PRODUCE = Counter("kafka_server_brokertopicmetrics_failedproducerequests",
                         "Partitions of produce requests answered with an error", ["topic"])
FAILED_FETCH = Counter("kafka_server_brokertopicmetrics_failedfetchrequests",
                       "Partitions of fetch requests answered with an error", ["topic"])

ISR_SHRINKS = Counter("kafka_server_replicamanager_isrshrinks", "ISR shrinks of partitions this broker leads")
ISR_EXPANDS = Counter("kafka_server_replicamanager_isrexpands", "ISR expansions of partitions this broker leads")

FAILED_AUTHENTICATIONS = Counter("kafka_server_socketservermetrics_failed_authentication",
                                 "Failed SASL authentications and TLS handshakes", ["listener"])
SUCCESSFUL_AUTHENTICATIONS = Counter("kafka_server_socketservermetrics_successful_authentication",
                                     "Successful SASL authentications", ["listener"])
CONNECTIONS_CLOSED = Counter("kafka_server_socketservermetrics_connection_close",
                             "Client connections closed (by either side, idle ones included)", ["listener"])

EVENT_LOOP_LAG = Histogram("pykafkad_event_loop_lag_seconds",
                           "How late the Trio event loop ran a task due now (sampled every 0.5 s)",
                           buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5))
SCHEMA_REFUSED = Counter("pykafkad_schema_validation_refused_records",
                         "Produced records refused by schema validation (topic configs *.schema.validation)",
                         ["topic"])
OFF_LOOP_SECONDS = Counter("pykafkad_rust_off_loop_seconds",
                           "Seconds the Rust log spent in worker threads, off the event loop", ["call"])
FETCHES_ANSWERED_BY_LOG = Counter("pykafkad_fetches_answered_by_log",
                                  "Parked fetches the log answered itself, before the event loop woke them: "
                                  "followers' by the append they waited for, consumers' by the high-watermark move",
                                  ["fetcher"])
SENDFILE_BYTES = Counter("pykafkad_network_sendfile_bytes",
                         "Record bytes sent from log segment files straight to sockets (zero-copy fetch)")

# Series that exist from the start (at 0), so dashboards and alerts see them before the first event.
for _call in ("append", "read"):
    OFF_LOOP_SECONDS.labels(_call)
for _fetcher in ("follower", "consumer"):
    FETCHES_ANSWERED_BY_LOG.labels(_fetcher)


_TOPIC_COUNTERS = (MESSAGES_IN, BYTES_IN, BYTES_OUT, BYTES_REJECTED, REPLICATION_BYTES_OUT, FAILED_PRODUCE,
                   FAILED_FETCH, SCHEMA_REFUSED)


# Children looked up once: ``labels()`` takes a lock and hashes its labels on every call.
_CHILDREN: dict[tuple[int, str], Counter] = {}
_REQUEST_CHILDREN: dict[tuple[str, int], Counter] = {}


def for_topic(counter: Counter, topic: str) -> Counter:
    """``counter``'s series for ``topic``."""
    key = (id(counter), topic)
    child = _CHILDREN.get(key)
    if child is None:
        child = _CHILDREN[key] = counter.labels(topic)
    return child


def requests_of(api: str, version: int) -> Counter:
    """The requests counter of ``api`` at ``version``."""
    child = _REQUEST_CHILDREN.get((api, version))
    if child is None:
        child = _REQUEST_CHILDREN[(api, version)] = REQUESTS.labels(api, str(version))
    return child


def forget_topic(topic: object) -> None:
    """A deleted topic's series go with it (``topic`` is the removed TopicInfo)."""
    name = getattr(topic, "name", topic)
    for counter in _TOPIC_COUNTERS:
        _CHILDREN.pop((id(counter), name), None)
        try:
            counter.remove(name)
        except KeyError:
            pass  # never counted


def start_listener_series(listener: str) -> None:
    """The per-listener series of ``listener``, at 0 until something happens on it."""
    FAILED_AUTHENTICATIONS.labels(listener)
    SUCCESSFUL_AUTHENTICATIONS.labels(listener)
    CONNECTIONS_CLOSED.labels(listener)
