"""Apache Kafka from Maven Central: the jars, the JVM command lines, a single-node KRaft config.

`ensure_jars()` resolves benchmarks/pom.xml with `mvn dependency:copy-dependencies` into
.cache/bench/lib-<version> once (a marker file remembers it).  The version is the newest Kafka
release, which need not be the protocol pin of `wire/` and the compat tests (`make java-deps`).
That one directory is the classpath of the broker (`kafka.Kafka`) and of Kafka's own perf tools
(`org.apache.kafka.tools.*`).

The broker runs as `bin/kafka-server-start.sh` would run it: the same JVM flags
(`-Xmx1G -Xms1G`, G1 with a 20 ms pause goal) and the settings of Kafka's shipped KRaft
`config/server.properties`, as one process that is both broker and controller.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
POM = Path(__file__).resolve().parent / "pom.xml"
CACHE = REPO_ROOT / ".cache" / "bench"
KAFKA_VERSION = "4.4.0"
# One directory per version: jars of two releases on one classpath would mix.
LIB = CACHE / f"lib-{KAFKA_VERSION}"
CLUSTER_ID = "YmVuY2htYXJrcy1weWthZmth"[:22]
MVN_TIMEOUT_S = 900

# kafka-server-start.sh: KAFKA_HEAP_OPTS; kafka-run-class.sh: KAFKA_JVM_PERFORMANCE_OPTS.
BROKER_HEAP = ["-Xmx1G", "-Xms1G"]
BROKER_JVM_PERFORMANCE = [
    "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
]
# kafka-run-class.sh gives the tools 256 MB unless KAFKA_HEAP_OPTS says otherwise.
TOOL_HEAP = ["-Xmx256M"]


class KafkaDistError(RuntimeError):
    """The Kafka jars could not be resolved."""


def ensure_jars(lib: Path = LIB) -> Path:
    """The directory holding every Kafka jar, resolving it with Maven on first use."""
    marker = lib / f".done-{KAFKA_VERSION}"
    if marker.exists() and list(lib.glob("kafka_2.13-*.jar")):
        return lib
    lib.mkdir(parents=True, exist_ok=True)
    cmd = ["mvn", "-q", "-f", str(POM), "dependency:copy-dependencies",
           f"-Dkafka.version={KAFKA_VERSION}", f"-DoutputDirectory={lib}"]
    try:
        subprocess.run(cmd, check=True, timeout=MVN_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as e:
        raise KafkaDistError(f"cannot resolve Kafka {KAFKA_VERSION} with Maven ({' '.join(cmd)}): {e}") from e
    marker.touch()
    return lib


def version(lib: Path = LIB) -> str:
    """Kafka's version, read from the kafka_2.13 jar's name."""
    for jar in lib.glob("kafka_2.13-*.jar"):
        m = re.match(r"kafka_2\.13-(.+)\.jar$", jar.name)
        if m:
            return m.group(1)
    return KAFKA_VERSION


def java_version() -> str:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.splitlines()[0].strip() if out else "unknown"


def broker_command(config: Path, lib: Path = LIB) -> list[str]:
    return ["java", *BROKER_HEAP, *BROKER_JVM_PERFORMANCE,
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-cp", f"{lib}/*", "kafka.Kafka", str(config)]


def tool_command(main_class: str, args: list[str], lib: Path = LIB) -> list[str]:
    return ["java", *TOOL_HEAP, "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
            "-Djava.awt.headless=true", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            "-cp", f"{lib}/*", main_class, *args]


def format_command(config: Path, lib: Path = LIB) -> list[str]:
    return tool_command("kafka.tools.StorageTool", ["format", "-t", CLUSTER_ID, "-c", str(config)], lib)


def server_properties(port: int, controller_port: int, log_dir: Path, extra: dict[str, str]) -> str:
    """Kafka's shipped KRaft config/server.properties, on loopback ports and our log directory."""
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "inter.broker.listener.name": "PLAINTEXT",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "num.network.threads": "3",
        "num.io.threads": "8",
        "socket.send.buffer.bytes": "102400",
        "socket.receive.buffer.bytes": "102400",
        "socket.request.max.bytes": "104857600",
        "log.dirs": str(log_dir),
        "num.partitions": "1",
        "num.recovery.threads.per.data.dir": "1",
        "offsets.topic.replication.factor": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "log.retention.hours": "168",
        "log.segment.bytes": "1073741824",
        "log.retention.check.interval.ms": "300000",
        **extra,
    }
    return "".join(f"{k}={v}\n" for k, v in props.items())
