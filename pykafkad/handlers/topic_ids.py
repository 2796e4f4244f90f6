"""Topics that requests name by id instead of by name (OffsetCommit and OffsetFetch v10, KIP-848;
TxnOffsetCommit v6, KIP-1319): their resolution to names on the way in, and to ids on the way out.
The handlers below them keep working with names."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from wire.error_codes import ErrorCode

if TYPE_CHECKING:
    from pykafkad.broker import Broker

NO_TOPIC_ID = uuid.UUID(int=0)


def named_topics(broker: Broker, topics: list[dict[str, Any]], by_id: bool) -> tuple[list[dict[str, Any]],
                                                                                     list[dict[str, Any]]]:
    """The request's topics with their names (resolved from ``topic_id`` when ``by_id``), and the
    topics whose id names no topic (which Kafka answers UNKNOWN_TOPIC_ID)."""
    if not by_id:
        return topics, []
    named, unknown = [], []
    for t in topics:
        info = broker.metadata.topics_by_id.get(t["topic_id"])
        if info is None:
            unknown.append(t)
        else:
            named.append({**t, "name": info.name})
    return named, unknown


def topic_id(broker: Broker, name: str) -> uuid.UUID:
    """The id of the topic called ``name``; the zero id if there is none (any more)."""
    info = broker.topic(name)
    return info.topic_id if info is not None else NO_TOPIC_ID


def unknown_topic_results(unknown: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The per-partition answer of a commit to topics whose id names no topic."""
    return [{"topic_id": t["topic_id"], "partitions": [
        {"partition_index": p["partition_index"], "error_code": ErrorCode.UNKNOWN_TOPIC_ID}
        for p in t["partitions"]]} for t in unknown]
