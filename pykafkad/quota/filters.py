"""DescribeClientQuotas' filter, with Kafka's semantics (``ClientQuotaControlManager.describeClientQuotas``).

Each component names an entity type and a match: EXACT (that name), DEFAULT (the default entity)
or ANY (any name of that type, the default included).  An entity matches when it has every type
the components name, each matching; with ``strict`` it must have no other type either.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pykafkad.quota.entity import CLIENT_ID, IP, USER, QuotaEntity
from wire.error_codes import ErrorCode

MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2


class QuotaRequestError(Exception):
    """A request Kafka refuses as a whole: its error code and message."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def parse_filter(components: Iterable[dict[str, Any]]) -> tuple[dict[str, str | None], set[str]]:
    """The components as (type -> exact name, None for the default) and the types matched by any name."""
    exact: dict[str, str | None] = {}
    any_name: set[str] = set()
    for component in components:
        kind, match_type, match = component["entity_type"], component["match_type"], component["match"]
        if not kind:
            raise QuotaRequestError(ErrorCode.INVALID_REQUEST, "Invalid empty entity type.")
        if kind in exact or kind in any_name:
            raise QuotaRequestError(ErrorCode.INVALID_REQUEST,
                                    f"Entity type {kind} cannot appear more than once in the filter.")
        if kind not in (USER, CLIENT_ID, IP):
            raise QuotaRequestError(ErrorCode.UNSUPPORTED_VERSION, f"Unsupported entity type {kind}")
        if match_type == MATCH_EXACT:
            if match is None:
                raise QuotaRequestError(ErrorCode.INVALID_REQUEST,
                                        "Request specified MATCH_TYPE_EXACT, but set match string to null")
            exact[kind] = match
        elif match_type == MATCH_DEFAULT:
            if match is not None:
                raise QuotaRequestError(ErrorCode.INVALID_REQUEST,
                                        "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
            exact[kind] = None
        elif match_type == MATCH_ANY:
            if match is not None:
                raise QuotaRequestError(ErrorCode.INVALID_REQUEST,
                                        "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
            any_name.add(kind)
        else:
            raise QuotaRequestError(ErrorCode.INVALID_REQUEST, f"Unknown match type {match_type}")
    if IP in exact or IP in any_name:
        if {USER, CLIENT_ID} & (set(exact) | any_name):
            raise QuotaRequestError(ErrorCode.INVALID_REQUEST,
                                    "Invalid entity filter component combination. IP filter component should not "
                                    "be used with user or clientId filter component.")
    return exact, any_name


def matches(entity: QuotaEntity, exact: Mapping[str, str | None], any_name: set[str], strict: bool) -> bool:
    entries = entity.entries()
    if strict and len(entries) != len(exact) + len(any_name):
        return False
    for kind, name in exact.items():
        if kind not in entries or entries[kind] != name:
            return False
    return all(kind in entries for kind in any_name)


def describe(quotas: Mapping[QuotaEntity, Mapping[str, float]], components: Iterable[dict[str, Any]],
             strict: bool) -> list[tuple[QuotaEntity, dict[str, float]]]:
    """The entities with quotas that the filter matches, with their quotas."""
    exact, any_name = parse_filter(components)
    return [(entity, dict(values)) for entity, values in quotas.items()
            if values and matches(entity, exact, any_name, strict)]
