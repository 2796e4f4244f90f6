"""``pykafkad registry``: the schema registry on its own, against any Kafka cluster (Apache Kafka
included), until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import logging
import signal
import sys

import trio

from pykafkad.config import parse_metrics_listener

log = logging.getLogger(__name__)


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "registry", parents=[common],
        help="run the schema registry (Confluent's API) against a Kafka cluster",
        description="A schema registry that speaks Confluent Schema Registry's REST API, keeping its schemas "
                    "in a compacted topic of the cluster given by --bootstrap-server.")
    parser.add_argument("--listener", default="http://127.0.0.1:8081",
                        help="where to answer, http://host:port (default %(default)s)")
    parser.add_argument("--topic", default="_schemas", help="the registry's topic (default %(default)s)")
    parser.add_argument("--advertised-url", default=None,
                        help="the URL other instances forward writes to (default: --listener's, with a "
                             "wildcard address replaced by this machine's name)")
    parser.add_argument("--max-request-bytes", type=int, default=1048576,
                        help="the largest request body read (default %(default)s)")
    parser.set_defaults(serve_registry=run)


def run(args: argparse.Namespace) -> int:
    from pykafkad.commands.connection import CommandError, client_config
    from pykafkad.schema_registry.schemas_topic import StoreStartError
    from pykafkad.schema_registry.server import bind, serve_registry

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("librdkafka").setLevel(logging.ERROR)
    try:
        address = parse_metrics_listener(args.listener)
        client = client_config(args)
    except (ValueError, CommandError) as e:
        print(f"pykafkad: registry: {e}", file=sys.stderr)
        return 2
    assert address is not None
    client.pop("allow.auto.create.topics", None)
    try:
        sock = bind(*address)
    except OSError as e:
        print(f"pykafkad: registry: cannot listen on {args.listener}: {e.strerror or e}", file=sys.stderr)
        return 1

    failure: list[str] = []

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:

                async def registry() -> None:
                    try:
                        await serve_registry(sock, client, args.topic, args.max_request_bytes,
                                             url=args.advertised_url)
                    except* StoreStartError as group:
                        failure.append(str(group.exceptions[0]))
                        nursery.cancel_scope.cancel()

                nursery.start_soon(registry)
                async for signum in signals:
                    log.info("received %s, stopping", signal.Signals(signum).name)
                    nursery.cancel_scope.cancel()
                    break

    trio.run(main)
    if failure:
        print(f"pykafkad: registry: cannot start: {failure[0]}", file=sys.stderr)
        return 1
    return 0
