"""Whose Kafka clients serve a request.  Without authentication, one set for everyone: the proxy's
own.  With it (a broker with an authorizer, or ``pykafkad rest --basic-auth``), each caller's HTTP
Basic credentials become the SASL credentials of a set of clients of their own, so that the
cluster's ACLs decide what each caller may do (Confluent's principal propagation).  A caller's set
is made on first use and closed once idle.

The request being served names its caller through a context variable that the authentication
middleware sets; the APIs ask ``current()``."""

from __future__ import annotations

import base64
import binascii
import contextvars
import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio
from confluent_kafka import KafkaException

from pykafkad.rest_proxy import rest_errors
from pykafkad.rest_proxy.cluster_admin import ClusterAdmin
from pykafkad.rest_proxy.cluster_view import ClusterView
from pykafkad.rest_proxy.record_producer import RecordProducer

log = logging.getLogger(__name__)

IDLE_CLOSE_S = 600.0


@dataclass
class KafkaClients:
    """One identity's clients of the cluster."""
    client: dict[str, Any]
    principal: str | None
    view: ClusterView
    producer: RecordProducer
    admin: ClusterAdmin
    last_used: float = field(default_factory=time.monotonic)
    # Cancelled when the clients close: it stops their producer.
    producer_scope: trio.CancelScope = field(default_factory=trio.CancelScope)

    @classmethod
    def make(cls, client: dict[str, Any], principal: str | None) -> KafkaClients:
        view = ClusterView(client)
        return cls(client, principal, view, RecordProducer(client), ClusterAdmin(view.admin))

    def close(self) -> None:
        self.view.close()

    async def partitions_for_produce(self, topic: str) -> set[int]:
        """The topic's partitions; a topic not there is created first where the cluster creates
        topics on first use, else 40403."""
        found = self.producer.known_partitions(topic)
        if found is not None:
            return found
        found = await self.producer.partitions(topic)
        if found is None and await trio.to_thread.run_sync(self.view.auto_create, topic):
            with trio.move_on_after(10):
                while found is None:
                    found = await self.producer.partitions(topic)
                    if found is None:
                        await trio.sleep(0.1)
        if found is None:
            raise rest_errors.topic_not_found(topic)
        return found


@dataclass(frozen=True)
class Caller:
    """Who a request comes from: the Basic credentials it carries (all None without authentication)."""
    user: str | None = None
    password: str | None = None
    authorization: str | None = None  # the header itself, passed on to the schema registry

    @property
    def principal(self) -> str | None:
        return None if self.user is None else f"User:{self.user}"


ANONYMOUS = Caller()
CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("rest_proxy_caller", default=ANONYMOUS)


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    if not header or header[:6].lower() != "basic ":
        return None
    try:
        user, sep, password = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (user, password) if sep and user else None


# (user, password) -> the client settings that log in as that user; None if the credentials are refused.
SaslSettings = Callable[[str, str], dict[str, Any] | None]


class ClientsOfCaller:
    def __init__(self, client: dict[str, Any], sasl: SaslSettings | None = None) -> None:
        self.client = client
        self.sasl = sasl
        self._shared: KafkaClients | None = None
        self._by_caller: dict[tuple[str, str], KafkaClients] = {}
        self._nursery: trio.Nursery | None = None

    @property
    def authenticating(self) -> bool:
        return self.sasl is not None

    async def start(self) -> None:
        """The shared clients made (without authentication; with it, each caller's come later).
        ValueError, one line, if the client settings are refused."""
        if self.authenticating:
            return
        try:
            self._shared = await trio.to_thread.run_sync(KafkaClients.make, self.client, None)
        except KafkaException as e:
            raise ValueError(f"the Kafka client settings are refused: {e.args[0].str()}") from None

    def current(self) -> KafkaClients:
        """The clients of the request being served."""
        caller = CALLER.get()
        if caller.user is None or caller.password is None:
            assert self._shared is not None
            return self._shared
        found = self._by_caller.get(_key(caller.user, caller.password))
        if found is None:
            raise rest_errors.unauthorized()
        found.last_used = time.monotonic()
        return found

    async def admit(self, user: str, password: str) -> bool:
        """Whether these credentials log in; their clients made the first time."""
        key = _key(user, password)
        if key in self._by_caller:
            return True
        assert self.sasl is not None
        settings = await trio.to_thread.run_sync(self.sasl, user, password)
        if settings is None:
            return False
        client = {**self.client, **settings}
        try:
            clients = await trio.to_thread.run_sync(KafkaClients.make, client, f"User:{user}")
        except (KafkaException, ValueError) as e:
            detail = e.args[0].str() if isinstance(e, KafkaException) else str(e)
            raise rest_errors.kafka_error(f"cannot make clients for User:{user}: {detail}") from None
        await self._start_producer(clients)
        try:
            admitted = await clients.producer.check_login()
        except BaseException:
            await self._close(clients)
            raise
        if not admitted or key in self._by_caller:  # refused, or made meanwhile by another request
            await self._close(clients)
            return admitted
        self._by_caller[key] = clients
        log.info("rest proxy: clients for User:%s made", user)
        return True

    @staticmethod
    async def _close(clients: KafkaClients) -> None:
        clients.producer_scope.cancel()
        await trio.to_thread.run_sync(clients.close)

    async def _start_producer(self, clients: KafkaClients) -> None:
        assert self._nursery is not None, "run() serves the clients"

        async def produce(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
            with clients.producer_scope:
                await clients.producer.run(task_status=task_status)
        await self._nursery.start(produce)

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Run the producers, and close callers' clients idle for a while, until cancelled; then
        close them all."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                if self._shared is not None:
                    await self._start_producer(self._shared)
                task_status.started()
                while True:
                    await trio.sleep(30)
                    now = time.monotonic()
                    for key, clients in list(self._by_caller.items()):
                        if now - clients.last_used > IDLE_CLOSE_S:
                            del self._by_caller[key]
                            await self._close(clients)
        finally:
            with trio.CancelScope(shield=True):
                for clients in [*self._by_caller.values(), *([self._shared] if self._shared else [])]:
                    await trio.to_thread.run_sync(clients.close)
                self._by_caller.clear()


def _key(user: str, password: str) -> tuple[str, str]:
    # The password is kept only as a digest, for telling one login from another.
    return user, hashlib.sha256(password.encode()).hexdigest()


class BasicAuthentication:
    """ASGI middleware: with authentication on, every request needs HTTP Basic credentials that log
    in to the cluster; the request then runs as that caller."""

    def __init__(self, app: Any, clients: ClientsOfCaller) -> None:
        self.app = app
        self.clients = clients

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self.clients.authenticating:
            await self.app(scope, receive, send)
            return
        header = dict(scope.get("headers") or ()).get(b"authorization", b"").decode("latin-1")
        found = basic_credentials(header)
        try:
            admitted = found is not None and await self.clients.admit(*found)
        except rest_errors.RestError as e:
            # The cluster could not be asked (unreachable, timed out): say so rather than 401.
            await _refuse(send, e, [])
            return
        if not admitted:
            await _refuse(send, rest_errors.unauthorized(),
                          [(b"www-authenticate", b'Basic realm="pykafkad REST proxy"')])
            return
        token = CALLER.set(Caller(found[0], found[1], header))
        try:
            await self.app(scope, receive, send)
        finally:
            CALLER.reset(token)


async def _refuse(send: Any, error: rest_errors.RestError, headers: list[tuple[bytes, bytes]]) -> None:
    body = json.dumps(error.body()).encode()
    await send({"type": "http.response.start", "status": error.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": body})
