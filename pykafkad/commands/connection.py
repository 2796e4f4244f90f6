"""How a command reaches the cluster: ``--bootstrap-server`` (or ``PYKAFKAD_BROKERS``), a
``--command-config`` properties file as Kafka's tools take one (security settings), and ``-X
key=value`` librdkafka settings; and what a Kafka error means for the person who ran it."""

from __future__ import annotations

import argparse
import logging
import os
import re
import socket
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

DEFAULT_BOOTSTRAP = "127.0.0.1:9092"
TIMEOUT_S = 30.0
UNREACHABLE = "is a broker running there? set --bootstrap-server or PYKAFKAD_BROKERS"
# How long the check that some bootstrap server takes connections waits for one.
REACH_TIMEOUT_S = 5.0
# Kafka tool properties librdkafka takes under the same name.
_SHARED_KEYS = ("security.protocol", "sasl.mechanism", "sasl.username", "sasl.password", "ssl.ca.location",
                "ssl.certificate.location", "ssl.key.location", "ssl.key.password", "client.id")

# What to do next, by Kafka error.
_NEXT_STEP = {
    KafkaError.TOPIC_ALREADY_EXISTS: "pick another name, or see it with `pykafkad topic describe NAME`",
    KafkaError.UNKNOWN_TOPIC_OR_PART: "list the topics with `pykafkad topic list`",
    KafkaError.TOPIC_AUTHORIZATION_FAILED: "ask an administrator for an ACL on the topic",
    KafkaError.GROUP_AUTHORIZATION_FAILED: "ask an administrator for an ACL on the group",
    KafkaError.CLUSTER_AUTHORIZATION_FAILED: "ask an administrator for an ACL on the cluster",
    KafkaError.GROUP_ID_NOT_FOUND: "list the groups with `pykafkad group list`",
    KafkaError.NON_EMPTY_GROUP: "stop the group's consumers first",
    KafkaError.INVALID_PARTITIONS: "give more partitions than the topic has (it cannot shrink)",
    KafkaError.INVALID_REPLICATION_FACTOR: "give at most as many replicas as there are brokers",
    KafkaError.INVALID_CONFIG: "check the config's name and value (`pykafkad topic describe NAME` lists them)",
    KafkaError._TRANSPORT: UNREACHABLE,
    KafkaError._ALL_BROKERS_DOWN: UNREACHABLE,
    KafkaError._TIMED_OUT: UNREACHABLE,
}


_JAAS_OPTION = re.compile(r'([A-Za-z0-9_.-]+)\s*=\s*"((?:[^"\\]|\\.)*)"')


class CommandError(Exception):
    """What went wrong, in one line for the person who ran the command."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-b", "--bootstrap-server", default=os.environ.get("PYKAFKAD_BROKERS", DEFAULT_BOOTSTRAP),
                        help="host:port of a broker (env PYKAFKAD_BROKERS; default %(default)s)")
    parser.add_argument("--command-config", type=Path, help="client properties (security), as Kafka's tools take")
    parser.add_argument("-X", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                        help="a librdkafka client setting (repeatable)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")


def client_config(args: argparse.Namespace) -> dict[str, Any]:
    # librdkafka's own log lines (connection retries...) go to a logger, not the terminal: a failure
    # reaches the person as the command's one-line error.
    # Looking a topic up must never create it (auto.create.topics.enable is on by default in Kafka).
    config: dict[str, Any] = {"bootstrap.servers": args.bootstrap_server, "logger": logging.getLogger("librdkafka"),
                              "allow.auto.create.topics": False}
    if args.command_config is not None:
        try:
            lines = args.command_config.read_text().splitlines()
        except OSError as e:
            raise CommandError(f"--command-config {args.command_config}: {e.strerror}") from None
        for line in lines:
            key, sep, value = line.partition("=")
            if not sep or line.lstrip().startswith("#"):
                continue
            if key.strip() in _SHARED_KEYS:
                config[key.strip()] = value.strip()
            elif key.strip() == "sasl.jaas.config":
                # The Java clients' PLAIN/SCRAM login: its username and password are librdkafka's.
                options = dict(_JAAS_OPTION.findall(value))
                for option, setting in (("username", "sasl.username"), ("password", "sasl.password")):
                    if option in options:
                        config[setting] = options[option]
    for item in args.settings:
        key, sep, value = item.partition("=")
        if not sep:
            raise CommandError(f"-X {item!r}: expected KEY=VALUE")
        config[key.strip()] = value.strip()
    return config


def reachable_config(args: argparse.Namespace) -> dict[str, Any]:
    """``client_config``, once some bootstrap server has taken a TCP connection.

    librdkafka keeps retrying a broker that refuses connections until the request's timeout (30 s
    here), so a mistyped address would leave the person waiting that long for the same one line.
    """
    config = client_config(args)
    problems = []
    for server in str(config["bootstrap.servers"]).split(","):
        address = server.strip().rpartition("://")[2]
        host, sep, port = address.rpartition(":")
        if not sep or not port.isdigit():
            raise CommandError(f"--bootstrap-server {server.strip()!r}: expected HOST:PORT")
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT_S).close()
            return config
        except OSError as e:
            reason = e.strerror or str(e) or type(e).__name__
            problems.append(f"{address} ({reason})")
    raise CommandError(f"cannot reach {', '.join(problems)}; {UNREACHABLE}")


def admin(args: argparse.Namespace) -> AdminClient:
    return AdminClient(reachable_config(args))


def wait(future: Any, what: str) -> Any:
    """The future's result; a Kafka error becomes one line saying what failed and what to do next."""
    try:
        return future.result(timeout=TIMEOUT_S)
    except KafkaException as e:
        raise CommandError(describe_error(e.args[0], what)) from None


def metadata(client: Any, what: str, topic: str | None = None) -> Any:
    """The cluster's metadata (of ``topic`` only, if given); a Kafka error becomes one line."""
    try:
        return client.list_topics(topic, timeout=TIMEOUT_S)
    except KafkaException as e:
        raise CommandError(describe_error(e.args[0], what)) from None


def describe_error(error: KafkaError | Any, what: str) -> str:
    if not isinstance(error, KafkaError):
        return f"{what}: {error}"
    step = _NEXT_STEP.get(error.code())
    return f"{what}: {error.name()}: {error.str()}" + (f"; {step}" if step else "")
