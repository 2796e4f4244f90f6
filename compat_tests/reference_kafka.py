"""A real Apache Kafka 4.4.0 broker behind pykafkad's command line, as a reference.

`python -m compat_tests.reference_kafka serve <properties> --override key=value ...` takes the
same arguments as `python -m pykafkad serve`, writes a single-node KRaft configuration (broker
and controller in one process) from the overrides, formats the log directory on first start,
and runs `kafka.Kafka` from the jars in env JAVA_LIB.  SIGTERM/SIGINT are forwarded and a clean
Kafka shutdown exits 0; if this process is SIGKILLed, the JVM dies with it.

`COMPAT_BROKER=kafka` makes BrokerProcess start this instead of pykafkad, so the whole compat
suite can be run against Kafka itself: a test that fails there is a test bug, not a broker bug.
The properties file argument is ignored (Kafka's defaults plus the overrides are used).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path

from compat_tests.loopback_ports import free_port

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qk"
PR_SET_PDEATHSIG = 1


def parse_overrides(args: list[str]) -> dict[str, str]:
    if len(args) < 2 or args[0] != "serve":
        raise SystemExit(
            "usage: python -m compat_tests.reference_kafka serve <properties> [--override k=v]..."
        )
    overrides: dict[str, str] = {}
    rest = args[2:]
    while rest:
        if rest[0] != "--override" or len(rest) < 2 or "=" not in rest[1]:
            raise SystemExit(f"bad argument {rest[0]!r}")
        key, value = rest[1].split("=", 1)
        overrides[key] = value
        rest = rest[2:]
    return overrides


def controller_port(state_dir: Path) -> int:
    """A free port for the KRaft controller listener, the same one across restarts."""
    path = state_dir / "controller.port"
    if path.exists():
        return int(path.read_text())
    port = free_port()
    path.write_text(str(port))
    return port


def kafka_properties(overrides: dict[str, str], cport: int) -> dict[str, str]:
    port = overrides["listeners"].rsplit(":", 1)[1]
    props = {
        "process.roles": "broker,controller",
        "node.id": overrides.get("node.id", "1"),
        "controller.quorum.voters": f"{overrides.get('node.id', '1')}@127.0.0.1:{cport}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
    }
    props.update({k: v for k, v in overrides.items() if k not in ("listeners", "advertised.listeners")})
    return props


def _die_with_parent() -> None:
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def main(argv: list[str]) -> int:
    overrides = parse_overrides(argv)
    lib = os.environ.get("JAVA_LIB")
    if not lib or not list(Path(lib).glob("kafka_2.13-*.jar")):
        raise SystemExit("JAVA_LIB must hold the kafka_2.13 jar: run `make java-deps`")
    log_dir = Path(overrides["log.dirs"])
    state_dir = log_dir.parent / f"{log_dir.name}.reference-kafka"
    state_dir.mkdir(parents=True, exist_ok=True)
    config = state_dir / "server.properties"
    props = kafka_properties(overrides, controller_port(state_dir))
    config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    java = [
        "java",
        "-Xmx768m",
        "-XX:TieredStopAtLevel=1",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-cp",
        str(Path(lib) / "*"),
    ]
    if not (log_dir / "meta.properties").exists():
        subprocess.run(
            [*java, "kafka.tools.StorageTool", "format", "-t", CLUSTER_ID, "-c", str(config)],
            check=True,
            stdout=sys.stderr,
            timeout=120,
        )
    proc = subprocess.Popen([*java, "kafka.Kafka", str(config)], preexec_fn=_die_with_parent)

    def forward(signum: int, frame: object) -> None:
        proc.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    code = proc.wait()
    return 0 if code in (0, 128 + signal.SIGTERM) else code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
