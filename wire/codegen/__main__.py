"""Command line of the generator.

Usage: ``python -m wire.codegen --kafka-version 4.4.0 [--jar PATH] [--out DIR]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from wire.codegen.generate import generate_sources, write_sources
from wire.codegen.jar import find_jar

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "messages"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m wire.codegen", description="Generate wire/messages from kafka-clients."
    )
    parser.add_argument("--kafka-version", required=True, help="kafka-clients version, e.g. 4.4.0")
    parser.add_argument("--jar", help="path of kafka-clients-<version>.jar (default: $JAVA_LIB, ~/.m2, mvn)")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})"
    )
    args = parser.parse_args(argv)
    jar = find_jar(args.kafka_version, args.jar)
    files = generate_sources(jar, args.kafka_version)
    write_sources(files, args.out, args.kafka_version)
    print(f"wrote {len(files)} files to {args.out} from {jar}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
