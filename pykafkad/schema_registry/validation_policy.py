"""What a topic's configs ask of its produced records' keys and values: no schema check, the schema
id check (``confluent.{key,value}.schema.validation=true``, Confluent Server's names, or
``pykafkad.{key,value}.schema.validation=id``), or the id check and a decode against the schema
(``pykafkad.{key,value}.schema.validation=full``), each with its subject name strategy.

Read on every produced partition, so it imports nothing heavy and answers at once for the topics
that set none of the keys (the default)."""

from __future__ import annotations

from dataclasses import dataclass

from pykafkad.topic_config import SUBJECT_NAME_STRATEGIES

PARTS = ("key", "value")
_KEYS = tuple(k for part in PARTS
              for k in (f"confluent.{part}.schema.validation", f"pykafkad.{part}.schema.validation"))


@dataclass(frozen=True)
class FieldPolicy:
    """The check of one part (``key`` or ``value``) of a topic's records."""

    part: str
    full: bool  # decode each record against its schema, beyond the id check
    strategy: str  # the strategy's short name: TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy

    @property
    def is_key(self) -> bool:
        return self.part == "key"


def field_policies(configs: dict[str, str]) -> tuple[FieldPolicy, ...]:
    """The checks ``configs`` (a topic's overrides, already validated) ask for; () for none."""
    if not any(k in configs for k in _KEYS):
        return ()
    found = []
    for part in PARTS:
        level = configs.get(f"pykafkad.{part}.schema.validation", "none").strip().lower()
        if configs.get(f"confluent.{part}.schema.validation", "false").strip().lower() == "true" and level == "none":
            level = "id"
        if level == "none":
            continue
        strategy = configs.get(f"confluent.{part}.subject.name.strategy", SUBJECT_NAME_STRATEGIES[0]).strip()
        found.append(FieldPolicy(part, level == "full", strategy.rsplit(".", 1)[-1]))
    return tuple(found)
