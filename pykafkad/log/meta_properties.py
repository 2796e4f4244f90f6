"""``meta.properties`` in each log dir: which broker and which cluster the data there belongs to.

Kafka writes it on first start and checks it on every start after, so that a data directory is
never taken over by another broker id (which would serve, and then lose, another broker's
replicas) or joined to another cluster.  pykafkad writes Kafka's ZooKeeper-mode layout (version
0: ``broker.id`` and ``cluster.id``) and reads KRaft's ``node.id`` too.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

META_PROPERTIES = "meta.properties"


class MetaPropertiesMismatch(Exception):
    """A log dir's meta.properties names another broker id or cluster id."""


def _read(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")) and "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def _write(path: Path, node_id: int, cluster_id: str) -> None:
    text = (f"#\n#{time.strftime('%a %b %d %H:%M:%S UTC %Y', time.gmtime())}\n"
            f"cluster.id={cluster_id}\nversion=0\nbroker.id={node_id}\n")
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def check_or_write(log_dirs: list[Path], node_id: int, cluster_id: str) -> None:
    """Check each log dir's meta.properties against this broker, writing it where it is missing;
    MetaPropertiesMismatch (with Kafka's message) when one names another broker or cluster."""
    for d in log_dirs:
        path = d / META_PROPERTIES
        if not path.exists():
            _write(path, node_id, cluster_id)
            continue
        stored = _read(path)
        stored_id = stored.get("broker.id", stored.get("node.id"))
        if stored_id is not None and stored_id != str(node_id):
            raise MetaPropertiesMismatch(
                f"Configured broker.id {node_id} doesn't match stored broker.id {stored_id} in {path}. If you "
                f"moved your data, make sure your configured broker.id matches. If you intend to create a new "
                f"broker, you should remove all data in your data directories (log.dirs).")
        stored_cluster = stored.get("cluster.id")
        if stored_cluster and stored_cluster != cluster_id:
            raise MetaPropertiesMismatch(
                f"The Cluster ID {cluster_id} doesn't match stored clusterId {stored_cluster} in {path}. The "
                f"broker is trying to join the wrong cluster. Configured zookeeper.connect may be wrong.")
