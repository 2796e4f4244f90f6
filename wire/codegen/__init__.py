"""The generator of ``wire/messages`` from the JSON message definitions in a kafka-clients jar.

Run it as ``python -m wire.codegen --kafka-version 4.4.0``; :func:`generate_sources` is the
library entry point (used by the staleness test).
"""

from wire.codegen.generate import generate_sources, write_sources
from wire.codegen.jar import find_jar

__all__ = ["find_jar", "generate_sources", "write_sources"]
