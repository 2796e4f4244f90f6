"""The shape every handler has: an API key, the versions it serves, and an async function."""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pykafkad.broker import Broker
    from pykafkad.security.sasl import SaslSession


ANONYMOUS = "User:ANONYMOUS"


@dataclass(frozen=True)
class RequestContext:
    """What a handler knows about the request besides its body."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    peer: str
    # The listener the request came in on (its name, e.g. PLAINTEXT or SSL).
    listener: str = "PLAINTEXT"
    # The connection's SASL authentication, on a SASL listener.
    session: SaslSession | None = None
    # Who is asking, as Kafka names principals: the SASL user, the TLS client certificate's mapped
    # subject, or User:ANONYMOUS.
    tls_principal: str | None = None
    # Whether the connection can send record sets from the segment files (sendfile): a plain socket,
    # not TLS.
    zero_copy: bool = False
    # The client software's name and version its ApiVersions (v3+) gave (KIP-511), if it did.
    client_software: tuple[str, str] | None = None
    # Which connection of this broker's the request came on (share sessions end with it).
    connection_id: int = 0
    # A plain socket's file descriptor (-1 on TLS): where a parked fetch may be answered by the log
    # itself (``replica/delayed_fetch.py``).
    socket_fd: int = -1

    @property
    def principal(self) -> str:
        if self.session is not None and self.session.principal is not None:
            return f"User:{self.session.principal}"
        return self.tls_principal or ANONYMOUS

    @property
    def host(self) -> str:
        """The client's address without its port, as Java writes it (an ACL's host): IPv6 in full,
        without leading zeros (``0:0:0:0:0:0:0:1``)."""
        host = (self.peer.rpartition(":")[0] or self.peer).strip("[]")
        if ":" in host:
            try:
                return ":".join(f"{int(group, 16):x}" for group in ipaddress.IPv6Address(host).exploded.split(":"))
            except ValueError:
                return host
        return host


@dataclass(frozen=True)
class SentAlready:
    """A handler's answer that is on the socket already (a parked fetch the log answered itself), but
    for ``unsent``: the bytes the socket did not take at once."""

    unsent: bytes


Handler = Callable[["Broker", RequestContext, dict[str, Any]], Awaitable[dict[str, Any] | SentAlready | None]]


@dataclass(frozen=True)
class Api:
    """An API this broker advertises.  ``reject_below`` versions are advertised but refused (as Kafka 4
    does for Produce v0-2, which librdkafka needs to see advertised)."""

    key: int
    name: str
    min_version: int
    max_version: int
    handle: Handler
    reject_below: int | None = None
