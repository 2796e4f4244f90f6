"""AlterClientQuotas' checks and the config changes they make (Kafka's
``ClientQuotaControlManager.alterClientQuotas``), kept where Kafka's ZooKeeper mode kept them.

Each entry is checked on its own: an unknown entity type, a duplicate or empty name, an IP
entity (IP quotas are not served), a duplicate key, an unknown key or a bad value fails that
entry with INVALID_REQUEST and the reason, and the others go ahead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pykafkad.metadata import znodes
from pykafkad.quota.entity import CLIENT_ID, IP, QUOTA_KEYS, USER, QuotaEntity, format_value, value_problem
from wire.error_codes import ErrorCode


@dataclass
class Alteration:
    """One entry of the request: its entity as sent, and either a problem or the changes to make."""

    wire_entity: list[dict[str, Any]]
    entity: QuotaEntity | None = None
    path: str = ""
    changes: dict[str, str | None] = field(default_factory=dict)
    error: tuple[ErrorCode, str] | None = None


def entity_path(entity: QuotaEntity) -> str:
    """The config node of a user / client id entity."""
    if entity.has_user and entity.has_client_id:
        return znodes.user_client_config_path(entity.user, entity.client_id)
    if entity.has_user:
        return znodes.user_config_path(entity.user)
    return znodes.client_config_path(entity.client_id)


def _entity(wire_entity: list[dict[str, Any]]) -> QuotaEntity:
    """The entity an entry names; raises ValueError with Kafka's message when it is not one we keep."""
    if not wire_entity:
        raise ValueError("Invalid empty client quota entity")
    names: dict[str, str | None] = {}
    for item in wire_entity:
        kind, name = item["entity_type"], item["entity_name"]
        if kind in names:
            raise ValueError(f"Invalid client quota entity, duplicate entity entry {kind}")
        if kind not in (USER, CLIENT_ID, IP):
            raise ValueError(f"Unhandled client quota entity type: {kind}")
        names[kind] = name
        if name is not None and not name:
            raise ValueError(f"Empty {kind} not supported")
    if IP in names:
        if len(names) > 1:
            raise ValueError("Invalid quota entity combination, IP entity should not be combined with User or ClientId")
        raise ValueError("IP quotas (connection_creation_rate) are not supported by this broker")
    kwargs = {"user" if kind == USER else "client_id": name for kind, name in names.items()}
    return QuotaEntity.of(**kwargs)


def plan(entries: list[dict[str, Any]]) -> list[Alteration]:
    """Check every entry; each comes back with its changes or its problem."""
    out: list[Alteration] = []
    seen: set[QuotaEntity] = set()
    for entry in entries:
        alteration = Alteration(entry["entity"])
        out.append(alteration)
        try:
            entity = alteration.entity = _entity(entry["entity"])
        except ValueError as e:
            alteration.error = (ErrorCode.INVALID_REQUEST, str(e))
            continue
        if entity in seen:
            alteration.error = (ErrorCode.INVALID_REQUEST, f"Ignoring duplicate entity {entity.describe()}")
            continue
        seen.add(entity)
        alteration.path = entity_path(entity)
        keys = [op["key"] for op in entry["ops"]]
        duplicate = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
        if duplicate is not None:
            alteration.error = (ErrorCode.INVALID_REQUEST, f"Duplicate quota key {duplicate} not updating quota "
                                                           f"for this entity {entity.describe()}")
            continue
        for op in entry["ops"]:
            if op["remove"]:
                if op["key"] in QUOTA_KEYS:  # never a SCRAM credential kept in the same node
                    alteration.changes[op["key"]] = None
                continue
            problem = value_problem(op["key"], op["value"])
            if problem is not None:
                alteration.error = (ErrorCode.INVALID_REQUEST, problem)
                alteration.changes.clear()
                break
            alteration.changes[op["key"]] = format_value(op["key"], op["value"])
    return out
