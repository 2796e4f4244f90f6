"""The client quota manager: which quota applies to a request's user and client id, and how far
over it they are.

The quota is looked up in Kafka's order (``DefaultQuotaCallback``), the first entity that sets the
key winning: ``users/<u>/clients/<c>``, ``users/<u>/clients/<default>``, ``users/<u>``,
``users/<default>/clients/<c>``, ``users/<default>/clients/<default>``, ``users/<default>``,
``clients/<c>``, ``clients/<default>``.  Usage is measured per what that entity names, as Kafka
tags its sensors: a quota of ``users/<u>`` is shared by every client id of the user, one of
``clients/<default>`` is each client id's own.  Nothing is measured for a client without a quota,
and nothing at all while no quota is set anywhere.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from pykafkad.quota.entity import CONTROLLER_MUTATION_RATE, REQUEST_PERCENTAGE, QuotaEntity
from pykafkad.quota.mutation_quota import STRICT_FROM, UNBOUNDED, MutationQuota, TokenBucket
from pykafkad.quota.rate import Rate
from pykafkad.quota.request_time import TaskTimer

if TYPE_CHECKING:
    from pykafkad.config import BrokerConfig
    from pykafkad.metadata.cluster_metadata import ClusterMetadata

# Kafka drops a client's sensors after an hour without a request.
INACTIVE_SENSOR_EXPIRY_MS = 3600 * 1000
_EXPIRY_CHECK_INTERVAL_MS = 60 * 1000
_MAX_LOOKUPS = 100_000
_UNKNOWN = object()

# (user tag, client id tag): what a quota's usage is measured per; "" is "not part of it".
Tags = tuple[str, str]


def quota_for(quotas: Mapping[QuotaEntity, Mapping[str, float]], key: str, user: str,
              client_id: str) -> tuple[Tags, float] | None:
    """The quota ``key`` of ``user`` with ``client_id`` and what its usage is measured per, or None."""
    both, user_only, client_only = (user, client_id), (user, ""), ("", client_id)
    for entity, tags in (
        (QuotaEntity.of(user=user, client_id=client_id), both),
        (QuotaEntity.of(user=user, client_id=None), both),
        (QuotaEntity.of(user=user), user_only),
        (QuotaEntity.of(user=None, client_id=client_id), both),
        (QuotaEntity.of(user=None, client_id=None), both),
        (QuotaEntity.of(user=None), user_only),
        (QuotaEntity.of(client_id=client_id), client_only),
        (QuotaEntity.of(client_id=None), client_only),
    ):
        bound = quotas.get(entity, {}).get(key)
        if bound is not None:
            return tags, bound
    return None


class ClientQuotaManager:
    """Usage per quota key and entity, checked against the quotas in the metadata cache."""

    def __init__(self, config: BrokerConfig, metadata: ClusterMetadata) -> None:
        self.metadata = metadata
        self.samples = config["quota.window.num"]
        self.window_ms = config["quota.window.size.seconds"] * 1000
        self._sensors: dict[tuple[str, Tags], Rate] = {}
        self._mutation_burst_s = config["controller.quota.window.num"] * config["controller.quota.window.size.seconds"]
        self._mutation_buckets: dict[Tags, TokenBucket] = {}
        self._lookups: dict[tuple[str, str, str], tuple[Tags, float] | None] = {}
        self._generation = -1
        self._next_expiry_check_ms = 0.0
        # Handler time is measured only while some request_percentage quota is set.
        self.task_timer = TaskTimer()
        self._request_keys = False

    @property
    def enabled(self) -> bool:
        return bool(self.metadata.client_quotas)

    def times_requests(self) -> bool:
        """Whether handler time counts (a request_percentage quota is set somewhere)."""
        self._refresh()
        return self._request_keys

    def _refresh(self) -> None:
        if self._generation == self.metadata.quota_generation:
            return
        self._generation = self.metadata.quota_generation
        self._lookups.clear()
        self._request_keys = any(REQUEST_PERCENTAGE in q for q in self.metadata.client_quotas.values())
        self.task_timer.set_installed(self._request_keys)

    def quota(self, key: str, user: str, client_id: str) -> tuple[Tags, float] | None:
        self._refresh()
        lookup = (key, user, client_id)
        found = self._lookups.get(lookup, _UNKNOWN)
        if found is _UNKNOWN:
            if len(self._lookups) >= _MAX_LOOKUPS:
                self._lookups.clear()  # many client ids come and go: start over rather than grow
            found = self._lookups[lookup] = quota_for(self.metadata.client_quotas, key, user, client_id)
        return found  # type: ignore[return-value]

    def record(self, key: str, user: str, client_id: str, value: float, now_ms: float | None = None) -> int:
        """Count ``value`` against the quota ``key`` of ``user``/``client_id``; the throttle time it
        earns (ms, 0 within the quota or without one).  As in Kafka, the request that goes over is
        served; the client then waits."""
        found = self.quota(key, user, client_id)
        if found is None:
            return 0
        tags, bound = found
        now_ms = time.monotonic() * 1000 if now_ms is None else now_ms
        sensor = self._sensors.get((key, tags))
        if sensor is None:
            self._expire(now_ms)
            sensor = self._sensors[(key, tags)] = Rate(self.samples, self.window_ms)
        sensor.record(value, now_ms)
        return sensor.throttle_ms(bound, now_ms)

    def unrecord(self, key: str, user: str, client_id: str, value: float, now_ms: float | None = None) -> None:
        """Take back ``value`` recorded against the quota ``key`` (Kafka's unrecordQuotaSensor)."""
        found = self.quota(key, user, client_id)
        sensor = self._sensors.get((key, found[0])) if found is not None else None
        if sensor is not None:
            sensor.record(-value, time.monotonic() * 1000 if now_ms is None else now_ms)

    def mutation_quota(self, user: str, client_id: str, api_key: int, version: int) -> MutationQuota:
        """The controller_mutation_rate of a CreateTopics, CreatePartitions or DeleteTopics request."""
        found = self.quota(CONTROLLER_MUTATION_RATE, user, client_id) if self.enabled else None
        if found is None or found[1] <= 0:
            return UNBOUNDED
        tags, rate = found
        bucket = self._mutation_buckets.get(tags)
        if bucket is None:
            if len(self._mutation_buckets) >= _MAX_LOOKUPS:
                self._mutation_buckets.clear()
            bucket = self._mutation_buckets[tags] = TokenBucket(rate, self._mutation_burst_s)
        elif bucket.rate != rate:
            bucket.set_rate(rate)
        return MutationQuota(bucket, strict=version >= STRICT_FROM[api_key])

    def _expire(self, now_ms: float) -> None:
        if now_ms < self._next_expiry_check_ms:
            return
        self._next_expiry_check_ms = now_ms + _EXPIRY_CHECK_INTERVAL_MS
        for name, sensor in list(self._sensors.items()):
            if now_ms - sensor.last_record_ms > INACTIVE_SENSOR_EXPIRY_MS:
                del self._sensors[name]
