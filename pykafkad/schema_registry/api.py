"""Confluent Schema Registry's REST API over the registry, as a Starlette app: its paths, query
parameters, bodies, content types, status codes and ``{"error_code", "message"}`` error bodies."""

from __future__ import annotations

import json
import logging
from typing import Any

import trio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pykafkad.schema_registry import errors
from pykafkad.schema_registry.protobuf_schema import ProtobufSchema
from pykafkad.schema_registry.registry import Registry
from pykafkad.schema_registry.registry_state import SchemaVersion
from pykafkad.schema_registry.schema_types import SCHEMA_TYPES, parse_stored

log = logging.getLogger(__name__)

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
# What Confluent's registry takes as a request body.
ACCEPTED_TYPES = ("application/vnd.schemaregistry.v1+json", "application/vnd.schemaregistry+json",
                  "application/json", "application/octet-stream")
DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024


class RegistryResponse(JSONResponse):
    media_type = CONTENT_TYPE

    def render(self, content: Any) -> bytes:
        return json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode()


async def _formatted(entry: SchemaVersion, request: Request) -> str:
    """The schema text, or with ``format=serialized`` a Protobuf schema's base64 descriptor."""
    if request.query_params.get("format") == "serialized" and entry.schema_type == "PROTOBUF":
        parsed = await trio.to_thread.run_sync(parse_stored, entry.schema, entry.schema_type)
        if isinstance(parsed, ProtobufSchema):
            return parsed.serialized()
    return entry.schema


def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "false").lower() == "true"


def _schema_id(request: Request) -> int:
    text = request.path_params["id"]
    if not (text.isascii() and text.lstrip("-").isdigit()):
        raise errors.schema_not_found()
    return int(text)


class RegistryApi:
    def __init__(self, registry: Registry, max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> None:
        self.registry = registry
        self.max_request_bytes = max_request_bytes

    async def _body(self, request: Request) -> dict[str, Any]:
        kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if kind not in ACCEPTED_TYPES:
            raise errors.RegistryError(415, 415, f"HTTP 415 Unsupported Media Type: {kind}; send "
                                                 f"{CONTENT_TYPE} or application/json")
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_request_bytes:
            raise self._too_large()
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > self.max_request_bytes:
                raise self._too_large()
        try:
            found = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise errors.bad_request(f"the body is not JSON: {e}") from None
        if not isinstance(found, dict):
            raise errors.unprocessable("the body must be a JSON object")
        return found

    def _too_large(self) -> errors.RegistryError:
        return errors.RegistryError(413, 413, f"the body is larger than schema.registry.max.request.bytes "
                                              f"({self.max_request_bytes})")

    async def _schema_body(self, request: Request) -> tuple[str, str, list[Any]]:
        body = await self._body(request)
        schema = body.get("schema")
        if not isinstance(schema, str):
            raise errors.unprocessable("the body needs \"schema\", a string holding the schema")
        schema_type = body.get("schemaType") or "AVRO"
        references = body.get("references") or []
        if not isinstance(schema_type, str) or not isinstance(references, list):
            raise errors.unprocessable("\"schemaType\" must be a string and \"references\" a list")
        return schema, schema_type.upper(), references

    # -- routes ------------------------------------------------------------------------------------

    async def root(self, request: Request) -> Response:
        return RegistryResponse({})

    async def schema_types(self, request: Request) -> Response:
        return RegistryResponse(list(SCHEMA_TYPES))

    async def subjects(self, request: Request) -> Response:
        prefix = request.query_params.get("subjectPrefix", "")
        return RegistryResponse(self.registry.state.subject_names(_flag(request, "deleted"), prefix))

    async def subject_versions(self, request: Request) -> Response:
        subject = request.path_params["subject"]
        if request.method == "POST":
            schema, schema_type, references = await self._schema_body(request)
            schema_id = await self.registry.register(subject, schema, schema_type, references,
                                                     _flag(request, "normalize"))
            return RegistryResponse({"id": schema_id})
        return RegistryResponse(self.registry.versions(subject, _flag(request, "deleted")))

    async def subject(self, request: Request) -> Response:
        subject = request.path_params["subject"]
        if request.method == "DELETE":
            return RegistryResponse(await self.registry.delete_subject(subject, _flag(request, "permanent")))
        schema, schema_type, _ = await self._schema_body(request)
        found = await self.registry.lookup(subject, schema, schema_type, _flag(request, "normalize"),
                                           _flag(request, "deleted"))
        return RegistryResponse(found.answer())

    async def version(self, request: Request) -> Response:
        subject, version = request.path_params["subject"], request.path_params["version"]
        if request.method == "DELETE":
            return RegistryResponse(await self.registry.delete_version(subject, version, _flag(request, "permanent")))
        found = self.registry.version(subject, version, _flag(request, "deleted"))
        return RegistryResponse({**found.answer(), "schema": await _formatted(found, request)})

    async def version_schema(self, request: Request) -> Response:
        found = self.registry.version(request.path_params["subject"], request.path_params["version"],
                                      _flag(request, "deleted"))
        return Response(found.schema, media_type=CONTENT_TYPE)

    async def referenced_by(self, request: Request) -> Response:
        self.registry.version(request.path_params["subject"], request.path_params["version"], True)
        return RegistryResponse([])

    async def schema_by_id(self, request: Request) -> Response:
        found = self.registry.by_id(_schema_id(request))
        body: dict[str, Any] = {"schema": await _formatted(found, request)}
        if found.schema_type != "AVRO":
            body["schemaType"] = found.schema_type
        if found.references:
            body["references"] = list(found.references)
        return RegistryResponse(body)

    async def schema_text_by_id(self, request: Request) -> Response:
        return Response(self.registry.by_id(_schema_id(request)).schema, media_type=CONTENT_TYPE)

    async def subjects_by_id(self, request: Request) -> Response:
        held = self.registry.id_holders(_schema_id(request), _flag(request, "deleted"))
        return RegistryResponse(sorted({h.subject for h in held}))

    async def versions_by_id(self, request: Request) -> Response:
        held = self.registry.id_holders(_schema_id(request), _flag(request, "deleted"))
        return RegistryResponse([{"subject": h.subject, "version": h.version} for h in held])

    async def config(self, request: Request) -> Response:
        subject = request.path_params.get("subject")
        state = self.registry.state
        if request.method == "PUT":
            body = await self._body(request)
            level = await self.registry.set_level(subject, body.get("compatibility"))
            return RegistryResponse({"compatibility": level})
        if request.method == "DELETE":
            return RegistryResponse({"compatibilityLevel": await self.registry.delete_level(subject)})
        if subject is not None and subject not in state.levels and not _flag(request, "defaultToGlobal"):
            raise errors.subject_compatibility_not_configured(subject)
        return RegistryResponse({"compatibilityLevel": state.level(subject)})

    async def mode(self, request: Request) -> Response:
        subject = request.path_params.get("subject")
        state = self.registry.state
        if request.method == "PUT":
            body = await self._body(request)
            return RegistryResponse({"mode": await self.registry.set_mode(subject, body.get("mode"))})
        if request.method == "DELETE":
            assert subject is not None
            return RegistryResponse({"mode": await self.registry.delete_mode(subject)})
        if subject is not None and subject not in state.modes and not _flag(request, "defaultToGlobal"):
            raise errors.subject_mode_not_configured(subject)
        return RegistryResponse({"mode": state.mode(subject)})

    async def compatibility(self, request: Request) -> Response:
        subject = request.path_params["subject"]
        version = request.path_params.get("version")
        schema, schema_type, _ = await self._schema_body(request)
        if version is not None and subject not in self.registry.state.subjects:
            raise errors.subject_not_found(subject)
        reasons = await self.registry.compatibility(subject, version, schema, schema_type,
                                                    _flag(request, "normalize"))
        body: dict[str, Any] = {"is_compatible": not reasons}
        if _flag(request, "verbose"):
            body["messages"] = reasons
        return RegistryResponse(body)


async def _registry_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, errors.RegistryError)
    return RegistryResponse(exc.body(), status_code=exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return RegistryResponse({"error_code": exc.status_code, "message": f"HTTP {exc.status_code} {exc.detail}"},
                            status_code=exc.status_code)


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.error("schema registry: %s %s failed", request.method, request.url.path, exc_info=exc)
    return RegistryResponse({"error_code": 50001, "message": f"Error in the schema registry: {exc}"}, status_code=500)


def make_app(registry: Registry, max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES) -> Starlette:
    api = RegistryApi(registry, max_request_bytes)
    subject = "/subjects/{subject:path}"
    version = subject + "/versions/{version}"
    routes = [
        Route("/", api.root),
        Route("/schemas/types", api.schema_types),
        Route("/schemas/ids/{id}", api.schema_by_id),
        Route("/schemas/ids/{id}/schema", api.schema_text_by_id),
        Route("/schemas/ids/{id}/subjects", api.subjects_by_id),
        Route("/schemas/ids/{id}/versions", api.versions_by_id),
        Route("/subjects", api.subjects),
        Route(version + "/schema", api.version_schema),
        Route(version + "/referencedby", api.referenced_by),
        Route(version, api.version, methods=["GET", "DELETE"]),
        Route(subject + "/versions", api.subject_versions, methods=["GET", "POST"]),
        Route(subject, api.subject, methods=["POST", "DELETE"]),
        Route("/config", api.config, methods=["GET", "PUT", "DELETE"]),
        Route("/config/{subject:path}", api.config, methods=["GET", "PUT", "DELETE"]),
        Route("/mode", api.mode, methods=["GET", "PUT"]),
        Route("/mode/{subject:path}", api.mode, methods=["GET", "PUT", "DELETE"]),
        Route("/compatibility/subjects/{subject:path}/versions/{version}", api.compatibility, methods=["POST"]),
        Route("/compatibility/subjects/{subject:path}/versions", api.compatibility, methods=["POST"]),
    ]
    return Starlette(routes=routes, exception_handlers={errors.RegistryError: _registry_error,
                                                       HTTPException: _http_error, Exception: _unexpected})
