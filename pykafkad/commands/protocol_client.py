"""A Kafka protocol client for the commands that need APIs librdkafka does not offer
(ListPartitionReassignments, AlterPartitionReassignments, per-broker DescribeLogDirs): the
broker's own ``wire`` codec over ``BrokerLink``s, one per broker, each request at the highest
version both sides support (from ApiVersions).  It takes the same ``--bootstrap-server``,
``--command-config`` and ``-X`` settings as the librdkafka commands, so TLS and SASL
(PLAIN, SCRAM) work alike; it speaks to Apache Kafka as to pykafkad."""

from __future__ import annotations

import argparse
import os
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import trio

import wire
from pykafkad.commands.connection import TIMEOUT_S, UNREACHABLE, CommandError, client_config
from pykafkad.replica.broker_link import BrokerLink, BrokerLinkError
from pykafkad.security.sasl_client import SaslClient
from wire.error_codes import ErrorCode

API_VERSIONS, METADATA = 18, 3
CLIENT_ID = "pykafkad-cli"
T = TypeVar("T")


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


@dataclass
class BrokerEndpoint:
    """A broker as Metadata names it."""

    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass
class ProtocolClient:
    """Links to the cluster's brokers, opened on first use and closed by ``aclose``."""

    settings: dict[str, Any]
    brokers: dict[int, BrokerEndpoint] = field(default_factory=dict)
    controller_id: int = -1
    _links: dict[int | None, BrokerLink] = field(default_factory=dict)
    _versions: dict[int | None, dict[int, tuple[int, int]]] = field(default_factory=dict)

    @classmethod
    async def open(cls, settings: dict[str, Any]) -> ProtocolClient:
        """A client connected to one of ``bootstrap.servers`` that knows the cluster's brokers."""
        client = cls(settings)
        await client.refresh_metadata()
        return client

    async def refresh_metadata(self, topics: list[str] | None = None) -> dict[str, Any]:
        """Metadata of ``topics`` (every topic when None); updates the broker list and controller."""
        answer = await self.request(METADATA, {"topics": None if topics is None else [{"name": t} for t in topics],
                                               "allow_auto_topic_creation": False})
        self.brokers = {b["node_id"]: BrokerEndpoint(b["node_id"], b["host"], b["port"], b.get("rack"))
                        for b in answer["brokers"]}
        self.controller_id = answer.get("controller_id", -1)
        return answer

    async def request(self, api_key: int, body: dict[str, Any], node: int | None = None) -> dict[str, Any]:
        """``body`` to broker ``node`` (the bootstrap broker when None), at the highest common version."""
        link = await self._link(node)
        version = self._version(node, api_key)
        try:
            return await link.request(api_key, version, body, TIMEOUT_S)
        except BrokerLinkError as e:
            self._links.pop(node, None)
            raise CommandError(f"{wire.api_name(api_key)} to {self._where(node)}: {e}; {UNREACHABLE}") from None

    @property
    def controller(self) -> int | None:
        """The node to send controller requests to: the one Metadata names, else the bootstrap broker
        (any broker takes them, on pykafkad and on Kafka's KRaft brokers)."""
        return self.controller_id if self.controller_id in self.brokers else None

    async def aclose(self) -> None:
        for link in self._links.values():
            await link.aclose()
        self._links.clear()

    def _where(self, node: int | None) -> str:
        if node is None:
            return str(self.settings["bootstrap.servers"])
        broker = self.brokers.get(node)
        return f"broker {node}" + (f" ({broker.host}:{broker.port})" if broker else "")

    def _version(self, node: int | None, api_key: int) -> int:
        ours = wire.supported_versions(api_key)
        theirs = self._versions.get(node, {}).get(api_key)
        if theirs is None or max(ours[0], theirs[0]) > min(ours[1], theirs[1]):
            raise CommandError(f"{self._where(node)} does not support {wire.api_name(api_key)} "
                               f"(versions {ours[0]}-{ours[1]}); it needs Apache Kafka 2.4 or later, or pykafkad")
        return min(ours[1], theirs[1])

    async def _link(self, node: int | None) -> BrokerLink:
        link = self._links.get(node)
        if link is not None:
            return link
        if node is None:
            addresses = [host_port(a) for a in str(self.settings["bootstrap.servers"]).split(",") if a.strip()]
        elif node in self.brokers:
            addresses = [(self.brokers[node].host, self.brokers[node].port)]
        else:
            raise CommandError(f"broker {node} is not in the cluster; list the brokers with `pykafkad cluster info`")
        problems = []
        for host, port in addresses:
            try:
                link, versions = await connect_with_versions(
                    host, port, str(self.settings.get("client.id", CLIENT_ID)), TIMEOUT_S,
                    tls_context(self.settings), sasl_client(self.settings))
            except BrokerLinkError as e:
                problems.append(f"{host}:{port} ({connect_reason(e)})")
                continue
            self._versions[node] = versions
            self._links[node] = link
            return link
        raise CommandError(f"cannot reach {', '.join(problems)}; {UNREACHABLE}")


async def connect_with_versions(host: str, port: int, client_id: str, timeout_s: float,
                                ssl_context: ssl.SSLContext | None, sasl: SaslClient | None
                                ) -> tuple[BrokerLink, dict[int, tuple[int, int]]]:
    """A link to ``host:port`` and the (min, max) version of each API the broker serves, from
    ApiVersions; BrokerLinkError if it cannot be made or the broker refuses ApiVersions."""
    link = await BrokerLink.connect(host, port, client_id, timeout_s, ssl_context, sasl)
    try:
        answer = await link.request(API_VERSIONS, 3, {"client_software_name": client_id,
                                                      "client_software_version": "1"}, timeout_s)
    except BrokerLinkError:
        await link.aclose()
        raise
    if answer["error_code"] != 0:
        await link.aclose()
        raise BrokerLinkError(f"ApiVersions answered {error_name(answer['error_code'])}")
    return link, {a["api_key"]: (a["min_version"], a["max_version"]) for a in answer["api_keys"]}


def connect_reason(error: BaseException) -> str:
    """The first OS-level reason in a failure's chain (trio wraps each connect attempt's error)."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, BaseExceptionGroup) and seen.exceptions:
            seen = seen.exceptions[0]
            continue
        if isinstance(seen, OSError) and seen.errno:
            return os.strerror(seen.errno)
        seen = seen.__cause__
    return str(error)


def host_port(address: str) -> tuple[str, int]:
    host, sep, port = address.strip().rpartition(":")
    if not sep or not port.isdigit():
        raise CommandError(f"--bootstrap-server {address!r}: expected HOST:PORT")
    return host.strip("[]"), int(port)


def tls_context(settings: dict[str, Any]) -> ssl.SSLContext | None:
    protocol = str(settings.get("security.protocol", "PLAINTEXT")).upper()
    if protocol not in ("SSL", "SASL_SSL"):
        return None
    try:
        context = ssl.create_default_context(cafile=settings.get("ssl.ca.location"))
        if settings.get("ssl.certificate.location"):
            context.load_cert_chain(settings["ssl.certificate.location"], settings.get("ssl.key.location"),
                                    settings.get("ssl.key.password"))
    except (OSError, ssl.SSLError) as e:
        raise CommandError(f"the TLS settings (ssl.*): {e}") from None
    # librdkafka's default, ssl.endpoint.identification.algorithm=https, checks the broker's name.
    context.check_hostname = str(settings.get("ssl.endpoint.identification.algorithm", "https")).lower() == "https"
    return context


def sasl_client(settings: dict[str, Any]) -> SaslClient | None:
    protocol = str(settings.get("security.protocol", "PLAINTEXT")).upper()
    if protocol not in ("SASL_PLAINTEXT", "SASL_SSL"):
        return None
    mechanism = str(settings.get("sasl.mechanism", "GSSAPI")).upper()
    if mechanism not in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        raise CommandError(f"sasl.mechanism {mechanism}: this command authenticates with PLAIN or SCRAM only")
    if "sasl.username" not in settings or "sasl.password" not in settings:
        raise CommandError("SASL needs sasl.username and sasl.password (or sasl.jaas.config in --command-config)")
    return SaslClient(mechanism, str(settings["sasl.username"]), str(settings["sasl.password"]))


def with_client(args: argparse.Namespace, body: Callable[[ProtocolClient], Awaitable[T]]) -> T:
    """``body`` run with a client for the command's cluster, closed after."""
    async def main() -> T:
        client = await ProtocolClient.open(client_config(args))
        try:
            return await body(client)
        finally:
            await client.aclose()

    return trio.run(main)
