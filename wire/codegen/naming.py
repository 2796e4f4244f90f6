"""How Kafka's CamelCase names become Python names.

Rule: a name is split into words at every upper-case letter that follows a lower-case letter or a
digit, and before the last capital of a run of capitals that is followed by a lower-case letter (so a
run of capitals counts as one word: "HTTPPort" -> "http_port").  Digits stay with the word before them.
The words are joined with "_" and lower-cased.  Examples: "ClientSoftwareName" -> "client_software_name",
"TopicId" -> "topic_id", "IsrNodes" -> "isr_nodes", "KRaftVersion" -> "k_raft_version",
"Enable2Pc" -> "enable2_pc", "V3AndBelowTopics" -> "v3_and_below_topics".
"""

from __future__ import annotations

import re

_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """Convert a CamelCase Kafka name to snake_case."""
    return _BOUNDARY.sub("_", name).lower()


def api_base_name(message_name: str) -> str:
    """``"ProduceRequest"`` -> ``"Produce"``; the API's name without its Request/Response suffix."""
    for suffix in ("Request", "Response"):
        if message_name.endswith(suffix):
            return message_name[: -len(suffix)]
    raise ValueError(f"not a request or response name: {message_name!r}")
