"""The schema registry in each broker of a three-broker cluster (issue 29): the registries elect
one primary through their consumer group, the others forward writes to it, and ``_schemas`` has
replication factor 3.  kill -9 of the broker whose registry is primary: another registry takes
the writes once the group has dropped the dead member, no schema id is handed out twice, and every
surviving registry serves every schema.

Three brokers on a real ZooKeeper; the registries are reached over HTTP as Confluent's clients
reach them.  Every wait is on an answer (a metric, a schema served), never a fixed sleep.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

import pytest

from cluster_tests.conftest import Cluster
from cluster_tests.znode_watch import ZooKeeperView
from compat_tests.broker_process import free_port
from compat_tests.storage_support import wait_for

SETTINGS = {"offsets.topic.replication.factor": "3", "transaction.state.log.replication.factor": "3",
            "transaction.state.log.min.isr": "2", "min.insync.replicas": "2"}


def _call(url: str, method: str = "GET", body: Any = None) -> tuple[int, Any]:
    request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")
    except OSError as e:
        return 0, str(e)


def _primary(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/metrics", timeout=10) as answer:
            found = re.search(r"^pykafkad_schema_registry_primary (\S+)$", answer.read().decode(), re.M)
    except OSError:
        return False
    return found is not None and float(found.group(1)) == 1


def _schema(name: str) -> dict[str, Any]:
    return {"schema": json.dumps({"type": "record", "name": name, "fields": [{"name": "n", "type": "int"}]})}


@pytest.mark.cluster_timeout(300)
def test_the_primary_broker_killed_another_registry_takes_the_writes_and_no_id_is_reused(cluster: Cluster) -> None:
    urls = {}
    for node_id in (1, 2, 3):
        urls[node_id] = f"http://127.0.0.1:{free_port()}"
        cluster.start_broker(node_id, {**SETTINGS, "schema.registry.listener": urls[node_id]})
    view = ZooKeeperView(cluster.zk_connect)
    try:
        view.wait_children("/brokers/ids", lambda live: live == ["1", "2", "3"])
        # A registry starts once _schemas can be read, which needs the three brokers.
        for url in urls.values():
            wait_for(f"{url} answers", lambda u=url: _call(u + "/subjects")[0] == 200, timeout=90)
        wait_for("one primary", lambda: sum(_primary(u) for u in urls.values()) == 1, timeout=90)
        [primary] = [n for n, u in urls.items() if _primary(u)]
        assert len(view.json("/brokers/topics/_schemas")["partitions"]["0"]) == 3

        ids: dict[str, int] = {}
        for node_id, url in urls.items():
            status, body = _call(f"{url}/subjects/before-{node_id}-value/versions", "POST", _schema(f"Before{node_id}"))
            assert status == 200, (url, body)
            ids[f"before-{node_id}"] = body["id"]

        cluster.brokers[primary].kill9()
        survivors = {n: u for n, u in urls.items() if n != primary}
        # The group drops the dead member after its session timeout; one survivor is then primary.
        wait_for("a new primary", lambda: sum(_primary(u) for u in survivors.values()) == 1, timeout=120)
        for node_id, url in survivors.items():
            status, body = _call(f"{url}/subjects/after-{node_id}-value/versions", "POST", _schema(f"After{node_id}"))
            assert status == 200, (url, body)
            ids[f"after-{node_id}"] = body["id"]
        assert len(set(ids.values())) == len(ids), ids

        for url in survivors.values():
            for subject, schema_id in ids.items():
                wait_for(f"id {schema_id} on {url}", lambda u=url, s=schema_id: _call(f"{u}/schemas/ids/{s}")[0] == 200,
                         timeout=30)
                assert json.loads(_call(f"{url}/schemas/ids/{schema_id}")[1]["schema"])["name"] == \
                    subject.replace("before-", "Before").replace("after-", "After")
    finally:
        view.close()
