"""Rendering schema objects as Python source for ``wire/messages``.

The output is a deterministic function of the schemas: fields keep their definition order, modules and
registry entries are sorted, and every value is written as a literal or a constructor call of a type from
:mod:`wire.schema`.
"""

from __future__ import annotations

import json
from typing import Any

from wire.schema import NEVER, TYPE_DEFAULT, ApiSchema, ArrayOf, Field, MessageSchema, Versions

INDENT = "    "


def banner(kafka_version: str) -> str:
    """First line of every generated file."""
    return f"# Generated from kafka-clients {kafka_version} by wire.codegen; do not edit."


def _str(text: str) -> str:
    return json.dumps(text)


def _versions(v: Versions) -> str:
    return repr(v)


def _value(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _str(value)
    raise TypeError(f"cannot render default {value!r}")


class _Names:
    """Collects which names from wire.schema a module uses, so its import line lists exactly those."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def use(self, name: str) -> str:
        self.used.add(name)
        return name

    def versions(self, v: Versions) -> str:
        self.use("NEVER" if v.empty else "Versions")
        return _versions(v)


def _field_args(f: Field, names: _Names) -> str:
    parts = []
    if not f.nullable.empty:
        parts.append(f"nullable={names.versions(f.nullable)}")
    if f.tag is not None:
        parts.append(f"tag={f.tag}")
        parts.append(f"tagged={names.versions(f.tagged)}")
    if f.default is not TYPE_DEFAULT:
        parts.append(f"default={_value(f.default)}")
    if f.flexible is not None:
        parts.append(f"flexible={names.versions(f.flexible)}")
    return "".join(", " + p for p in parts)


def _render_fields(fields: tuple[Field, ...], depth: int, names: _Names) -> list[str]:
    pad = INDENT * depth
    lines: list[str] = []
    for f in fields:
        names.use("Field")
        head = f"{pad}Field({_str(f.name)}, "
        tail = f", {names.versions(f.versions)}{_field_args(f, names)}),"
        ftype = f.type
        if isinstance(ftype, str):
            lines.append(f"{head}{_str(ftype)}{tail}")
            continue
        wrap = ""
        if isinstance(ftype, ArrayOf):
            names.use("ArrayOf")
            if isinstance(ftype.item, str):
                lines.append(f"{head}ArrayOf({_str(ftype.item)}){tail}")
                continue
            struct = ftype.item
            wrap = ")"
            head += "ArrayOf("
        else:
            struct = ftype
        names.use("Struct")
        lines.append(f"{head}Struct({_str(struct.name)}, (")
        lines.extend(_render_fields(struct.fields, depth + 1, names))
        lines.append(f"{pad})){wrap}{tail}")
    return lines


def render_message(var: str, schema: MessageSchema, names: _Names) -> list[str]:
    names.use("MessageSchema")
    lines = [
        f"{var} = MessageSchema(",
        f"{INDENT}name={_str(schema.name)},",
        f"{INDENT}valid={names.versions(schema.valid)},",
        f"{INDENT}flexible={names.versions(schema.flexible)},",
        f"{INDENT}fields=(",
    ]
    lines.extend(_render_fields(schema.fields, 2, names))
    lines.append(f"{INDENT}),")
    lines.append(")")
    return lines


def _module(kafka_version: str, doc: str, names: _Names, body: list[str]) -> str:
    imports = ", ".join(sorted(names.used, key=lambda n: (not n.isupper(), n)))
    head = [
        banner(kafka_version),
        f'"""{doc}"""',
        "",
        f"from wire.schema import {imports}",
        "",
    ]
    return "\n".join(head + body) + "\n"


def render_api_module(kafka_version: str, api: ApiSchema) -> str:
    """Source of ``wire/messages/<api>.py``: REQUEST, RESPONSE and API."""
    names = _Names()
    body = render_message("REQUEST", api.request, names)
    body.append("")
    body += render_message("RESPONSE", api.response, names)
    body.append("")
    names.use("ApiSchema")
    body += [
        "API = ApiSchema(",
        f"{INDENT}api_key={api.api_key},",
        f"{INDENT}name={_str(api.name)},",
        f"{INDENT}request=REQUEST,",
        f"{INDENT}response=RESPONSE,",
        f"{INDENT}listeners=({''.join(_str(x) + ', ' for x in api.listeners).rstrip(' ')}),",
        f"{INDENT}latest_version_unstable={api.latest_version_unstable!r},",
        f"{INDENT}flexible_response_header={api.flexible_response_header!r},",
        ")",
    ]
    doc = f"Schemas of the {api.name} API (key {api.api_key}): request and response bodies."
    return _module(kafka_version, doc, names, body)


def render_headers_module(kafka_version: str, request: MessageSchema, response: MessageSchema) -> str:
    """Source of ``wire/messages/headers.py``: REQUEST_HEADER and RESPONSE_HEADER."""
    names = _Names()
    body = render_message("REQUEST_HEADER", request, names)
    body.append("")
    body += render_message("RESPONSE_HEADER", response, names)
    return _module(kafka_version, "Schemas of the request and response headers.", names, body)


def render_registry(kafka_version: str, modules: dict[int, str]) -> str:
    """Source of ``wire/messages/__init__.py``: ``APIS``, which imports each API's module when first asked."""
    lines = [
        banner(kafka_version),
        f'"""APIs defined by kafka-clients {kafka_version}: ``APIS`` maps api key to schema."""',
        "",
        "from wire.api_registry import ApiRegistry",
        "from wire.messages.headers import REQUEST_HEADER, RESPONSE_HEADER",
        "",
        f"KAFKA_VERSION = {_str(kafka_version)}",
        "",
        "APIS = ApiRegistry(__name__, {",
    ]
    lines += [f"{INDENT}{key}: {_str(modules[key])}," for key in sorted(modules)]
    lines += [
        "})",
        "",
        '__all__ = ["APIS", "KAFKA_VERSION", "REQUEST_HEADER", "RESPONSE_HEADER"]',
    ]
    return "\n".join(lines) + "\n"


__all__ = ["NEVER", "banner", "render_api_module", "render_headers_module", "render_registry"]
