"""The ``pykafkad`` command line: ``pykafkad serve [CONFIG_FILE] [--override KEY=VALUE ...]`` and
``pykafkad pipeline NAME ...`` (the PySpark pipelines of pykafkad.pipelines)."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from pathlib import Path

from pykafkad import __version__
from pykafkad.broker_logging import configure as configure_logging
from pykafkad.config import BrokerConfig, ConfigError, load_config, startup_warnings

log = logging.getLogger("pykafkad")

# The defaults that decide where a broker started without a config file listens and writes.
_SHOWN_DEFAULTS = ("node.id", "listeners", "log.dirs")


def _parser(with_commands: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pykafkad", description="A Kafka-protocol broker.")
    parser.add_argument("--version", action="version", version=f"pykafkad {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the broker (like kafka-server-start.sh)")
    serve.add_argument("config", nargs="?", type=Path, help="a server.properties file")
    serve.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                       help="set a config key, overriding the file (repeatable)")
    serve.add_argument("--from-env", action="store_true",
                       help="also take config keys from KAFKA_* environment variables, as Kafka's container "
                            "images do (KAFKA_LOG_DIRS is log.dirs, __ stands for _); over the file, under "
                            "--override")
    serve.add_argument("--print-config", action="store_true",
                       help="print every key's value at start-up, passwords hidden")
    serve.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    if not with_commands:
        return parser
    from pykafkad.commands import acl, cluster, group, reassign, records, schema, topic
    from pykafkad.commands.connection import add_arguments

    common = argparse.ArgumentParser(add_help=False)
    add_arguments(common)
    for module in (cluster, topic, group, records, reassign, acl, schema):
        module.register(commands, common)
    from pykafkad.rest_proxy import command as rest_command
    from pykafkad.schema_registry import command as registry_command

    registry_command.register(commands, common)
    rest_command.register(commands, common)
    from pykafkad.pipelines import PIPELINES  # names only; pyspark is imported when one runs

    pipeline = commands.add_parser(
        "pipeline", help="run a PySpark pipeline (needs pyspark)",
        description="PySpark pipelines: " + "; ".join(f"{k}: {v}" for k, v in PIPELINES.items()),
    )
    pipeline.add_argument("name", choices=sorted(PIPELINES), help="the pipeline")
    pipeline.add_argument("args", nargs=argparse.REMAINDER, help="its options (NAME --help lists them)")
    return parser


def _run_command(args: argparse.Namespace) -> int:
    """A command for people (topic, group, ...): its report, or one line saying what failed and why."""
    from pykafkad.commands.connection import CommandError
    from pykafkad.commands.output import show

    # librdkafka's own connection chatter goes to its log callback, not the terminal.
    logging.getLogger().setLevel(logging.CRITICAL)
    try:
        report = args.run(args)
    except CommandError as e:
        print(f"pykafkad: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    try:
        show(report, args.json)
    except BrokenPipeError:
        # Piped into `head` and the like: the reader has what it wanted.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return report.exit_code


def _run_pipeline(name: str, args: list[str]) -> int:
    import importlib
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:
        print("pykafkad: pipelines need PySpark: `pip install 'pykafkad[spark]'` "
              "(or `make spark-deps` in a checkout), and Java 17", file=sys.stderr)
        return 2
    module = importlib.import_module(f"pykafkad.pipelines.{name}")
    return int(module.main(args))


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    found: list[BaseException] = []
    for e in group.exceptions:
        found += _leaves(e) if isinstance(e, BaseExceptionGroup) else [e]
    return found


def _report_defaults(config: BrokerConfig) -> None:
    """Without a config file, say which of Kafka's defaults decide where the broker listens and writes."""
    shown = {
        "node.id": str(config.node_id),
        "listeners": ",".join(f"{lst.name}://{lst.host}:{lst.port}" for lst in config.listeners),
        "log.dirs": ",".join(str(d) for d in config.log_dirs),
    }
    defaults = [f"{k}={shown[k]}" for k in _SHOWN_DEFAULTS if not _overridden(config, k)]
    if defaults:
        log.info("no config file given: using the defaults %s (pass a server.properties such as "
                 "configs/server.properties, or --override KEY=VALUE)", ", ".join(defaults))


def _overridden(config: BrokerConfig, key: str) -> bool:
    synonyms = {"node.id": ("node.id", "broker.id"), "log.dirs": ("log.dirs", "log.dir")}.get(key, (key,))
    return any(k in config.explicit for k in synonyms)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # The commands for people import librdkafka, rich and their own protocol client (about 0.1 s):
    # a broker's start, measured against Kafka's in benchmarks/, does not wait for them.
    args = _parser(with_commands=argv[:1] != ["serve"]).parse_args(argv)
    if args.command == "pipeline":
        return _run_pipeline(args.name, args.args)
    if hasattr(args, "serve_service"):
        return int(args.serve_service(args))
    if hasattr(args, "run"):
        return _run_command(args)
    logging.basicConfig(
        level=args.log_level, stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.command == "serve":
        if args.config is not None and not args.config.is_file():
            print(f"pykafkad: config file {args.config} not found", file=sys.stderr)
            return 2
        try:
            environment = None
            if args.from_env:
                from pykafkad.config_environment import environment_config
                environment = environment_config(os.environ)
            config = load_config(args.config, args.override, environment)
        except ConfigError as e:
            print(f"pykafkad: bad configuration: {e}", file=sys.stderr)
            return 2
        try:
            configure_logging(config.logging_settings(), getattr(logging, args.log_level))
        except OSError as e:
            print(f"pykafkad: cannot start: logging.file={config['logging.file']}: {e.strerror or e}",
                  file=sys.stderr)
            return 1
        if args.print_config:
            print("pykafkad config values:\n" + "\n".join(f"\t{line}" for line in config.shown()), flush=True)
        if args.config is None and environment is None:
            _report_defaults(config)
        for line in startup_warnings(config):
            log.warning("%s", line)
        # The broker's modules make some 70,000 objects that live as long as the process.
        # Collecting while they load was a fifth of the import time, and each full collection after
        # would walk them again: they load with the collector off and are then frozen out of its way.
        gc.disable()
        try:
            from pykafkad.network.server import StartupError, run_server
        finally:
            gc.freeze()
            gc.enable()

        failed: list[BaseException] = []
        try:
            run_server(config)
        except* StartupError as group:
            # Raised inside the server's nurseries too (a listener lost after loading), so it
            # may come in an exception group: one line either way.
            failed += _leaves(group)
        except* OSError as group:
            failed += _leaves(group)
        if failed:
            print(f"pykafkad: cannot start: {failed[0]}", file=sys.stderr)
            return 1
        return 0
    return 2
