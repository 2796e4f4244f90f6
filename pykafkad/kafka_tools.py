"""Apache Kafka's own command-line tools, as scripts named like Kafka's ``bin/*.sh``.

Kafka ships its tools as shell scripts around Java classes whose names have moved between
releases (all in ``org.apache.kafka.tools`` since 4.4 moved ``ConfigCommand`` there from the broker
jar's ``kafka.admin``).  ``make tools`` runs this module to write one small script per
tool into the virtualenv's ``bin``, running the class from Kafka's jars (``make java-deps``) with
logging at WARN, so a user who has no Kafka installation types the same commands as against Kafka.

    python -m pykafkad.kafka_tools --jars .cache/java/lib --bin .venv/bin [--zookeeper-jars .cache/zookeeper/lib]

With ``--zookeeper-jars`` it also writes ZooKeeper's shell, ``zkCli.sh``, for looking at a cluster's
znodes (``zkCli.sh -server 127.0.0.1:2181 ls /pykafkad/brokers/ids``).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

# Kafka 4.4's script names and the class each runs (as in Kafka's bin/ directory; 4.4 moved
# ConfigCommand from kafka.admin into kafka-tools).
SCRIPTS: dict[str, str] = {
    "kafka-topics.sh": "org.apache.kafka.tools.TopicCommand",
    "kafka-console-producer.sh": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-console-consumer.sh": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-consumer-groups.sh": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-share-groups.sh": "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
    "kafka-configs.sh": "org.apache.kafka.tools.ConfigCommand",
    "kafka-get-offsets.sh": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-delete-records.sh": "org.apache.kafka.tools.DeleteRecordsCommand",
    "kafka-log-dirs.sh": "org.apache.kafka.tools.LogDirsCommand",
    "kafka-broker-api-versions.sh": "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "kafka-acls.sh": "org.apache.kafka.tools.AclCommand",
    "kafka-transactions.sh": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-features.sh": "org.apache.kafka.tools.FeatureCommand",
    "kafka-reassign-partitions.sh": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "kafka-leader-election.sh": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-verifiable-producer.sh": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-client-metrics.sh": "org.apache.kafka.tools.ClientMetricsCommand",
}

# Fast start for short-lived tools; slf4j-simple (the binding in the jars) at WARN, to stderr,
# instead of the ~100 INFO lines each call prints by default.
JVM_OPTIONS = (
    "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx256m",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.logFile=System.err",
)


ZOOKEEPER_SHELL = ("zkCli.sh", "org.apache.zookeeper.ZooKeeperMain")


def wrapper(main_class: str, jars: Path, project: str = "Apache Kafka") -> str:
    """The text of one tool's script."""
    options = " ".join(JVM_OPTIONS)
    classpath = shlex.quote(f"{jars.resolve()}/*")
    return (
        "#!/bin/sh\n"
        f"# {project}'s {main_class}, written by `make tools` (pykafkad.kafka_tools).\n"
        f'exec "${{JAVA:-java}}" {options} $KAFKA_OPTS -cp {classpath} {main_class} "$@"\n'
    )


def install(jars: Path, bin_dir: Path, zookeeper_jars: Path | None = None) -> list[Path]:
    """Write every script into ``bin_dir``; returns the ones that were missing or different."""
    if not any(jars.glob("kafka-tools-*.jar")):
        raise SystemExit(f"pykafkad: no kafka-tools jar in {jars}: run `make java-deps` first")
    scripts = [(name, wrapper(main_class, jars)) for name, main_class in SCRIPTS.items()]
    if zookeeper_jars is not None:
        if not any(zookeeper_jars.glob("zookeeper-*.jar")):
            raise SystemExit(f"pykafkad: no zookeeper jar in {zookeeper_jars}: run `make zookeeper-deps` first")
        name, main_class = ZOOKEEPER_SHELL
        scripts.append((name, wrapper(main_class, zookeeper_jars, "Apache ZooKeeper")))
    bin_dir.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in scripts:
        path = bin_dir / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            path.chmod(0o755)
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pykafkad.kafka_tools", description=__doc__.splitlines()[0])
    parser.add_argument("--jars", type=Path, required=True, help="the directory holding Kafka's jars")
    parser.add_argument("--bin", type=Path, required=True, help="where to write the scripts")
    parser.add_argument("--zookeeper-jars", type=Path, help="the directory holding ZooKeeper's jars (zkCli.sh)")
    args = parser.parse_args(argv)
    changed = install(args.jars, args.bin, args.zookeeper_jars)
    if changed:
        print(f"installed {len(changed)} Kafka tool script(s) in {args.bin}: "
              f"{', '.join(p.name for p in changed)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
