"""``pykafkad registry``: the schema registry on its own, against any Kafka cluster (Apache Kafka
included), until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import socket
from typing import Any


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
    parser.set_defaults(serve_service=run)


def run(args: argparse.Namespace) -> int:
    from pykafkad.commands.http_service import run_http_service
    from pykafkad.schema_registry.schemas_topic import StoreStartError
    from pykafkad.schema_registry.server import serve_registry

    async def serve(sock: socket.socket, client: dict[str, Any]) -> None:
        await serve_registry(sock, client, args.topic, args.max_request_bytes, url=args.advertised_url)

    return run_http_service(args, "registry", serve, (StoreStartError,))
