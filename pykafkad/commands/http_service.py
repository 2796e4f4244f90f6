"""Running one of pykafkad's HTTP services on its own (``pykafkad registry``, ``pykafkad rest``)
against a Kafka cluster: its listener bound, its client config read like every command's, served
until SIGTERM or Ctrl-C; a failure to start is one line and exit status 1."""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from pykafkad.config import parse_metrics_listener

log = logging.getLogger(__name__)

Serve = Callable[[socket.socket, dict[str, Any]], Awaitable[None]]


def run_http_service(args: argparse.Namespace, name: str, serve: Serve,
                     start_errors: tuple[type[Exception], ...] = ()) -> int:
    """Serve ``serve(sock, client)`` on ``args.listener``; ``start_errors`` end it with their line."""
    from pykafkad.commands.connection import CommandError, client_config
    from pykafkad.schema_registry.server import bind

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("librdkafka").setLevel(logging.ERROR)
    try:
        address = parse_metrics_listener(args.listener)
        client = client_config(args)
    except (ValueError, CommandError) as e:
        print(f"pykafkad: {name}: {e}", file=sys.stderr)
        return 2
    assert address is not None
    client.pop("allow.auto.create.topics", None)
    try:
        sock = bind(*address)
    except OSError as e:
        print(f"pykafkad: {name}: cannot listen on {args.listener}: {e.strerror or e}", file=sys.stderr)
        return 1

    failure: list[str] = []

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:

                async def service() -> None:
                    try:
                        await serve(sock, client)
                    except* start_errors as group:
                        failure.append(str(group.exceptions[0]))
                        nursery.cancel_scope.cancel()

                nursery.start_soon(service)
                async for signum in signals:
                    log.info("received %s, stopping", signal.Signals(signum).name)
                    nursery.cancel_scope.cancel()
                    break

    trio.run(main)
    if failure:
        print(f"pykafkad: {name}: cannot start: {failure[0]}", file=sys.stderr)
        return 1
    return 0
