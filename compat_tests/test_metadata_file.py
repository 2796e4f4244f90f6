"""A single broker keeps its cluster metadata as Kafka's znodes in a file, and reads the file of an
earlier pykafkad unchanged.

Before the metadata store, pykafkad wrote one JSON document (cluster id, producer id block,
dynamic broker configs, topics with partitions).  A data directory with such a file must start
with the same cluster id, topic ids, configs and records, and the file is then kept as znodes.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

from confluent_kafka import TopicCollection
from confluent_kafka.admin import AdminClient, ConfigResource

from compat_tests.clients import ConfluentClient, Rec, create_topic, unique_topic
from pykafkad.metadata.znodes import decode_partition_state, parse_kafka_uuid

METADATA_FILE = "pykafkad-cluster-metadata.json"


def _legacy_document(znodes: dict[str, dict]) -> dict:
    """The document pykafkad wrote before the store, for the same cluster."""
    def data(path: str) -> dict:
        return json.loads(znodes[path]["data"])

    topics = []
    for path in sorted(znodes):
        parts = path.split("/")
        if len(parts) != 4 or parts[:3] != ["", "brokers", "topics"]:
            continue
        name = parts[3]
        assignment = data(path)
        partitions = []
        for index, replicas in sorted(assignment["partitions"].items(), key=lambda kv: int(kv[0])):
            state = decode_partition_state(znodes[f"{path}/partitions/{index}/state"]["data"].encode())
            partitions.append({"index": int(index), "leader": state.leader, "leader_epoch": state.leader_epoch,
                               "replicas": replicas, "isr": state.isr})
        topics.append({"name": name, "topic_id": str(parse_kafka_uuid(assignment["topic_id"])),
                       "internal": name.startswith("__"), "configs": data(f"/config/topics/{name}")["config"],
                       "partitions": partitions})
    return {"cluster_id": data("/cluster/id")["id"], "next_producer_id_block": 1000,
            "broker_configs": {"": {"log.retention.ms": "7200000"}}, "topics": topics}


def _topic_id(bootstrap: str, topic: str) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return str(admin.describe_topics(TopicCollection([topic]))[topic].result(timeout=30).topic_id)


def test_a_metadata_file_of_an_earlier_pykafkad_starts_unchanged(broker_factory) -> None:
    broker = broker_factory("legacy-metadata")
    topic = unique_topic("legacy")
    create_topic(broker.bootstrap, topic, partitions=2, config={"retention.ms": "86400000"})
    client = ConfluentClient(broker.bootstrap)
    offsets = client.produce(topic, [Rec(value=f"v{i}".encode(), partition=i % 2) for i in range(20)])
    before = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=30)
    topic_id = _topic_id(broker.bootstrap, topic)
    broker.stop()

    path = broker.log_dir / METADATA_FILE
    current = json.loads(path.read_text())
    assert current["format"] == "pykafkad-znodes/1"
    assert json.loads(current["znodes"][f"/brokers/topics/{topic}/partitions/1/state"]["data"])["leader"] == 1
    legacy = _legacy_document(current["znodes"])
    path.write_text(json.dumps(legacy))

    broker.start()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    after = admin.list_topics(timeout=30)
    assert after.cluster_id == before.cluster_id == legacy["cluster_id"]
    assert _topic_id(broker.bootstrap, topic) == topic_id
    got = [client.consume(topic, partition=p, count=10) for p in (0, 1)]
    assert sorted(r.offset for part in got for r in part) == sorted(offsets)
    assert sorted(r.value for part in got for r in part) == sorted(f"v{i}".encode() for i in range(20))
    described = admin.describe_configs([ConfigResource("topic", topic)])
    configs = next(iter(described.values())).result(timeout=30)
    assert configs["retention.ms"].value == "86400000"
    # The cluster-wide dynamic default shows in the broker's own config.
    broker_configs = admin.describe_configs([ConfigResource("broker", "1")])
    assert next(iter(broker_configs.values())).result(timeout=30)["log.retention.ms"].value == "7200000"
    # The file is kept as znodes from the first change on (the controller epoch at start).
    assert json.loads(path.read_text())["format"] == "pykafkad-znodes/1"


def test_topics_created_at_once_by_many_clients_all_survive_kill_9(broker_factory) -> None:
    """The file is written off the event loop, one change at a time: CreateTopics from eight clients at
    once, each answered, are all in the file after kill -9, with their partitions and configs, and
    the file is whole JSON."""
    broker = broker_factory("concurrent-creates")
    names = [unique_topic(f"burst{i}") for i in range(40)]

    def create(i: int) -> None:
        create_topic(broker.bootstrap, names[i], partitions=1 + i % 3, config={"retention.ms": str(60000 + i)})

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(create, range(len(names))))
    broker.kill9()

    znodes = json.loads((broker.log_dir / METADATA_FILE).read_text())["znodes"]
    for i, name in enumerate(names):
        assert len(json.loads(znodes[f"/brokers/topics/{name}"]["data"])["partitions"]) == 1 + i % 3, name
    broker.start()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    listed = admin.list_topics(timeout=30).topics
    assert all(len(listed[name].partitions) == 1 + i % 3 for i, name in enumerate(names))
    described = admin.describe_configs([ConfigResource("topic", name) for name in names])
    assert sorted(int(f.result(timeout=30)["retention.ms"].value) for f in described.values()) == \
        [60000 + i for i in range(len(names))]
