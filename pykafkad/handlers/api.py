"""The shape every handler has: an API key, the versions it serves, and an async function."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pykafkad.broker import Broker
    from pykafkad.security.sasl import SaslSession


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


Handler = Callable[["Broker", RequestContext, dict[str, Any]], Awaitable[dict[str, Any] | None]]


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
