"""``pykafkad rest``: the REST proxy on its own, against any Kafka cluster (Apache Kafka included),
until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import socket
import ssl
import sys
from typing import Any


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "rest", parents=[common],
        help="run the REST proxy (Confluent's API) against a Kafka cluster",
        description="A REST proxy that speaks Confluent REST Proxy's API (v2 and v3): Kafka over HTTP for the "
                    "cluster given by --bootstrap-server.")
    parser.add_argument("--listener", default="http://127.0.0.1:8082",
                        help="where to answer, http://host:port (default %(default)s)")
    parser.add_argument("--schema-registry-url", default=None,
                        help="the schema registry for the avro, jsonschema and protobuf formats")
    parser.add_argument("--max-request-bytes", type=int, default=67108864,
                        help="the largest request body read (default %(default)s)")
    parser.add_argument("--producer-records-max", type=int, default=10000,
                        help="the most records in one produce request (default %(default)s)")
    parser.add_argument("--consumer-instance-timeout-ms", type=int, default=300000,
                        help="a consumer instance idle this long is closed (default %(default)s)")
    parser.add_argument("--consumer-instances-max", type=int, default=100,
                        help="the most consumer instances alive at once (default %(default)s)")
    parser.add_argument("--certfile", default=None, help="with an https:// listener: its PEM certificate chain")
    parser.add_argument("--keyfile", default=None, help="with an https:// listener: its PEM private key")
    parser.add_argument("--basic-auth", action="store_true",
                        help="ask each caller for HTTP Basic credentials and log in to the cluster with them "
                             "(SASL: give security.protocol and sasl.mechanism with -X or --command-config)")
    parser.set_defaults(serve_service=run)


def run(args: argparse.Namespace) -> int:
    from pykafkad.commands.http_service import run_http_service
    from pykafkad.rest_proxy.server import RestSettings, serve_rest

    settings = RestSettings(args.max_request_bytes, args.producer_records_max, args.consumer_instance_timeout_ms,
                            args.consumer_instances_max, args.schema_registry_url)

    tls = None
    if args.listener.startswith("https://"):
        if not (args.certfile and args.keyfile):
            print("pykafkad: rest: an https:// listener needs --certfile and --keyfile", file=sys.stderr)
            return 2
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            tls.load_cert_chain(args.certfile, args.keyfile)
        except (OSError, ssl.SSLError) as e:
            print(f"pykafkad: rest: cannot load {args.certfile} and {args.keyfile}: {e}", file=sys.stderr)
            return 2
        args.listener = "http://" + args.listener.removeprefix("https://")

    async def serve(sock: socket.socket, client: dict[str, Any]) -> None:
        sasl = None
        if args.basic_auth:
            if "SASL" not in str(client.get("security.protocol", "")).upper():
                raise ValueError("--basic-auth passes callers' credentials on as SASL: give -X "
                                 "security.protocol=SASL_PLAINTEXT (or SASL_SSL) and -X sasl.mechanism=...")

            def sasl(user: str, password: str) -> dict[str, Any]:
                return {"sasl.username": user, "sasl.password": password}
        await serve_rest(sock, client, settings, sasl, tls)

    return run_http_service(args, "rest", serve, (ValueError,))
