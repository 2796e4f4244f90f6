"""Broker configuration from the environment, in the convention of Kafka's container images:
``KAFKA_ADVERTISED_LISTENERS=...`` is ``advertised.listeners=...``.  After the ``KAFKA_`` prefix, the
name is lower-cased and each run of underscores stands for one character: ``_`` for ``.``, ``__``
for ``_`` and ``___`` for ``-``.  ``pykafkad serve --from-env`` reads them (the image's entrypoint
does); they override the config file, and ``--override`` overrides them."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pykafkad.config import ACCEPTED_UNUSED, KEYS, LOGGER_PREFIX, ConfigError

PREFIX = "KAFKA_"

# KAFKA_* variables that are not broker keys: the JVM settings of Kafka's scripts (which the same
# deployment may still set), the image's own version, and what Kubernetes puts in every pod's
# environment for a Service named "kafka" (KAFKA_PORT=tcp://..., KAFKA_SERVICE_HOST=...).
NOT_KEYS = frozenset({
    "KAFKA_HEAP_OPTS", "KAFKA_OPTS", "KAFKA_JMX_OPTS", "KAFKA_JVM_PERFORMANCE_OPTS", "KAFKA_GC_LOG_OPTS",
    "KAFKA_LOG4J_OPTS", "KAFKA_LOG4J_ROOT_LOGLEVEL", "KAFKA_LOG4J_LOGGERS", "KAFKA_TOOLS_LOG4J_LOGLEVEL",
    "KAFKA_DEBUG", "KAFKA_VERSION", "KAFKA_HOME", "KAFKA_CLUSTER_ID",
})
_KUBERNETES_SERVICE = re.compile(r"KAFKA_(SERVICE_HOST|SERVICE_PORT(_\w+)?|PORT(_\d+_(TCP|UDP)(_\w+)?)?)")
_SEPARATORS = {1: ".", 2: "_", 3: "-"}


def key_of(variable: str) -> str:
    """The config key a ``KAFKA_*`` variable names; ConfigError when its underscores say nothing."""
    def separator(run: re.Match[str]) -> str:
        found = _SEPARATORS.get(len(run.group()))
        if found is None:
            raise ConfigError(f"environment variable {variable}: a run of {len(run.group())} underscores "
                              "means nothing (_ is '.', __ is '_', ___ is '-')")
        return found

    name = variable.removeprefix(PREFIX)
    if not name or name.startswith("_") or name.endswith("_"):
        raise ConfigError(f"environment variable {variable}: no config key after {PREFIX}")
    return re.sub(r"_+", separator, name).lower()


def _is_key(key: str) -> bool:
    return (key in KEYS or key in ACCEPTED_UNUSED or key.startswith("listener.name.")
            or (key.startswith(LOGGER_PREFIX) and len(key) > len(LOGGER_PREFIX)))


def environment_config(environ: Mapping[str, str]) -> dict[str, str]:
    """The config keys that ``environ``'s ``KAFKA_*`` variables set.  An unknown key is refused
    (ConfigError naming the variable): a typo in a container's environment would otherwise leave a
    default in place unnoticed."""
    found: dict[str, str] = {}
    for variable in sorted(environ):
        if not variable.startswith(PREFIX) or variable in NOT_KEYS or _KUBERNETES_SERVICE.fullmatch(variable):
            continue
        key = key_of(variable)
        if not _is_key(key):
            raise ConfigError(f"environment variable {variable} names {key}, which is not a broker config key "
                              f"(docs/configuration.md lists them; _ is '.', __ is '_')")
        found[key] = environ[variable]
    return found
