"""Where a broker finds the registry's schemas for validating produced records: the registry it
runs itself (``schema.registry.listener``), or else a reader of the ``_schemas`` topic of its own,
started the first time a topic with validation is produced to, for a registry that runs
elsewhere (``pykafkad registry``, Confluent's).  Either way the answers come from the same
``RegistryState`` the registry serves from, and an id the state does not know yet is looked for
again after reading the topic to its end."""

from __future__ import annotations

import logging
from typing import Any

import trio

from pykafkad.config import BrokerConfig
from pykafkad.schema_registry.errors import RegistryError
from pykafkad.schema_registry.registry_state import RegistryState
from pykafkad.schema_registry.schemas_topic import SchemasTopic, StoreStartError

log = logging.getLogger(__name__)

# How long a produce waits for the schemas to be read before it is answered with a retriable error.
READY_TIMEOUT_S = 10.0
# After a failed start of its own reader, the broker tries again no sooner than this.
RETRY_AFTER_S = 5.0


class SchemasUnavailable(Exception):
    """The schemas cannot be read now: one line saying why."""


class SchemaSource:
    def __init__(self, config: BrokerConfig, nursery: trio.Nursery, client: dict[str, Any] | None) -> None:
        self._config = config
        self._nursery = nursery
        # How this broker reaches itself as a Kafka client (None: it cannot, see server.broker_client).
        self._client = client
        self._topic: SchemasTopic | None = None
        self._ready = trio.Event()
        self._problem: str | None = None
        self._started_at: float | None = None
        self._in_broker = bool(config["schema.registry.listener"])

    def attach(self, topic: SchemasTopic) -> None:
        """The broker's own registry has read its topic: validation reads the same state."""
        self._topic = topic
        self._problem = None
        self._ready.set()

    def registry_failed(self, problem: str) -> None:
        """The broker's own registry did not start: say why to whoever validates."""
        self._problem = f"the schema registry of this broker did not start: {problem}"
        self._ready.set()

    async def state(self) -> RegistryState:
        """The schemas, once read; SchemasUnavailable if they cannot be within READY_TIMEOUT_S."""
        topic = await self._source()
        return topic.state

    async def refresh(self, since: float) -> RegistryState:
        """The schemas with every write committed before ``since`` read (a ``trio.current_time()``)."""
        topic = await self._source()
        try:
            with trio.fail_after(READY_TIMEOUT_S):
                await topic.caught_up(since)
        except (StoreStartError, RegistryError, trio.TooSlowError) as e:
            raise SchemasUnavailable(f"{self._config['schema.registry.topic']} could not be read to its end: "
                                     f"{_reason(e)}") from None
        return topic.state

    async def _source(self) -> SchemasTopic:
        if self._topic is not None:
            return self._topic
        if not self._in_broker:
            self._maybe_start_reader()
        with trio.move_on_after(READY_TIMEOUT_S):
            await self._ready.wait()
        if self._topic is not None:
            return self._topic
        raise SchemasUnavailable(self._problem or f"{self._config['schema.registry.topic']} is still being read")

    def _maybe_start_reader(self) -> None:
        now = trio.current_time()
        if self._started_at is not None and (self._problem is None or now - self._started_at < RETRY_AFTER_S):
            return
        self._started_at = now
        self._problem = None
        self._ready = trio.Event()
        if self._client is None:
            self._problem = ("this broker has no PLAINTEXT listener to read the schemas through; add one to "
                             "listeners, or run the registry in the broker (schema.registry.listener)")
            self._ready.set()
            return
        self._nursery.start_soon(self._read)

    async def _read(self) -> None:
        name = self._config["schema.registry.topic"]
        topic = SchemasTopic(self._client or {}, name, RegistryState(),
                             self._config["offsets.topic.replication.factor"])
        started = False
        try:
            await self._nursery.start(topic.run)
            started = True
        except* (StoreStartError, RegistryError) as group:
            self._problem = f"cannot read {name}: {group.exceptions[0]}"
            log.error("schema validation: %s", self._problem)
            self._ready.set()
        if started:
            log.info("schema validation: reading schemas from %s", name)
            self.attach(topic)


def _reason(error: BaseException) -> str:
    if isinstance(error, RegistryError):
        return error.message
    if isinstance(error, trio.TooSlowError):
        return f"no answer within {READY_TIMEOUT_S:.0f} s"
    return str(error)
