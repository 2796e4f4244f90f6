"""Turning the definitions in a kafka-clients jar into the files of ``wire/messages``.

Owns the selection rules: request/response pairs become one module per API (named for the API in
snake_case), the two headers become ``headers.py``, definitions of other kinds ("data") are skipped, as
are APIs whose ``validVersions`` is "none" (removed from Kafka).  ApiVersions is marked as never using a
flexible response header, because clients must be able to read its header before version negotiation.
"""

from __future__ import annotations

from pathlib import Path

from wire.codegen.definitions import DefinitionError, ParsedMessage, load_definition, parse_message
from wire.codegen.jar import read_definitions
from wire.codegen.naming import snake_case
from wire.codegen.render import banner, render_api_module, render_headers_module, render_registry
from wire.schema import ApiSchema

API_VERSIONS_KEY = 18


def generate_sources(jar: Path, kafka_version: str) -> dict[str, str]:
    """Map of file name -> source for every file of ``wire/messages``."""
    requests: dict[int, ParsedMessage] = {}
    responses: dict[int, ParsedMessage] = {}
    headers: dict[str, ParsedMessage] = {}
    for _name, text in read_definitions(jar):
        parsed = parse_message(load_definition(text))
        if parsed.kind == "header":
            headers[parsed.schema.name] = parsed
        elif parsed.kind in ("request", "response"):
            if parsed.api_key is None:
                raise DefinitionError(f"{parsed.schema.name} has no apiKey")
            table = requests if parsed.kind == "request" else responses
            if parsed.api_key in table:
                raise DefinitionError(f"api key {parsed.api_key} defined twice")
            table[parsed.api_key] = parsed
    if set(requests) != set(responses):
        raise DefinitionError(f"unpaired api keys: {sorted(set(requests) ^ set(responses))}")

    files: dict[str, str] = {}
    modules: dict[int, str] = {}
    for key in sorted(requests):
        req, resp = requests[key], responses[key]
        if (req.schema.valid, req.schema.flexible) != (resp.schema.valid, resp.schema.flexible):
            raise DefinitionError(f"api key {key}: request and response versions disagree")
        if req.schema.valid.empty:
            continue
        api = ApiSchema(
            api_key=key,
            name=req.api_name,
            request=req.schema,
            response=resp.schema,
            listeners=req.listeners,
            latest_version_unstable=req.latest_version_unstable or resp.latest_version_unstable,
            flexible_response_header=key != API_VERSIONS_KEY,
        )
        module = snake_case(api.name)
        modules[key] = module
        files[f"{module}.py"] = render_api_module(kafka_version, api)
    files["headers.py"] = render_headers_module(
        kafka_version, headers["RequestHeader"].schema, headers["ResponseHeader"].schema
    )
    files["__init__.py"] = render_registry(kafka_version, modules)
    return files


def write_sources(files: dict[str, str], out_dir: Path, kafka_version: str) -> None:
    """Write ``files`` into ``out_dir``, removing generated files that are no longer produced."""
    out_dir.mkdir(parents=True, exist_ok=True)
    marker = banner(kafka_version).split(" from ")[0]
    for stale in sorted(out_dir.glob("*.py")):
        if stale.name not in files and stale.read_text(encoding="utf-8").startswith(marker):
            stale.unlink()
    for name in sorted(files):
        (out_dir / name).write_text(files[name], encoding="utf-8")
