"""DescribeConfigs as Kafka reports it: `kafka-configs --describe --all` against pykafkad and
against a real Kafka 4.4.0 broker started with the same static settings.

For every config pykafkad describes, on a topic and on the broker, the value and the synonyms
(source, key and value, in order) must be what Kafka prints.  Each synonym's value is in its own
key's unit: `log.retention.hours=100`, never the 360000000 ms the topic's `retention.ms` holds.
Kafka lists a topic config's broker synonyms only from its most specific key on
(ConfigHelper.configSynonyms), so `log.retention.minutes` or `log.roll.hours` set alone show no
synonym at all, and with `log.retention.ms` set every retention key shows.  `broker.id` and
`node.id` agree, whichever of the two was set (KafkaConfig.populateSynonyms).

Two setups: the session's reference Kafka (minutes and hours without the ms keys), and a Kafka of
this module's own with all three units set and node id 2.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from compat_tests.broker_process import REFERENCE_KAFKA_MODULE, BrokerProcess
from compat_tests.clients import create_topic
from compat_tests.conftest import REFERENCE_OVERRIDES
from compat_tests.java_tools import run_tool

# (value, synonyms) of one config line, both as kafka-configs prints them.
Entry = tuple[str, str]
# "topic <name>" / "broker <id>" to that entity's configs.
View = dict[str, dict[str, Entry]]

HEADER = re.compile(r"^All configs for (?P<type>topic|broker) (?P<name>\S+) are:$")
ENTRY = re.compile(r"^\s+(?P<name>[^=\s]+)=(?P<value>.*) sensitive=(?:true|false) synonyms=\{(?P<synonyms>.*)\}$")
# Kafka runs broker and KRaft controller in one process, so its listeners carry the controller's.
CONTROLLER_LISTENER = re.compile(r",CONTROLLER://[^,\s]*")
# Configs pykafkad describes differently from Kafka, and why.
KNOWN_DIFFERENCES: dict[str, str] = {
    "min.insync.replicas": "Kafka 4.1's KRaft controller writes the cluster-wide min.insync.replicas as a "
                           "dynamic default config when it enables eligible leader replicas (KIP-966, "
                           "ConfigurationControlManager.maybeGenerateElrSafetyRecords); pykafkad has no "
                           "controller and no such record",
    **{key: "Kafka 4 has no ZooKeeper mode and dropped its keys (zookeeper.*, the controlled shutdown "
            "retries, the per-broker leader imbalance threshold); pykafkad keeps Kafka 3's, for its "
            "ZooKeeper cluster mode"
       for key in ("zookeeper.connect", "zookeeper.session.timeout.ms", "zookeeper.connection.timeout.ms",
                   "controlled.shutdown.max.retries", "controlled.shutdown.retry.backoff.ms",
                   "leader.imbalance.per.broker.percentage")},
    **{key: "the reference Kafka runs its KRaft controller on a listener of its own, so it is started with "
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT and "
            "inter.broker.listener.name=PLAINTEXT (compat_tests/reference_kafka.py); pykafkad has no "
            "controller listener and is given neither"
       for key in ("listener.security.protocol.map", "inter.broker.listener.name")},
    **{f"{prefix}.{part}.{key}": "broker-side schema validation (docs/schema-registry.md): Confluent Server's "
                                 "topic configs and pykafkad's own, which Apache Kafka does not have"
       for part in ("key", "value")
       for prefix, key in (("confluent", "schema.validation"), ("confluent", "subject.name.strategy"),
                           ("pykafkad", "schema.validation"))},
}
START_TIMEOUT_S = 120.0
# Settings each setup adds to both brokers; the reference Kafka also sets these
# (compat_tests.reference_kafka): one broker holds every copy of __consumer_offsets and
# __transaction_state.
BOTH = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1"}


@dataclass(frozen=True)
class Setup:
    """One set of static settings, given to pykafkad and to Kafka alike, and the topics created on each."""

    static: dict[str, str]
    node_id: str
    topics: dict[str, dict[str, str]]
    # What pykafkad is given instead of node.id, to check the id reaches both keys.
    pykafkad_id_key: str = "node.id"
    expected: dict[tuple[str, str], Entry] = field(default_factory=dict)


MINUTES = Setup(
    static=REFERENCE_OVERRIDES,
    node_id="1",
    topics={"described": {"retention.ms": "3600000", "cleanup.policy": "compact"}},
    expected={
        # log.retention.minutes and log.roll.hours alone: no synonym under the topic config.
        ("topic described", "retention.ms"): ("3600000", "DYNAMIC_TOPIC_CONFIG:retention.ms=3600000"),
        ("topic described", "segment.ms"): ("172800000", ""),
        ("topic described", "delete.retention.ms"): (
            "3600000", "STATIC_BROKER_CONFIG:log.cleaner.delete.retention.ms=3600000, "
            "DEFAULT_CONFIG:log.cleaner.delete.retention.ms=86400000"),
        ("broker 1", "log.retention.minutes"): (
            "6000", "STATIC_BROKER_CONFIG:log.retention.minutes=6000, DEFAULT_CONFIG:log.retention.hours=168"),
    },
)

EVERY_UNIT = Setup(
    static={
        "log.retention.ms": "360000000",
        "log.retention.minutes": "3000",
        "log.retention.hours": "100",
        "log.roll.ms": "7200000",
        "log.roll.hours": "48",
        "num.partitions": "1",
    },
    node_id="2",
    topics={"plain": {}, "overridden": {"retention.ms": "3600000", "segment.ms": "600000"}},
    # Kafka copies broker.id to node.id when only broker.id is set, as it does node.id to broker.id;
    # the reference Kafka is always given node.id, so both directions are checked against one answer.
    pykafkad_id_key="broker.id",
    expected={
        ("topic plain", "retention.ms"): (
            "360000000", "STATIC_BROKER_CONFIG:log.retention.ms=360000000, "
            "STATIC_BROKER_CONFIG:log.retention.minutes=3000, STATIC_BROKER_CONFIG:log.retention.hours=100, "
            "DEFAULT_CONFIG:log.retention.hours=168"),
        ("topic plain", "segment.ms"): (
            "7200000", "STATIC_BROKER_CONFIG:log.roll.ms=7200000, STATIC_BROKER_CONFIG:log.roll.hours=48, "
            "DEFAULT_CONFIG:log.roll.hours=168"),
        ("topic overridden", "retention.ms"): (
            "3600000", "DYNAMIC_TOPIC_CONFIG:retention.ms=3600000, "
            "STATIC_BROKER_CONFIG:log.retention.ms=360000000, STATIC_BROKER_CONFIG:log.retention.minutes=3000, "
            "STATIC_BROKER_CONFIG:log.retention.hours=100, DEFAULT_CONFIG:log.retention.hours=168"),
        ("broker 2", "log.retention.hours"): (
            "100", "STATIC_BROKER_CONFIG:log.retention.hours=100, DEFAULT_CONFIG:log.retention.hours=168"),
    },
)


def _parse(out: str) -> View:
    view: View = {}
    entity: dict[str, Entry] | None = None
    for line in out.splitlines():
        header = HEADER.match(line)
        if header:
            entity = view.setdefault(f"{header['type']} {header['name']}", {})
            continue
        m = ENTRY.match(line)
        if m and entity is not None:
            entity[m["name"]] = (m["value"], m["synonyms"])
    return view


def _describe(broker: BrokerProcess, *entity: str) -> View:
    out = run_tool("kafka-configs", ["--bootstrap-server", broker.bootstrap, "--describe", "--all", *entity]).stdout
    view = _parse(out)
    assert view and all(view.values()), out
    return view


def _normalised(view: View, broker: BrokerProcess) -> View:
    """The view without what differs between any two processes: port, log dir, controller listener."""
    def clean(text: str) -> str:
        text = CONTROLLER_LISTENER.sub("", text)
        return text.replace(f"127.0.0.1:{broker.port}", "127.0.0.1:PORT").replace(str(broker.log_dir), "LOG_DIR")
    return {entity: {name: (clean(value), clean(synonyms)) for name, (value, synonyms) in configs.items()}
            for entity, configs in view.items()}


def _view(broker: BrokerProcess, setup: Setup) -> View:
    """Create the setup's topics, then describe each topic and the broker, as kafka-configs prints them."""
    for topic, overrides in setup.topics.items():
        create_topic(broker.bootstrap, topic, config=overrides)
    describes = [("--entity-type", "topics", "--entity-name", topic) for topic in setup.topics]
    describes.append(("--entity-type", "brokers", "--entity-name", setup.node_id))
    # Each describe is a JVM start; two at a time halve the wait on two cores.
    with ThreadPoolExecutor(max_workers=2) as pool:
        views = list(pool.map(lambda args: _describe(broker, *args), describes))
    return _normalised({k: v for view in views for k, v in view.items()}, broker)


class BareBroker(BrokerProcess):
    """pykafkad with no properties file, only the overrides, as the reference Kafka is configured;
    without node.id when the setup names the broker by broker.id."""

    def __init__(self, log_dir: Path, overrides: dict[str, str], without_node_id: bool) -> None:
        super().__init__(log_dir, overrides, name="pykafkad")
        self.without_node_id = without_node_id

    def command(self) -> list[str]:
        cmd = super().command()
        del cmd[cmd.index("serve") + 1]
        if self.without_node_id:
            at = cmd.index("node.id=1")
            del cmd[at - 1:at + 1]
        return cmd


def _pykafkad_view(log_dir: Path, setup: Setup) -> View:
    overrides = {**setup.static, **BOTH, setup.pykafkad_id_key: setup.node_id}
    broker = BareBroker(log_dir, overrides, without_node_id=setup.pykafkad_id_key != "node.id").start()
    try:
        return _view(broker, setup)
    finally:
        broker.stop()


Views = tuple[Setup, View, View]  # a setup, pykafkad's view of it, Kafka's


@pytest.fixture(scope="module", params=["minutes", "every-unit"])
def views(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Views]:
    work = tmp_path_factory.mktemp(f"describe-configs-{request.param}")
    if request.param == "minutes":
        theirs = _view(request.getfixturevalue("reference_kafka"), MINUTES)
        yield MINUTES, _pykafkad_view(work / "pykafkad", MINUTES), theirs
        return
    kafka = BrokerProcess(work / "kafka", {**EVERY_UNIT.static, "node.id": EVERY_UNIT.node_id},
                          name="kafka-every-unit", module=REFERENCE_KAFKA_MODULE)
    kafka.start(timeout=START_TIMEOUT_S)
    try:
        theirs = _view(kafka, EVERY_UNIT)
    finally:
        kafka.close()
    yield EVERY_UNIT, _pykafkad_view(work / "pykafkad", EVERY_UNIT), theirs


def _mismatches(ours: View, theirs: View) -> str:
    """One paragraph per config whose value or synonyms differ: readable in a failure report."""
    return "\n".join(
        f"{entity} {name}:\n  pykafkad {entry}\n  kafka    {theirs.get(entity, {}).get(name)}"
        for entity, configs in sorted(ours.items()) for name, entry in sorted(configs.items())
        if name not in KNOWN_DIFFERENCES and entry != theirs.get(entity, {}).get(name))


def test_kafka_prints_what_the_setup_is_for(views: Views) -> None:
    """The setups show what they were chosen for: synonyms in hours and minutes, or none."""
    setup, _, theirs = views
    for (entity, name), expected in setup.expected.items():
        assert theirs[entity][name] == expected, (entity, name)


def test_configs_match_kafka(views: Views) -> None:
    setup, ours, theirs = views
    assert set(ours) == set(theirs) == {*(f"topic {t}" for t in setup.topics), f"broker {setup.node_id}"}
    problems = _mismatches(ours, theirs)
    assert not problems, problems


def test_broker_id_is_node_id(views: Views) -> None:
    setup, ours, theirs = views
    for view in (ours, theirs):
        broker = view[f"broker {setup.node_id}"]
        ids = broker["broker.id"], broker["node.id"]
        assert ids[0][0] == ids[1][0] == setup.node_id, ids
