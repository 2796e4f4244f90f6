"""Client quotas as Kafka has them: ``kafka-configs --entity-type users|clients`` sets and shows them
(DescribeClientQuotas, AlterClientQuotas), they survive a restart and live beside a user's SCRAM
credentials, bad input gets Kafka's errors, and a producer or consumer over its byte rate is held
to it (``throttle_time_ms`` in the response, the connection muted meanwhile).

The throttling tests run a broker with a short quota window (``quota.window.num=2``), so a client
is held to its rate after about a second rather than Kafka's default eleven.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient

import wire
from compat_tests.broker_process import BrokerProcess
from compat_tests.clients import create_topic
from compat_tests.java_tools import run_tool
from compat_tests.raw_kafka import RawConnection, produce_body, produce_partition_response, record_batch
from pykafkad.quota.client_quota import quota_for
from pykafkad.quota.entity import QuotaEntity

DESCRIBE_CLIENT_QUOTAS, ALTER_CLIENT_QUOTAS = 48, 49
INVALID_REQUEST, UNSUPPORTED_VERSION = 42, 35
EXACT, DEFAULT, ANY = 0, 1, 2
RATE = 400_000  # bytes/s for the throttling tests
WINDOW_ALLOWANCE_S = 1  # (quota.window.num - 1) x quota.window.size.seconds
RUN_S = 7.5  # seconds of data at RATE: several windows
SCRAM_USER = "quota-bob"


@pytest.fixture(scope="module")
def quota_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    broker = BrokerProcess(tmp_path_factory.mktemp("quotas") / "logs", {
        "quota.window.num": "2", "quota.window.size.seconds": "1", "auto.create.topics.enable": "false",
    }, name="quotas")
    broker.start()
    yield broker
    broker.close()


def configs(broker: BrokerProcess, *args: str) -> str:
    return run_tool("kafka-configs", ["--bootstrap-server", broker.bootstrap, *args]).stdout


def entity(user: Any = "-", client_id: Any = "-") -> list[dict[str, Any]]:
    """A wire entity: a name, None for the default, "-" for not part of it."""
    out = []
    if user != "-":
        out.append({"entity_type": "user", "entity_name": user})
    if client_id != "-":
        out.append({"entity_type": "client-id", "entity_name": client_id})
    return out


def alter(broker: BrokerProcess, entries: list[tuple[list[dict[str, Any]], dict[str, float | None]]],
          validate_only: bool = False, version: int = 1) -> list[dict[str, Any]]:
    body = {"validate_only": validate_only, "entries": [
        {"entity": ent, "ops": [{"key": k, "value": 0.0 if v is None else v, "remove": v is None}
                                for k, v in ops.items()]} for ent, ops in entries]}
    with RawConnection(broker.port) as conn:
        return conn.request(ALTER_CLIENT_QUOTAS, version, body)["entries"]


def describe(broker: BrokerProcess, components: list[tuple[str, int, str | None]], strict: bool = False,
             version: int = 1) -> dict[str, Any]:
    body = {"strict": strict, "components": [{"entity_type": t, "match_type": m, "match": n}
                                             for t, m, n in components]}
    with RawConnection(broker.port) as conn:
        return conn.request(DESCRIBE_CLIENT_QUOTAS, version, body)


def described(response: dict[str, Any]) -> dict[tuple, dict[str, float]]:
    """{((type, name), ...): {key: value}} of a DescribeClientQuotas response."""
    assert response["error_code"] == 0, response
    return {tuple(sorted((e["entity_type"], e["entity_name"]) for e in entry["entity"])):
            {v["key"]: v["value"] for v in entry["values"]} for entry in response["entries"]}


def test_kafka_configs_sets_and_shows_quotas_and_a_restart_keeps_them(quota_broker: BrokerProcess) -> None:
    tag = uuid.uuid4().hex[:6]
    client, user = f"app-{tag}", f"carol-{tag}"
    configs(quota_broker, "--alter", "--entity-type", "clients", "--entity-name", client,
            "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152")
    configs(quota_broker, "--alter", "--entity-type", "users", "--entity-name", user,
            "--add-config", "request_percentage=50.5")
    configs(quota_broker, "--alter", "--entity-type", "users", "--entity-name", user, "--entity-type", "clients",
            "--entity-name", client, "--add-config", "producer_byte_rate=4096")
    configs(quota_broker, "--alter", "--entity-type", "users", "--entity-default",
            "--add-config", "consumer_byte_rate=999999")

    def check() -> None:
        out = configs(quota_broker, "--describe", "--entity-type", "clients", "--entity-name", client)
        assert f"client-id '{client}'" in out and "producer_byte_rate=1048576.0" in out, out
        assert "consumer_byte_rate=2097152.0" in out, out
        out = configs(quota_broker, "--describe", "--entity-type", "users", "--entity-name", user,
                      "--entity-type", "clients", "--entity-name", client)
        assert "producer_byte_rate=4096.0" in out and "request_percentage" not in out, out
        out = configs(quota_broker, "--describe", "--entity-type", "users")
        assert f"user-principal '{user}'" in out and "request_percentage=50.5" in out, out
        assert "the default user-principal" in out and "consumer_byte_rate=999999.0" in out, out

    check()
    quota_broker.restart()
    check()
    configs(quota_broker, "--alter", "--entity-type", "clients", "--entity-name", client,
            "--delete-config", "producer_byte_rate")
    configs(quota_broker, "--alter", "--entity-type", "users", "--entity-default",
            "--delete-config", "consumer_byte_rate")
    got = described(describe(quota_broker, [("client-id", EXACT, client)], strict=True))
    assert got == {(("client-id", client),): {"consumer_byte_rate": 2097152.0}}
    assert described(describe(quota_broker, [("user", DEFAULT, None)], strict=True)) == {}


def test_quotas_and_scram_credentials_share_the_user_node(quota_broker: BrokerProcess) -> None:
    # kafka-configs alters credentials and quotas in separate commands (AlterUserScramCredentials, AlterClientQuotas).
    configs(quota_broker, "--alter", "--entity-type", "users", "--entity-name", SCRAM_USER,
            "--add-config", "SCRAM-SHA-256=[password=secret]")
    assert alter(quota_broker, [(entity(SCRAM_USER), {"producer_byte_rate": 2048})])[0]["error_code"] == 0
    admin = AdminClient({"bootstrap.servers": quota_broker.bootstrap})

    def scram_mechanisms() -> list[str]:
        try:
            found = admin.describe_user_scram_credentials([SCRAM_USER])[SCRAM_USER].result(30)
        except confluent_kafka.KafkaException:
            return []
        return [str(info.mechanism) for info in found.scram_credential_infos]

    assert scram_mechanisms() == ["ScramMechanism.SCRAM_SHA_256"]
    assert described(describe(quota_broker, [("user", EXACT, SCRAM_USER)], strict=True)) == {
        (("user", SCRAM_USER),): {"producer_byte_rate": 2048.0}}
    # A quota change leaves the credential, a credential change leaves the quota.
    assert alter(quota_broker, [(entity(SCRAM_USER), {"producer_byte_rate": None})])[0]["error_code"] == 0
    assert scram_mechanisms() == ["ScramMechanism.SCRAM_SHA_256"]
    assert alter(quota_broker, [(entity(SCRAM_USER), {"consumer_byte_rate": 512})])[0]["error_code"] == 0
    configs(quota_broker, "--alter", "--entity-type", "users", "--entity-name", SCRAM_USER,
            "--delete-config", "SCRAM-SHA-256")
    assert scram_mechanisms() == []
    assert described(describe(quota_broker, [("user", EXACT, SCRAM_USER)], strict=True)) == {
        (("user", SCRAM_USER),): {"consumer_byte_rate": 512.0}}


@pytest.mark.parametrize("version", [0, 1])
def test_describe_filters_match_as_kafka(quota_broker: BrokerProcess, version: int) -> None:
    tag = uuid.uuid4().hex[:6]
    u, c = f"u-{tag}", f"c-{tag}"
    results = alter(quota_broker, [
        (entity(u), {"producer_byte_rate": 100}),
        (entity(u, c), {"producer_byte_rate": 200}),
        (entity(u, None), {"request_percentage": 12.5}),
        (entity(None, c), {"consumer_byte_rate": 300}),
        (entity(client_id=c), {"controller_mutation_rate": 1.5}),
    ], version=version)
    assert [r["error_code"] for r in results] == [0] * 5
    assert results[1]["entity"] == entity(u, c)

    def got(components: list[tuple[str, int, str | None]], strict: bool = False) -> dict:
        found = described(describe(quota_broker, components, strict, version))
        # Other tests' entities may be there too: keep this test's.
        return {k: v for k, v in found.items() if any(tag in (name or "") for _, name in k)}

    assert got([("user", EXACT, u)], strict=True) == {(("user", u),): {"producer_byte_rate": 100.0}}
    assert got([("user", EXACT, u)]) == {
        (("user", u),): {"producer_byte_rate": 100.0},
        (("client-id", c), ("user", u)): {"producer_byte_rate": 200.0},
        (("client-id", None), ("user", u)): {"request_percentage": 12.5}}
    assert got([("user", EXACT, u), ("client-id", DEFAULT, None)]) == {
        (("client-id", None), ("user", u)): {"request_percentage": 12.5}}
    assert got([("user", EXACT, u), ("client-id", ANY, None)]) == {
        (("client-id", c), ("user", u)): {"producer_byte_rate": 200.0},
        (("client-id", None), ("user", u)): {"request_percentage": 12.5}}
    assert got([("client-id", EXACT, c)]) == {
        (("client-id", c), ("user", u)): {"producer_byte_rate": 200.0},
        (("client-id", c), ("user", None)): {"consumer_byte_rate": 300.0},
        (("client-id", c),): {"controller_mutation_rate": 1.5}}
    assert got([("client-id", EXACT, c)], strict=True) == {(("client-id", c),): {"controller_mutation_rate": 1.5}}
    assert got([("user", DEFAULT, None), ("client-id", EXACT, c)], strict=True) == {
        (("client-id", c), ("user", None)): {"consumer_byte_rate": 300.0}}
    # validate_only checks and changes nothing.
    assert alter(quota_broker, [(entity(u), {"producer_byte_rate": 7})], validate_only=True)[0]["error_code"] == 0
    assert alter(quota_broker, [(entity(u), {"nope": 7})], validate_only=True)[0]["error_code"] == INVALID_REQUEST
    assert got([("user", EXACT, u)], strict=True) == {(("user", u),): {"producer_byte_rate": 100.0}}
    # Removing every key removes the entity.
    alter(quota_broker, [(entity(u, c), {"producer_byte_rate": None})])
    assert got([("user", EXACT, u), ("client-id", EXACT, c)], strict=True) == {}


def test_bad_input_gets_kafkas_errors(quota_broker: BrokerProcess) -> None:
    cases: list[tuple[list[dict[str, Any]], dict[str, float | None], str | None]] = [
        (entity(client_id="x"), {"no_such_quota": 5}, "Invalid configuration key no_such_quota"),
        (entity(client_id="x2"), {"producer_byte_rate": -5}, "Quota producer_byte_rate must be greater than 0"),
        (entity(client_id="x3"), {"request_percentage": 0}, "Quota request_percentage must be greater than 0"),
        (entity(client_id="x4"), {"producer_byte_rate": 10.5}, "producer_byte_rate cannot be a fractional value."),
        (entity(client_id="x5"), {"consumer_byte_rate": 1, "consumer_byte_rate ": 2, "request_percentage": None},
         None),
        (entity(client_id="x"), {"producer_byte_rate": 1}, "Ignoring duplicate entity ClientQuotaEntity(client-id=x)"),
        (entity(client_id=""), {"producer_byte_rate": 10}, "Empty client-id not supported"),
        (entity(user=""), {"producer_byte_rate": 10}, "Empty user not supported"),
        ([], {"producer_byte_rate": 10}, "Invalid empty client quota entity"),
        ([{"entity_type": "group", "entity_name": "g"}], {"producer_byte_rate": 10},
         "Unhandled client quota entity type: group"),
        ([{"entity_type": "user", "entity_name": "a"}, {"entity_type": "user", "entity_name": "b"}],
         {"producer_byte_rate": 10}, "Invalid client quota entity, duplicate entity entry user"),
    ]
    results = alter(quota_broker, [(ent, ops) for ent, ops, _ in cases])
    for result, (ent, _, message) in zip(results, cases, strict=True):
        if message is None:
            assert result["error_code"] == INVALID_REQUEST, result  # "consumer_byte_rate " is no key
            continue
        assert (result["error_code"], result["error_message"], result["entity"]) == (INVALID_REQUEST, message, ent)
    # A bad entry fails alone: the good one beside it lands.
    tag = uuid.uuid4().hex[:6]
    mixed = alter(quota_broker, [(entity(client_id=f"ok-{tag}"), {"producer_byte_rate": 10}),
                                 (entity(client_id=f"bad-{tag}"), {"producer_byte_rate": 10, "bogus": 1})])
    assert [r["error_code"] for r in mixed] == [0, INVALID_REQUEST]
    assert set(described(describe(quota_broker, [("client-id", ANY, None)])).keys()) >= {
        (("client-id", f"ok-{tag}"),)}
    assert (("client-id", f"bad-{tag}"),) not in described(describe(quota_broker, [("client-id", ANY, None)]))
    for components, code, message in [
        ([("user", EXACT, None)], INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string to null"),
        ([("user", 7, None)], INVALID_REQUEST, "Unknown match type 7"),
        ([("user", ANY, None), ("user", DEFAULT, None)], INVALID_REQUEST,
         "Entity type user cannot appear more than once in the filter."),
        ([("topic", ANY, None)], UNSUPPORTED_VERSION, "Unsupported entity type topic"),
        ([("", ANY, None)], INVALID_REQUEST, "Invalid empty entity type."),
    ]:
        response = describe(quota_broker, components)
        assert (response["error_code"], response["error_message"], response["entries"]) == (code, message, None)
    # kafka-configs refuses what Kafka refuses, and the broker goes on serving.
    result = run_tool("kafka-configs", ["--bootstrap-server", quota_broker.bootstrap, "--alter", "--entity-type",
                                        "clients", "--entity-name", "x", "--add-config", "producer_byte_rate=-1"],
                      check=False)
    assert result.returncode != 0 and "must be greater than 0" in result.stdout + result.stderr
    assert quota_broker.is_alive()


# -- throttling ---------------------------------------------------------------------------------


def raw_produce(sock_conn: RawConnection, client_id: str, topic: str, size: int) -> dict[str, Any]:
    """A Produce v9 of one record of ``size`` bytes, sent with ``client_id``."""
    cid = sock_conn.correlation_id()
    batch = record_batch([b"x" * size], int(time.time() * 1000))
    sock_conn.send(wire.encode_request(0, 9, cid, client_id, produce_body(topic, 0, batch, acks=1)))
    frame = sock_conn.recv_frame()
    assert frame is not None
    got_cid, response = wire.decode_response(0, 9, frame)
    assert got_cid == cid
    return response


def test_produce_over_the_rate_is_told_its_throttle_time_and_muted(quota_broker: BrokerProcess) -> None:
    topic, client = f"q-raw-{uuid.uuid4().hex[:6]}", f"raw-{uuid.uuid4().hex[:6]}"
    create_topic(quota_broker.bootstrap, topic)
    assert alter(quota_broker, [(entity(client_id=client), {"producer_byte_rate": 100_000})])[0]["error_code"] == 0
    with RawConnection(quota_broker.port) as conn:
        # 250 KB against 100 KB/s over a window of at least one second: about 1.5 s over.
        first = raw_produce(conn, client, topic, 250_000)
        assert produce_partition_response(first)["error_code"] == 0
        assert 1000 <= first["throttle_time_ms"] <= 2000, first["throttle_time_ms"]
        # Muted: the next request is read only once the throttle time is over.
        began = time.monotonic()
        second = raw_produce(conn, client, topic, 10)
        assert time.monotonic() - began >= first["throttle_time_ms"] / 1000 * 0.9
        assert produce_partition_response(second)["error_code"] == 0
    # Another client id has no quota: not throttled.
    with RawConnection(quota_broker.port) as conn:
        assert raw_produce(conn, f"free-{client}", topic, 250_000)["throttle_time_ms"] == 0


CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS, METADATA = 19, 20, 37, 3
THROTTLING_QUOTA_EXCEEDED = 89


def as_client(broker: BrokerProcess, client_id: str, api_key: int, version: int, body: dict[str, Any]) -> dict:
    """One request with ``client_id``, on a connection of its own (a throttled one is muted after)."""
    with RawConnection(broker.port) as conn:
        cid = conn.correlation_id()
        conn.send(wire.encode_request(api_key, version, cid, client_id, body))
        frame = conn.recv_frame()
        assert frame is not None
        got_cid, response = wire.decode_response(api_key, version, frame)
        assert got_cid == cid
        return response


def creations(*topics: tuple[str, int]) -> dict[str, Any]:
    return {"topics": [{"name": name, "num_partitions": n, "replication_factor": 1, "assignments": [],
                        "configs": []} for name, n in topics], "timeout_ms": 30000, "validate_only": False}


def topic_exists(broker: BrokerProcess, name: str) -> bool:
    with RawConnection(broker.port) as conn:
        answer = conn.request(METADATA, 9, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
    return answer["topics"][0]["error_code"] == 0


def test_controller_mutation_rate_refuses_topics_once_its_bucket_is_empty(quota_broker: BrokerProcess) -> None:
    # 0.1 partitions/s with Kafka's burst of 11 windows: 1.1 partitions at first, then one per 10 s.
    client, old_client = f"mut-{uuid.uuid4().hex[:6]}", f"mut-old-{uuid.uuid4().hex[:6]}"
    a, b, c, d = (f"{client}-{x}" for x in "abcd")
    assert alter(quota_broker, [(entity(client_id=client), {"controller_mutation_rate": 0.1}),
                                (entity(client_id=old_client), {"controller_mutation_rate": 0.1})]
                 )[0]["error_code"] == 0
    # Strict (CreateTopics v6+): the first topic goes through on a full bucket and takes it below zero;
    # the next is refused, with the time until the bucket is back at zero.
    answer = as_client(quota_broker, client, CREATE_TOPICS, 7, creations((a, 8), (b, 1)))
    got = {t["name"]: (t["error_code"], t["error_message"]) for t in answer["topics"]}
    assert got == {a: (0, None), b: (THROTTLING_QUOTA_EXCEEDED, "The throttling quota has been exceeded.")}
    assert 60_000 < answer["throttle_time_ms"] <= 69_000, answer["throttle_time_ms"]
    assert topic_exists(quota_broker, a) and not topic_exists(quota_broker, b)
    # Deleting and adding partitions spend the same bucket.
    deleted = as_client(quota_broker, client, DELETE_TOPICS, 6, {
        "topics": [{"name": a, "topic_id": uuid.UUID(int=0)}], "timeout_ms": 30000})["responses"]
    assert deleted[0]["error_code"] == THROTTLING_QUOTA_EXCEEDED and topic_exists(quota_broker, a)
    grown = as_client(quota_broker, client, CREATE_PARTITIONS, 3, {
        "topics": [{"name": a, "count": 10, "assignments": None}], "timeout_ms": 30000, "validate_only": False})
    assert grown["results"][0]["error_code"] == THROTTLING_QUOTA_EXCEEDED and grown["throttle_time_ms"] > 60_000
    # Another client id has no quota; an existing topic is reported as existing, not throttled.
    free = as_client(quota_broker, f"free-{client}", CREATE_TOPICS, 7, creations((c, 20), (a, 1)))
    assert [t["error_code"] for t in free["topics"]] == [0, 36] and free["throttle_time_ms"] == 0
    # Permissive before v6 (the client cannot handle the error): both go through, the response is throttled.
    old = as_client(quota_broker, old_client, CREATE_TOPICS, 5, creations((f"{old_client}-x", 5),
                                                                          (f"{old_client}-y", 5)))
    assert [t["error_code"] for t in old["topics"]] == [0, 0]
    assert 80_000 < old["throttle_time_ms"] <= 89_000, old["throttle_time_ms"]
    # The quota removed: the client creates freely again.
    assert alter(quota_broker, [(entity(client_id=client), {"controller_mutation_rate": None})])[0]["error_code"] == 0
    deadline = time.monotonic() + 30
    while (again := as_client(quota_broker, client, CREATE_TOPICS, 7, creations((d, 3))))["topics"][0][
            "error_code"] == THROTTLING_QUOTA_EXCEEDED:
        assert time.monotonic() < deadline, again
        time.sleep(0.1)  # the broker's quota cache catches up with the removal
    assert again["topics"][0]["error_code"] == 0 and again["throttle_time_ms"] == 0


def held_rate(start: float, events: list[tuple[float, int]]) -> float:
    """Bytes per second from ``start`` to the last event, less the first window's allowance.

    The quota lets a new client send one window's worth at once (Kafka's rate counts at least
    ``quota.window.num - 1`` windows); after that it is held to the rate, in bursts as each old
    window expires, so the run spans several windows for the average to mean something.
    """
    total = sum(n for _, n in events)
    return (total - RATE * WINDOW_ALLOWANCE_S) / (events[-1][0] - start)


class ThrottleStats:
    """The largest broker throttle time librdkafka's statistics reported."""

    def __init__(self) -> None:
        self.max_ms = 0

    def __call__(self, text: str) -> None:
        for broker in json.loads(text).get("brokers", {}).values():
            self.max_ms = max(self.max_ms, broker.get("throttle", {}).get("max", 0))


def test_producer_is_held_to_its_byte_rate(quota_broker: BrokerProcess) -> None:
    topic, client = f"q-prod-{uuid.uuid4().hex[:6]}", f"producer-{uuid.uuid4().hex[:6]}"
    create_topic(quota_broker.bootstrap, topic)
    assert alter(quota_broker, [(entity(client_id=client), {"producer_byte_rate": RATE})])[0]["error_code"] == 0
    stats = ThrottleStats()
    producer = confluent_kafka.Producer({"bootstrap.servers": quota_broker.bootstrap, "client.id": client,
                                         "batch.size": 32768, "linger.ms": 5, "statistics.interval.ms": 200,
                                         "stats_cb": stats})
    events: list[tuple[float, int]] = []
    value = b"v" * 1000
    start = time.monotonic()
    for _ in range(int(RATE * RUN_S / len(value))):
        producer.produce(topic, value, partition=0,
                         on_delivery=lambda err, msg: events.append((time.monotonic(), len(msg.value()))))
    assert producer.flush(60) == 0
    producer.poll(0.5)  # one more statistics report
    rate = held_rate(start, events)
    # Unthrottled, the 3 MB come back in well under a second (over 10x RATE).  A throttled Fetch
    # returns nothing until the throttle ends, so the client's rate is a whole number of 64 KB
    # fetches per window: on 2 busy cores it was measured at 1.26x RATE once in 11 runs (and
    # Kafka's at 0.79x), hence the wider band than the producer's.
    assert 0.7 * RATE <= rate <= 1.5 * RATE, f"{rate:.0f} B/s against a quota of {RATE}"
    assert stats.max_ms > 0, "librdkafka saw no throttle time"


def test_consumer_is_held_to_its_byte_rate(quota_broker: BrokerProcess) -> None:
    topic, client = f"q-cons-{uuid.uuid4().hex[:6]}", f"consumer-{uuid.uuid4().hex[:6]}"
    create_topic(quota_broker.bootstrap, topic)
    count, value = int(RATE * RUN_S / 1000), b"v" * 1000
    # Batches well below one window's allowance (RATE x WINDOW_ALLOWANCE_S): a throttled Fetch is
    # answered empty, as by Kafka, so a batch bigger than that would be refused forever, as Kafka
    # refuses it (the whole first batch is always sent, KIP-74).
    producer = confluent_kafka.Producer({"bootstrap.servers": quota_broker.bootstrap, "batch.size": 65536})
    for _ in range(count):
        producer.produce(topic, value, partition=0)
    assert producer.flush(60) == 0
    assert alter(quota_broker, [(entity(client_id=client), {"consumer_byte_rate": RATE})])[0]["error_code"] == 0
    stats = ThrottleStats()
    consumer = confluent_kafka.Consumer({"bootstrap.servers": quota_broker.bootstrap, "client.id": client,
                                         "group.id": f"g-{client}", "enable.auto.commit": False,
                                         "max.partition.fetch.bytes": 65536, "statistics.interval.ms": 200,
                                         "stats_cb": stats})
    consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
    events: list[tuple[float, int]] = []
    start = time.monotonic()
    try:
        while len(events) < count:
            msg = consumer.poll(10)
            assert msg is not None, f"only {len(events)} of {count} records came back"
            assert msg.error() is None, msg.error()
            events.append((time.monotonic(), len(msg.value())))
        consumer.poll(0.5)
    finally:
        consumer.close()
    rate = held_rate(start, events)
    # Unthrottled, the 3 MB come back in well under a second (over 10x RATE).  A throttled Fetch
    # returns nothing until the throttle ends, so the client's rate is a whole number of 64 KB
    # fetches per window: on 2 busy cores it was measured at 1.26x RATE once in 11 runs (and
    # Kafka's at 0.79x), hence the wider band than the producer's.
    assert 0.7 * RATE <= rate <= 1.5 * RATE, f"{rate:.0f} B/s against a quota of {RATE}"
    assert stats.max_ms > 0, "librdkafka saw no throttle time"


def test_default_user_quota_holds_unauthenticated_clients(quota_broker: BrokerProcess) -> None:
    """A plaintext client is User:ANONYMOUS, which users/<default> covers (before any client id quota)."""
    topic, client = f"q-anon-{uuid.uuid4().hex[:6]}", f"anon-{uuid.uuid4().hex[:6]}"
    create_topic(quota_broker.bootstrap, topic)
    assert alter(quota_broker, [(entity(client_id=client), {"producer_byte_rate": 10_000_000}),
                                (entity(user=None), {"producer_byte_rate": 100_000})])[0]["error_code"] == 0
    try:
        with RawConnection(quota_broker.port) as conn:
            assert raw_produce(conn, client, topic, 250_000)["throttle_time_ms"] >= 1000
    finally:
        alter(quota_broker, [(entity(user=None), {"producer_byte_rate": None})])
    with RawConnection(quota_broker.port) as conn:
        assert raw_produce(conn, f"{client}-2", topic, 250_000)["throttle_time_ms"] == 0


def test_request_percentage_counts_handler_time(quota_broker: BrokerProcess) -> None:
    """request_percentage=0.0001 is a microsecond of handler time a second: a Metadata request or
    two use it up, and the client is told to wait (Metadata v12 backs off by itself, KIP-219)."""
    client = f"busy-{uuid.uuid4().hex[:6]}"
    assert alter(quota_broker, [(entity(client_id=client), {"request_percentage": 0.0001})])[0]["error_code"] == 0
    throttles = []
    with RawConnection(quota_broker.port) as conn:
        for _ in range(20):
            cid = conn.correlation_id()
            conn.send(wire.encode_request(3, 12, cid, client, {"topics": None, "allow_auto_topic_creation": False,
                                                               "include_topic_authorized_operations": False}))
            frame = conn.recv_frame()
            assert frame is not None
            throttles.append(wire.decode_response(3, 12, frame)[1]["throttle_time_ms"])
            if throttles[-1]:
                break
    assert throttles[-1] > 0, throttles
    # A client id without the quota is not held back by it.
    with RawConnection(quota_broker.port) as conn:
        assert conn.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                    "include_topic_authorized_operations": False})["throttle_time_ms"] == 0


def test_the_quota_of_a_request_is_found_in_kafkas_order() -> None:
    """The broker's lookup itself (no broker needed): each entity in Kafka's order wins over the
    ones after it, and says what usage is shared (the sensor's user and client id tags)."""
    order = [
        (QuotaEntity.of(user="u", client_id="c"), ("u", "c")),
        (QuotaEntity.of(user="u", client_id=None), ("u", "c")),
        (QuotaEntity.of(user="u"), ("u", "")),
        (QuotaEntity.of(user=None, client_id="c"), ("u", "c")),
        (QuotaEntity.of(user=None, client_id=None), ("u", "c")),
        (QuotaEntity.of(user=None), ("u", "")),
        (QuotaEntity.of(client_id="c"), ("", "c")),
        (QuotaEntity.of(client_id=None), ("", "c")),
    ]
    quotas = {ent: {"producer_byte_rate": float(rank)} for rank, (ent, _) in enumerate(order)}
    for rank, (ent, tags) in enumerate(order):
        assert quota_for(quotas, "producer_byte_rate", "u", "c") == (tags, float(rank)), ent
        del quotas[ent]
    assert quota_for(quotas, "producer_byte_rate", "u", "c") is None
    # Another user's or client id's quota is not this one's.
    other = {QuotaEntity.of(user="v"): {"producer_byte_rate": 1.0}, QuotaEntity.of(client_id="d"): {"x": 1.0}}
    assert quota_for(other, "producer_byte_rate", "u", "c") is None
