"""Replication over TLS, and over SASL_SSL: three brokers with a PLAINTEXT and an SSL (or SASL_SSL)
listener each and ``inter.broker.listener.name`` naming the secured one, so followers fetch from
leaders (and the coordinators' links run) over TLS, authenticated with SASL/PLAIN as the broker's
own user in the second case.  acks=all writes are acknowledged, which takes the followers'
fetches; each listener's clients are given that listener's endpoints; the registrations in
ZooKeeper list both endpoints with their security protocols, as Kafka's do."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from cluster_tests.clients import produce, read_everything
from cluster_tests.conftest import SESSION_TIMEOUT_MS, Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.broker_process import BrokerProcess, free_port
from compat_tests.certificates import Authority
from compat_tests.java_tools import run_tool

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" '
        'password="broker-secret" user_broker="broker-secret" user_alice="alice-secret";')


@pytest.mark.cluster_timeout(240)
@pytest.mark.parametrize("protocol", ["SSL", "SASL_SSL"])
def test_followers_replicate_over_tls(cluster: Cluster, tmp_path: Path, protocol: str) -> None:
    ca = Authority(tmp_path / "pki")
    ssl_ports: dict[int, int] = {}
    for node_id in (1, 2, 3):
        _, _, keystore = ca.issue(f"broker-{node_id}")
        broker = BrokerProcess(cluster.root / f"broker-{node_id}" / "logs", name=f"broker-{node_id}")
        ssl_ports[node_id] = free_port()
        listeners = f"PLAINTEXT://127.0.0.1:{broker.port},{protocol}://127.0.0.1:{ssl_ports[node_id]}"
        broker.overrides.update({
            "zookeeper.connect": cluster.zk_connect, "zookeeper.session.timeout.ms": SESSION_TIMEOUT_MS,
            "broker.id": str(node_id), "node.id": str(node_id), "listeners": listeners,
            "advertised.listeners": listeners, "inter.broker.listener.name": protocol,
            "ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore),
            "ssl.truststore.type": "PEM", "ssl.truststore.location": str(ca.cert_path)})
        if protocol == "SASL_SSL":
            broker.overrides.update({"sasl.enabled.mechanisms": "PLAIN",
                                     "sasl.mechanism.inter.broker.protocol": "PLAIN",
                                     "listener.name.sasl_ssl.plain.sasl.jaas.config": JAAS})
        cluster.brokers[node_id] = broker
        broker.start()
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda ids: ids == ["1", "2", "3"])
        registration = view.json("/brokers/ids/2")
        assert registration["endpoints"] == [f"PLAINTEXT://127.0.0.1:{cluster.brokers[2].port}",
                                             f"{protocol}://127.0.0.1:{ssl_ports[2]}"]
        assert registration["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT", protocol: protocol}
        assert registration["port"] == ssl_ports[2]

        run_tool("kafka-topics", ["--bootstrap-server", cluster.bootstrap, "--create", "--topic", "secure",
                                  "--replication-factor", "3", "--partitions", "3",
                                  "--config", "min.insync.replicas=3"])
        for p in range(3):
            view.wait_data(f"/brokers/topics/secure/partitions/{p}/state",
                           lambda s: s is not None and len(s["isr"]) == 3)
        secured = {"security.protocol": protocol, "ssl.ca.location": str(ca.cert_path)}
        if protocol == "SASL_SSL":
            secured.update({"sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"})
        ssl_client = {"bootstrap.servers": f"127.0.0.1:{ssl_ports[1]}", **secured}
        brokers = AdminClient(ssl_client).list_topics(timeout=30).brokers
        assert sorted(b.port for b in brokers.values()) == sorted(ssl_ports.values())
        # acks=all with every replica required: acknowledged only once both followers fetched it over TLS.
        acked = produce(f"127.0.0.1:{ssl_ports[1]}", "secure", list(range(600)), **secured)
        got = read_everything(cluster.bootstrap, "secure", 3, len(acked))
        assert {v: (p, o) for v, p, o in got} == acked
    finally:
        view.close()
