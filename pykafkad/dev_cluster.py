"""``make cluster``: ZooKeeper and three pykafkad brokers on 127.0.0.1, for a developer to try.

Starts ZooKeeper from ``<configs>/zookeeper.properties`` (the jars of ``make zookeeper-deps``), then
one broker per ``<configs>/broker-*.properties``, each logging to ``<data>/<name>.log``.  Everything
the cluster writes is under ``--data`` (``data/cluster`` by default): each process runs a copy of its
config written to ``<data>/configs``, in which a relative data path (ZooKeeper's ``dataDir``, a
broker's ``log.dirs``) names a directory under ``<data>`` by its last part, so
``log.dirs=./data/cluster/broker-1`` becomes ``<data>/broker-1``; absolute paths are kept.
Prints where each listens and what to try, then waits.  Ctrl-C (or SIGTERM) stops the brokers one
after another, each with a controlled shutdown, and then ZooKeeper, and exits 0 if every broker
stopped cleanly.  A process that fails to start stops the others, and its log's last lines are shown.

``--port-offset N`` runs the same configs with every port moved by N (ZooKeeper's clientPort, the
brokers' listeners, advertised listeners and zookeeper.connect): with another ``--data``, a second
cluster beside the first, or a test's cluster beside a developer's.

    python -m pykafkad.dev_cluster --configs configs/cluster --zookeeper-jars .cache/zookeeper/lib
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 60.0


def _properties(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            out[key.strip()] = value.strip()
    return out


# The keys whose values name ports, and how a port is found in them.
_PORT_KEYS = frozenset({"clientPort", "listeners", "advertised.listeners", "zookeeper.connect", "metrics.listener"})
_HOST_PORT = re.compile(r"(?<=:)(\d+)(?=$|[,/])")


def _shift_ports(key: str, value: str, offset: int) -> str:
    if key == "clientPort":
        return str(int(value) + offset)
    return _HOST_PORT.sub(lambda m: str(int(m.group(1)) + offset), value)


# The keys whose values are where a process keeps its data (a comma-separated list for log.dirs).
_DATA_KEYS = frozenset({"dataDir", "dataLogDir", "log.dirs", "log.dir"})


def _under(value: str, data: Path) -> str:
    """``value``'s relative paths as directories of the same last name under ``data``."""
    return ",".join(p if os.path.isabs(p) else str((data / Path(p).name).resolve())
                    for p in (part.strip() for part in value.split(",")))


def config_copy(source: Path, data: Path, offset: int) -> Path:
    """A copy of ``source`` in ``<data>/configs`` with every port moved by ``offset`` and every
    relative data path put under ``data`` (comments kept)."""
    lines = []
    for line in source.read_text().splitlines():
        key, sep, value = line.partition("=")
        name = key.strip()
        if sep and not line.lstrip().startswith("#"):
            if name in _PORT_KEYS:
                line = f"{key}={_shift_ports(name, value.strip(), offset)}"
            elif name in _DATA_KEYS:
                line = f"{key}={_under(value.strip(), data)}"
        lines.append(line)
    target_dir = data / "configs"
    target_dir.mkdir(parents=True, exist_ok=True)
    # Absolute, so each process's command line says which copy it runs.
    target = (target_dir / source.name).resolve()
    target.write_text("\n".join(lines) + "\n")
    return target


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


class Member:
    """One process of the cluster: its name, where it listens, its log."""

    def __init__(self, name: str, command: list[str], host: str, port: int, log: Path) -> None:
        self.name, self.command, self.host, self.port, self.log = name, command, host, port, log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        if _answers(self.host, self.port):
            raise SystemExit(f"pykafkad cluster: {self.host}:{self.port} is in use already; "
                             f"stop what listens there before starting {self.name}")
        with open(self.log, "ab") as out:
            # A session of its own: Ctrl-C reaches only the launcher, which stops each in turn.
            self.proc = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                         start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers(self.host, self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-15:])
                raise SystemExit(f"pykafkad cluster: {self.name} did not start; the end of {self.log}:\n{tail}")
            time.sleep(0.1)

    def stop(self) -> int | None:
        """Stop the process (SIGTERM, SIGKILL after STOP_TIMEOUT_S); its exit status, None if never started."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def members(configs: Path, zookeeper_jars: Path, data: Path, port_offset: int = 0) -> list[Member]:
    zk_config = config_copy(configs / "zookeeper.properties", data, port_offset)
    broker_configs = [config_copy(path, data, port_offset) for path in sorted(configs.glob("broker-*.properties"))]
    zk = _properties(zk_config)
    java = ["java", "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", f"{zookeeper_jars}/*"]
    out = [Member("zookeeper", [*java, "org.apache.zookeeper.server.quorum.QuorumPeerMain", str(zk_config)],
                  zk.get("clientPortAddress", "127.0.0.1"), int(zk["clientPort"]), data / "zookeeper.log")]
    for path in broker_configs:
        listener = _properties(path)["listeners"].split(",")[0]
        host, port = listener.split("://", 1)[1].rsplit(":", 1)
        out.append(Member(path.stem, [sys.executable, "-m", "pykafkad", "serve", str(path)],
                          host or "127.0.0.1", int(port), data / f"{path.stem}.log"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pykafkad.dev_cluster", description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=Path, default=Path("configs/cluster"))
    parser.add_argument("--zookeeper-jars", type=Path, default=Path(".cache/zookeeper/lib"))
    parser.add_argument("--data", type=Path, default=Path("data/cluster"),
                        help="where the cluster keeps everything it writes: data, logs, config copies")
    parser.add_argument("--port-offset", type=int, default=0,
                        help="move every port of the configs by this much (a second cluster beside the first)")
    args = parser.parse_args(argv)
    if not any(args.zookeeper_jars.glob("zookeeper-*.jar")):
        raise SystemExit(f"pykafkad cluster: no ZooKeeper jars in {args.zookeeper_jars}: run `make zookeeper-deps`")
    args.data.mkdir(parents=True, exist_ok=True)
    cluster = members(args.configs, args.zookeeper_jars.resolve(), args.data, args.port_offset)
    stopping = False

    def stop_all(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop_all)
    signal.signal(signal.SIGTERM, stop_all)
    started: list[Member] = []
    try:
        for member in cluster:
            print(f"starting {member.name} on {member.host}:{member.port} ...", flush=True)
            member.start()
            started.append(member)
        brokers = ",".join(f"{m.host}:{m.port}" for m in cluster[1:])
        zk = cluster[0]
        print(f"\n{'PROCESS':<12} {'LISTENS ON':<18} LOG")
        for m in cluster:
            print(f"{m.name:<12} {m.host + ':' + str(m.port):<18} {m.log}")
        print(f"\nTry:\n  .venv/bin/kafka-topics.sh --bootstrap-server {brokers} --create --topic demo "
              "--partitions 3 --replication-factor 3\n"
              f"  .venv/bin/kafka-topics.sh --bootstrap-server {brokers} --describe --topic demo\n"
              f"  .venv/bin/zkCli.sh -server {zk.host}:{zk.port} ls /pykafkad/brokers/ids\n"
              "Ctrl-C stops the brokers (controlled shutdown), then ZooKeeper.", flush=True)
        while not stopping:
            for m in started:
                if m.proc is not None and m.proc.poll() is not None:
                    print(f"{m.name} exited with {m.proc.returncode}; see {m.log}", flush=True)
                    stopping = True
            time.sleep(0.5)
    finally:
        unclean = []
        for m in reversed(started):
            print(f"stopping {m.name} ...", flush=True)
            status = m.stop()
            # ZooKeeper's JVM has no clean exit on SIGTERM (143); a broker's is 0.
            if m.name != "zookeeper" and status != 0:
                unclean.append(f"{m.name} exited with {status}; see {m.log}")
        for line in unclean:
            print(line, flush=True)
    return 1 if unclean else 0


if __name__ == "__main__":
    raise SystemExit(main())
