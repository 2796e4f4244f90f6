"""The v2 consumer instances of this proxy, by group and name: created, looked up, deleted, and
closed once idle for ``consumer.instance.timeout.ms`` (their group membership ends with them).  At
most ``max_instances`` live at once, so a client that never deletes its instances cannot grow the
proxy without bound."""

from __future__ import annotations

import logging
import time
import uuid

import trio

from pykafkad.rest_proxy import rest_errors
from pykafkad.rest_proxy.consumer_instance import ConsumerInstance, ConsumerSettings
from pykafkad.rest_proxy.kafka_clients import CALLER, ClientsOfCaller
from pykafkad.rest_proxy.rest_metrics import CONSUMER_INSTANCES

log = logging.getLogger(__name__)

EXPIRY_CHECK_S = 1.0


class ConsumerInstances:
    def __init__(self, clients: ClientsOfCaller, instance_timeout_ms: int, max_instances: int) -> None:
        self.clients = clients
        self.instance_timeout_s = instance_timeout_ms / 1000
        self.max_instances = max_instances
        self._instances: dict[tuple[str, str], ConsumerInstance] = {}
        # Names taken while their consumer is being made (a worker thread), so two requests for one
        # name cannot both make one.
        self._reserved: set[tuple[str, str]] = set()

    async def create(self, group: str, name: str | None, settings: ConsumerSettings) -> ConsumerInstance:
        name = name or f"rest-consumer-{uuid.uuid4()}"
        key = (group, name)
        if key in self._instances or key in self._reserved:
            raise rest_errors.consumer_already_exists(group, name)
        if len(self._instances) + len(self._reserved) >= self.max_instances:
            raise rest_errors.too_many_instances(self.max_instances)
        self._reserved.add(key)
        caller = self.clients.current()
        try:
            instance = await trio.to_thread.run_sync(ConsumerInstance, caller.client, group, name, settings)
        finally:
            self._reserved.discard(key)
        # An instance reads as its maker: only its maker may use it.
        instance.owner = caller.principal
        self._instances[key] = instance
        CONSUMER_INSTANCES.set(len(self._instances))
        log.info("rest proxy: consumer instance %s of group %s created (%s)", name, group, settings.format)
        return instance

    def get(self, group: str, name: str) -> ConsumerInstance:
        instance = self._instances.get((group, name))
        if instance is None or instance.closed:
            raise rest_errors.consumer_instance_not_found(group, name)
        if instance.owner != CALLER.get().principal:
            raise rest_errors.forbidden(f"consumer instance {name} of group {group} belongs to {instance.owner}")
        instance.touch()
        return instance

    async def delete(self, group: str, name: str) -> None:
        self.get(group, name)
        instance = self._instances.pop((group, name), None)
        CONSUMER_INSTANCES.set(len(self._instances))
        if instance is None:
            raise rest_errors.consumer_instance_not_found(group, name)
        await trio.to_thread.run_sync(instance.close)
        log.info("rest proxy: consumer instance %s of group %s deleted", name, group)

    async def expire(self) -> None:
        """Close instances idle for longer than the timeout, until cancelled; then close them all."""
        try:
            while True:
                await trio.sleep(EXPIRY_CHECK_S)
                now = time.monotonic()
                for key, instance in list(self._instances.items()):
                    if now - instance.last_used > self.instance_timeout_s and not instance.busy:
                        self._instances.pop(key, None)
                        CONSUMER_INSTANCES.set(len(self._instances))
                        log.info("rest proxy: consumer instance %s of group %s expired after %.0f s idle",
                                 key[1], key[0], self.instance_timeout_s)
                        await trio.to_thread.run_sync(instance.close)
        finally:
            with trio.CancelScope(shield=True):
                for instance in list(self._instances.values()):
                    await trio.to_thread.run_sync(instance.close)
                self._instances.clear()
                CONSUMER_INSTANCES.set(0)
