"""The configuration reference, docs/configuration.md, generated from the key tables.

Every broker key (``config.KEYS``), the Kafka keys accepted with no effect
(``config.ACCEPTED_UNUSED``), the topic-level keys (``topic_config.TOPIC_KEYS``) and the
internal keys, each with its type, default, valid values, whether AlterConfigs changes it at
run time (``config_changes.DYNAMIC_BROKER_KEYS``) and whether pykafkad honours it.  The page is
committed; ``make docs`` (``python -m pykafkad.config_reference``) rewrites it, and
pykafkad/tests/test_config_reference.py fails when it is stale.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from pykafkad.config import ACCEPTED_UNUSED, KEYS, KRAFT_KEYS, LONG_MAX, ConfigKey, build_config
from pykafkad.config_changes import DYNAMIC_BROKER_KEYS
from pykafkad.topic_config import TOPIC_KEYS, TopicConfigKey, topic_setting

PAGE = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"

_INTRO = """\
# Configuration reference

<!-- Generated from pykafkad/config.py and pykafkad/topic_config.py by `make docs`; do not edit. -->

pykafkad reads a `server.properties` file and `--override KEY=VALUE` pairs, as
`kafka-server-start.sh` does: `pykafkad serve configs/server.properties --override broker.id=2`.
Key names, types and defaults are Apache Kafka's. An override wins over the file; `node.id` and
`broker.id` name one id, so an override of either wins over the file's value of either, and two
different ids from one source are refused. Every value is checked at start-up: a bad one stops the
broker with one line naming the key. An unknown key is logged as a warning and ignored.

`pykafkad serve --from-env` also takes keys from `KAFKA_*` environment variables, as Kafka's
container images do (the pykafkad image's entrypoint passes it): after the prefix, upper case
becomes lower case, `_` stands for `.`, `__` for `_` and `___` for `-`, so
`KAFKA_ADVERTISED_LISTENERS` is `advertised.listeners` and
`KAFKA_LISTENER_NAME_SASL__PLAINTEXT_PLAIN_SASL_JAAS_CONFIG` is
`listener.name.sasl_plaintext.plain.sasl.jaas.config`. They win over the file, and `--override`
wins over them. A variable that names no key stops the start with one line (a typo in a
container's environment would otherwise go unnoticed); the JVM settings of Kafka's scripts
(`KAFKA_HEAP_OPTS`, `KAFKA_OPTS`...) and the variables Kubernetes sets for a Service named
`kafka` (`KAFKA_PORT`, `KAFKA_SERVICE_HOST`...) are skipped. `--print-config` prints every key's
value at start-up, as Kafka logs its KafkaConfig, with passwords shown as `[hidden]`.

**Honoured** says which modules of `pykafkad/` act on a key. A key marked **accepted only** is
taken so that Kafka configs start unchanged, but it has no effect in pykafkad: when it is set, the
broker says so in one WARN line at start-up. **Dynamic** keys change at run time through
AlterConfigs / IncrementalAlterConfigs (`kafka-configs.sh --alter --entity-type brokers`), for one
broker (`--entity-name <id>`) or as the cluster-wide default (`--entity-default`); the others need
a restart.

- [Broker keys](#broker-keys)
- [Kafka keys accepted with no effect](#kafka-keys-accepted-with-no-effect)
- [Topic-level keys](#topic-level-keys)
- [Prefixed keys](#prefixed-keys)
- [Internal keys](#internal-keys)
"""


def _value(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "(empty)"
    if str(value) == str(LONG_MAX):
        return f"{LONG_MAX} (no limit)"
    if value == "":
        return "(empty)"
    return str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`" if text not in ("(none)", "(empty)") else text


def _valid(type_: str, check: Any, choices: tuple[str, ...] | None = None) -> str:
    if choices:
        return "one of " + ", ".join(choices)
    if check is not None:
        return str(check.valid)
    return "true, false" if type_ == "boolean" else ""


def _honoured(by: str) -> str:
    return "accepted only" if not by else ", ".join(f"`{m.strip()}`" for m in by.split(","))


def _broker_row(key: ConfigKey) -> str:
    default = "(hidden)" if key.type == "password" and key.default is not None else _code(_value(key.default))
    dynamic = "per broker, cluster-wide" if key.name in DYNAMIC_BROKER_KEYS else "no"
    cells = [f"`{key.name}`", key.type, default, _valid(key.type, key.check), dynamic, _honoured(key.by), key.doc]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _topic_row(key: TopicConfigKey, defaults: Any) -> str:
    broker = key.broker_synonyms[0] if key.broker_synonyms else ""
    by = key.by or (KEYS[broker].by if broker else "replica/replication_quota.py")
    # The broker key's line, without what concerns the broker keys alone.
    doc = key.doc or re.sub(r" \(topic: [^)]*\)|; wins over [^;.]*", "", KEYS[broker].doc)
    default = _value(topic_setting({}, defaults, key.name))
    cells = [f"`{key.name}`", key.type, _code(default), _valid(key.type, key.check, key.choices),
             ", ".join(f"`{b}`" for b in key.broker_synonyms) or "(none)", _honoured(by), doc]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def render() -> str:
    """The whole page."""
    lines = [_INTRO]
    lines += ["## Broker keys", "",
              "| Key | Type | Default | Valid values | Dynamic | Honoured | Description |",
              "|---|---|---|---|---|---|---|"]
    lines += [_broker_row(k) for _, k in sorted(KEYS.items()) if not k.internal]
    accepted = sorted(name for name, k in KEYS.items() if k.accepted_only and not k.internal)
    lines += ["", f"{len(accepted)} of these are accepted only: " + ", ".join(f"`{n}`" for n in accepted) + ".", ""]
    lines += ["## Kafka keys accepted with no effect", "",
              "Keys a stock Kafka `server.properties` carries that pykafkad takes without checking or using "
              "them. DescribeConfigs does not list them. Set, they are named in one WARN line at start-up; the "
              "KRaft keys (" + ", ".join(f"`{k}`" for k in KRAFT_KEYS) + ") get a line of their own saying "
              "that pykafkad runs as a single node or on ZooKeeper (`zookeeper.connect`) and what this "
              "broker will do instead.", "",
              "| Key | Why it has no effect |", "|---|---|"]
    lines += [f"| `{name}` | {_cell(why)} |" for name, why in sorted(ACCEPTED_UNUSED.items())]
    defaults = build_config({})
    lines += ["", "## Topic-level keys", "",
              "Set per topic at creation (`kafka-topics.sh --config`) or at run time (`kafka-configs.sh "
              "--alter --entity-type topics`), all of them dynamic. A topic that does not set one takes its "
              "broker key's value (the first of the broker keys listed that is set); the default shown is "
              "what a topic gets from the broker's defaults, in the topic key's unit.", "",
              "| Key | Type | Default | Valid values | Broker key | Honoured | Description |",
              "|---|---|---|---|---|---|---|"]
    lines += [_topic_row(k, defaults) for _, k in sorted(TOPIC_KEYS.items()) if not k.internal]
    lines += ["", "## Prefixed keys", "",
              "- `listener.name.<listener>.<key>`: a key for one listener only, as Kafka's, e.g. "
              "`listener.name.sasl_ssl.plain.sasl.jaas.config` (`security/sasl.py`).",
              "- `log4j.logger.<logger>=<LEVEL>`: the level of one of the broker's loggers "
              "(`broker_logging.py`).", ""]
    lines += ["## Internal keys", "",
              "For tests only, as Kafka's `defineInternal` keys: accepted, never listed by DescribeConfigs. "
              "Kafka 4 refuses `segment.bytes` and `log.segment.bytes` below 1 MiB; these make smaller "
              "segments. Kafka has the topic key; the broker key is pykafkad's, named as Kafka names "
              "`internal.metadata.log.segment.bytes`.", "",
              "| Key | Level | Type | Honoured | Description |", "|---|---|---|---|---|"]
    lines += [f"| `{k.name}` | broker | {k.type} | {_honoured(k.by)} | {_cell(k.doc)} |"
              for _, k in sorted(KEYS.items()) if k.internal]
    lines += [f"| `{k.name}` | topic | {k.type} | {_honoured('log/manager.py')} | {_cell(k.doc)} |"
              for _, k in sorted(TOPIC_KEYS.items()) if k.internal]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pykafkad.config_reference", description=__doc__)
    parser.add_argument("output", nargs="?", type=Path, default=PAGE, help=f"where to write it ({PAGE})")
    args = parser.parse_args(argv)
    args.output.write_text(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
