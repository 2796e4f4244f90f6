"""Raw requests on client-metrics subscriptions (config resource type 16), for the compat and
cluster tests of them."""

from __future__ import annotations

from typing import Any

from compat_tests.raw_kafka import RawConnection

DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS, LIST_CONFIG_RESOURCES = 32, 44, 74
CLIENT_METRICS = 16
SET, DELETE, APPEND = 0, 1, 2


def alter(conn: RawConnection, name: str, ops: list[tuple[str, int, str | None]]) -> tuple[int, str | None]:
    [result] = conn.request(INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
        {"resource_type": CLIENT_METRICS, "resource_name": name,
         "configs": [{"name": k, "config_operation": op, "value": v} for k, op, v in ops]}],
        "validate_only": False})["responses"]
    return result["error_code"], result["error_message"]


def describe(conn: RawConnection, name: str) -> tuple[int, list[tuple[Any, ...]]]:
    [result] = conn.request(DESCRIBE_CONFIGS, 4, {"resources": [
        {"resource_type": CLIENT_METRICS, "resource_name": name, "configuration_keys": None}],
        "include_synonyms": True, "include_documentation": False})["results"]
    return result["error_code"], [
        (c["name"], c["value"], c["config_source"], c["config_type"], c["read_only"], c["is_sensitive"],
         [(s["name"], s["value"], s["source"]) for s in c["synonyms"]]) for c in result["configs"]]


def listed(conn: RawConnection, prefix: str) -> list[str]:
    answer = conn.request(LIST_CONFIG_RESOURCES, 1, {"resource_types": [CLIENT_METRICS]})
    assert answer["error_code"] == 0, answer
    return sorted(r["resource_name"].replace(prefix, "<p>") for r in answer["config_resources"]
                  if r["resource_name"].startswith(prefix))
