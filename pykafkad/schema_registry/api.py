"""Confluent Schema Registry's REST API over the registry, as a Starlette app: its paths, query
parameters, bodies, content types, status codes and ``{"error_code", "message"}`` error bodies."""

from __future__ import annotations

import functools
import json
import logging
import re
import urllib.error
import urllib.request
from typing import Any

import trio
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.schemas import SchemaGenerator

from pykafkad.http_body import BodyTooLarge, read_body
from pykafkad.schema_registry import errors
from pykafkad.schema_registry.primary_election import PrimaryElection
from pykafkad.schema_registry.protobuf_schema import ProtobufSchema
from pykafkad.schema_registry.registry import Registry
from pykafkad.schema_registry.registry_access import RegistryAccess, subject_topic
from pykafkad.schema_registry.registry_metrics import FORWARDED
from pykafkad.schema_registry.registry_state import SchemaVersion
from pykafkad.schema_registry.schema_types import SCHEMA_TYPES, parse_stored
from pykafkad.security.acl import Operation

log = logging.getLogger(__name__)

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
# What Confluent's registry takes as a request body.
ACCEPTED_TYPES = ("application/vnd.schemaregistry.v1+json", "application/vnd.schemaregistry+json",
                  "application/json", "application/octet-stream")
DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024
# Set on a write forwarded to the primary, which then answers it itself whatever it believes.
FORWARDED_HEADER = "X-Pykafkad-Forwarded"
FORWARD_TIMEOUT_S = 60.0


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


def _send(url: str, method: str, body: bytes | None, authorization: str | None) -> tuple[int, bytes]:
    """One forwarded request (with the caller's credentials, which the primary checks again): the
    primary's status and body, whatever the status."""
    headers = {"Content-Type": CONTENT_TYPE, FORWARDED_HEADER: "1"}
    if authorization:
        headers["Authorization"] = authorization
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=FORWARD_TIMEOUT_S) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class RegistryApi:
    def __init__(self, registry: Registry, max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
                 election: PrimaryElection | None = None, access: RegistryAccess | None = None) -> None:
        self.registry = registry
        self.max_request_bytes = max_request_bytes
        self.election = election
        self.access = access

    # -- authorization (with an authorizer on the broker: registry_access) ---------------------------

    def guarded(self, endpoint: Any) -> Any:
        """``endpoint``, authorized first when the registry has access rules."""
        @functools.wraps(endpoint)
        async def guarded(request: Request) -> Response:
            if self.access is not None:
                self._authorize(request)
            return await endpoint(request)

        return guarded

    def _may(self, request: Request, operation: Operation, subject: str | None, log_denial: bool = True) -> bool:
        assert self.access is not None
        host = request.client.host if request.client else ""
        return self.access.may(request.state.principal, host, operation, subject, log_denial)

    def _authorize(self, request: Request) -> None:
        subject = request.path_params.get("subject")
        path, method = request.url.path, request.method
        if "id" in request.path_params:
            # An id is readable by whoever may read a subject that holds it.
            holders = {s for s, _ in self.registry.state.holders.get(_schema_id(request), ())}
            if holders and not any(self._may(request, Operation.DESCRIBE, h, log_denial=False) for h in holders):
                raise errors.forbidden(request.state.principal, "DESCRIBE", f"the subjects holding id "
                                       f"{request.path_params['id']}")
            return
        if subject is not None:
            reading = method == "GET" or (method == "POST" and (path.startswith("/compatibility/")
                                                                 or not path.endswith("/versions")))
            operation = Operation.DESCRIBE if reading else Operation.WRITE
            if not self._may(request, operation, subject):
                raise errors.forbidden(request.state.principal, operation.name,
                                       f"subject {subject} (topic {subject_topic(subject)})")
        elif path in ("/config", "/mode") and method != "GET":
            if not self._may(request, Operation.ALTER_CONFIGS, None):
                raise errors.forbidden(request.state.principal, "ALTER_CONFIGS", "the cluster")

    def _visible(self, request: Request, subjects: list[str]) -> list[str]:
        if self.access is None:
            return subjects
        return [s for s in subjects if self._may(request, Operation.DESCRIBE, s, log_denial=False)]

    async def _raw_body(self, request: Request) -> bytes:
        cached = getattr(request.state, "raw_body", None)
        if cached is not None:
            return cached
        kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if kind not in ACCEPTED_TYPES:
            raise errors.RegistryError(415, 415, f"HTTP 415 Unsupported Media Type: {kind}; send "
                                                 f"{CONTENT_TYPE} or application/json")
        try:
            body = await read_body(request, self.max_request_bytes)
        except BodyTooLarge:
            raise self._too_large() from None
        request.state.raw_body = body
        return request.state.raw_body

    async def _body(self, request: Request) -> dict[str, Any]:
        body = await self._raw_body(request)
        try:
            found = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise errors.bad_request(f"the body is not JSON: {e}") from None
        if not isinstance(found, dict):
            raise errors.unprocessable("the body must be a JSON object")
        return found

    async def _forwarded(self, request: Request) -> Response | None:
        """A write answered by the primary, when another instance is the primary; None to write here
        (this instance is the primary, none is known, or the primary cannot be reached: writing here
        is safe, the shared transactional id fences a stale writer)."""
        if self.election is None or request.headers.get(FORWARDED_HEADER):
            return None
        primary = await self.election.primary_url()
        if primary is None:
            return None
        body = await self._raw_body(request) if request.method in ("POST", "PUT") else None
        target = primary + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        try:
            status, answer = await trio.to_thread.run_sync(_send, target, request.method, body,
                                                           request.headers.get("authorization"))
        except OSError as e:
            log.warning("schema registry: forwarding %s %s to the primary %s failed (%s); writing here",
                        request.method, request.url.path, primary, e)
            self.election.forget_primary()
            return None
        FORWARDED.inc()
        return Response(answer, status_code=status, media_type=CONTENT_TYPE)

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
        """---
        get: {summary: The registry answers, responses: {"200": {description: "{}"}}}
        """
        return RegistryResponse({})

    async def schema_types(self, request: Request) -> Response:
        """---
        get: {summary: The schema types served, responses: {"200": {description: '["AVRO", "JSON", "PROTOBUF"]'}}}
        """
        return RegistryResponse(list(SCHEMA_TYPES))

    async def subjects(self, request: Request) -> Response:
        """---
        get:
          summary: The subjects
          parameters:
            - {name: deleted, in: query, schema: {type: boolean}, description: soft-deleted subjects too}
            - {name: subjectPrefix, in: query, schema: {type: string}}
          responses: {"200": {description: the subject names}}
        """
        prefix = request.query_params.get("subjectPrefix", "")
        return RegistryResponse(self._visible(request, self.registry.state.subject_names(_flag(request, "deleted"),
                                                                                          prefix)))

    async def subject_versions(self, request: Request) -> Response:
        """---
        get:
          summary: The subject's version numbers
          parameters: [{name: deleted, in: query, schema: {type: boolean}}]
          responses: {"200": {description: the versions}, "404": {description: 40401 subject not found}}
        post:
          summary: Register a schema under the subject (its id if it is there already)
          parameters: [{name: normalize, in: query, schema: {type: boolean}}]
          requestBody:
            content: {application/vnd.schemaregistry.v1+json: {schema: {$ref: "#/components/schemas/SchemaBody"}}}
          responses:
            "200": {description: '{"id": N}'}
            "409": {description: incompatible with the earlier versions}
            "422": {description: 42201 invalid schema}
        """
        subject = request.path_params["subject"]
        if request.method == "POST":
            if (forwarded := await self._forwarded(request)) is not None:
                return forwarded
            schema, schema_type, references = await self._schema_body(request)
            body = await self._body(request)
            wanted_id, wanted_version = body.get("id"), body.get("version")
            for name, value in (("id", wanted_id), ("version", wanted_version)):
                if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                    raise errors.unprocessable(f"\"{name}\" must be a positive integer")
            if wanted_id is not None:
                schema_id = await self.registry.import_schema(subject, schema, schema_type, references,
                                                              wanted_id, wanted_version)
            else:
                schema_id = await self.registry.register(subject, schema, schema_type, references,
                                                         _flag(request, "normalize"))
            return RegistryResponse({"id": schema_id})
        return RegistryResponse(self.registry.versions(subject, _flag(request, "deleted")))

    async def subject(self, request: Request) -> Response:
        """---
        post:
          summary: The version of the subject that is this schema
          parameters:
            - {name: normalize, in: query, schema: {type: boolean}}
            - {name: deleted, in: query, schema: {type: boolean}}
          requestBody:
            content: {application/vnd.schemaregistry.v1+json: {schema: {$ref: "#/components/schemas/SchemaBody"}}}
          responses:
            "200": {description: the version}
            "404": {description: 40401 subject or 40403 schema not found}
        delete:
          summary: Delete the subject (soft, or permanently after a soft delete)
          parameters: [{name: permanent, in: query, schema: {type: boolean}}]
          responses: {"200": {description: the deleted versions}, "404": {description: "40401, 40404 or 40405"}}
        """
        subject = request.path_params["subject"]
        if request.method == "DELETE":
            if (forwarded := await self._forwarded(request)) is not None:
                return forwarded
            return RegistryResponse(await self.registry.delete_subject(subject, _flag(request, "permanent")))
        schema, schema_type, references = await self._schema_body(request)
        found = await self.registry.lookup(subject, schema, schema_type, _flag(request, "normalize"),
                                           _flag(request, "deleted"), references)
        return RegistryResponse(found.answer())

    async def version(self, request: Request) -> Response:
        """---
        get:
          summary: One version of the subject (a number, latest or -1)
          parameters:
            - {name: deleted, in: query, schema: {type: boolean}}
            - {name: format, in: query, schema: {type: string}}
          responses: {"200": {description: "subject, version, id and schema"}, "404": {description: 40401 or 40402}}
        delete:
          summary: Delete one version (soft, or permanently after a soft delete)
          parameters: [{name: permanent, in: query, schema: {type: boolean}}]
          responses:
            "200": {description: the version deleted}
            "404": {description: "40401, 40402, 40406 or 40407"}
        """
        subject, version = request.path_params["subject"], request.path_params["version"]
        if request.method == "DELETE":
            if (forwarded := await self._forwarded(request)) is not None:
                return forwarded
            return RegistryResponse(await self.registry.delete_version(subject, version, _flag(request, "permanent")))
        found = self.registry.version(subject, version, _flag(request, "deleted"))
        return RegistryResponse({**found.answer(), "schema": await _formatted(found, request)})

    async def version_schema(self, request: Request) -> Response:
        """---
        get: {summary: One version's schema text alone, responses: {"200": {description: the schema}}}
        """
        found = self.registry.version(request.path_params["subject"], request.path_params["version"],
                                      _flag(request, "deleted"))
        return Response(found.schema, media_type=CONTENT_TYPE)

    async def referenced_by(self, request: Request) -> Response:
        """---
        get: {summary: The ids of the schemas that reference this version, responses: {"200": {description: ids}}}
        """
        found = self.registry.version(request.path_params["subject"], request.path_params["version"], True)
        return RegistryResponse(self.registry.state.referenced_by(found.subject, found.version))

    async def schema_by_id(self, request: Request) -> Response:
        """---
        get:
          summary: The schema with this id
          parameters:
            - {name: format, in: query, schema: {type: string}, description: serialized for a Protobuf descriptor}
          responses:
            "200": {description: "schema, schemaType and references"}
            "404": {description: 40403 schema not found}
        """
        found = self.registry.by_id(_schema_id(request))
        body: dict[str, Any] = {"schema": await _formatted(found, request)}
        if found.schema_type != "AVRO":
            body["schemaType"] = found.schema_type
        if found.references:
            body["references"] = list(found.references)
        return RegistryResponse(body)

    async def schema_text_by_id(self, request: Request) -> Response:
        """---
        get: {summary: The schema with this id, its text alone, responses: {"200": {description: the schema}}}
        """
        return Response(self.registry.by_id(_schema_id(request)).schema, media_type=CONTENT_TYPE)

    async def subjects_by_id(self, request: Request) -> Response:
        """---
        get: {summary: The subjects that hold this id, responses: {"200": {description: subject names}}}
        """
        held = self.registry.id_holders(_schema_id(request), _flag(request, "deleted"))
        return RegistryResponse(self._visible(request, sorted({h.subject for h in held})))

    async def versions_by_id(self, request: Request) -> Response:
        """---
        get:
          summary: The subject versions that hold this id
          responses: {"200": {description: subject and version pairs}}
        """
        held = self.registry.id_holders(_schema_id(request), _flag(request, "deleted"))
        visible = set(self._visible(request, sorted({h.subject for h in held})))
        return RegistryResponse([{"subject": h.subject, "version": h.version} for h in held if h.subject in visible])

    async def config(self, request: Request) -> Response:
        """---
        get:
          summary: The compatibility level (global, or the subject's)
          parameters: [{name: defaultToGlobal, in: query, schema: {type: boolean}}]
          responses: {"200": {description: compatibilityLevel}, "404": {description: 40408 not configured}}
        put:
          summary: Set the compatibility level
          requestBody:
            content:
              application/vnd.schemaregistry.v1+json:
                schema: {type: object, properties: {compatibility: {type: string}}}
          responses: {"200": {description: compatibility}, "422": {description: 42203 invalid level}}
        delete: {summary: Remove the level set, responses: {"200": {description: the level it had}}}
        """
        if request.method in ("PUT", "DELETE") and (forwarded := await self._forwarded(request)) is not None:
            return forwarded
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
        """---
        get:
          summary: The mode (global, or the subject's)
          parameters: [{name: defaultToGlobal, in: query, schema: {type: boolean}}]
          responses: {"200": {description: mode}, "404": {description: 40409 not configured}}
        put:
          summary: Set the mode
          requestBody:
            content:
              application/vnd.schemaregistry.v1+json: {schema: {type: object, properties: {mode: {type: string}}}}
          responses: {"200": {description: mode}, "422": {description: 42204 invalid mode}}
        delete: {summary: Remove the subject's mode, responses: {"200": {description: the mode it had}}}
        """
        if request.method in ("PUT", "DELETE") and (forwarded := await self._forwarded(request)) is not None:
            return forwarded
        subject = request.path_params.get("subject")
        state = self.registry.state
        if request.method == "PUT":
            body = await self._body(request)
            return RegistryResponse({"mode": await self.registry.set_mode(subject, body.get("mode"),
                                                                          _flag(request, "force"))})
        if request.method == "DELETE":
            assert subject is not None
            return RegistryResponse({"mode": await self.registry.delete_mode(subject)})
        if subject is not None and subject not in state.modes and not _flag(request, "defaultToGlobal"):
            raise errors.subject_mode_not_configured(subject)
        return RegistryResponse({"mode": state.mode(subject)})

    async def cluster_id(self, request: Request) -> Response:
        """---
        get: {summary: The ids of the Kafka cluster and of the registry, responses: {"200": {description: scope}}}
        """
        return RegistryResponse({"scope": {"path": [], "clusters": {
            "kafka-cluster": self.registry.topic.cluster_id, "schema-registry-cluster": "schema-registry"}}})

    async def openapi(self, request: Request) -> Response:
        return JSONResponse(OPENAPI.get_schema(request.app.routes))

    async def metrics(self, request: Request) -> Response:
        return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)

    async def compatibility(self, request: Request) -> Response:
        """---
        post:
          summary: Whether the schema may be registered next (against one version, or those the level names)
          parameters:
            - {name: verbose, in: query, schema: {type: boolean}}
            - {name: normalize, in: query, schema: {type: boolean}}
          requestBody:
            content: {application/vnd.schemaregistry.v1+json: {schema: {$ref: "#/components/schemas/SchemaBody"}}}
          responses: {"200": {description: "is_compatible, and with verbose the reasons"}}
        """
        subject = request.path_params["subject"]
        version = request.path_params.get("version")
        schema, schema_type, references = await self._schema_body(request)
        if version is not None and subject not in self.registry.state.subjects:
            raise errors.subject_not_found(subject)
        reasons = await self.registry.compatibility(subject, version, schema, schema_type,
                                                    _flag(request, "normalize"), references)
        body: dict[str, Any] = {"is_compatible": not reasons}
        if _flag(request, "verbose"):
            body["messages"] = reasons
        return RegistryResponse(body)


class RegistrySchemaGenerator(SchemaGenerator):
    """Starlette's OpenAPI generator, with one docstring for a route of several methods: its YAML
    maps each method to its operation."""

    def get_schema(self, routes: list[Any]) -> dict[str, Any]:
        schema = super().get_schema(routes)
        for path, operations in schema["paths"].items():
            in_path = [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
                       for name in re.findall(r"{(\w+)}", path)]
            for method, operation in list(operations.items()):
                chosen = dict(operation.get(method, operation))
                chosen["parameters"] = in_path + chosen.get("parameters", [])
                operations[method] = chosen
        return schema


OPENAPI = RegistrySchemaGenerator({
    "openapi": "3.0.3",
    "info": {"title": "pykafkad schema registry", "version": "1",
             "description": "Confluent Schema Registry's REST API (docs/schema-registry.md)"},
    "components": {"schemas": {"SchemaBody": {
        "type": "object", "required": ["schema"],
        "properties": {"schema": {"type": "string"}, "schemaType": {"type": "string", "enum": list(SCHEMA_TYPES)},
                       "references": {"type": "array", "items": {"type": "object"}}}}}},
})


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


def make_app(registry: Registry, max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
             election: PrimaryElection | None = None, access: RegistryAccess | None = None) -> Any:
    api = RegistryApi(registry, max_request_bytes, election, access)
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
        Route("/v1/metadata/id", api.cluster_id),
        Route("/openapi.json", api.openapi, include_in_schema=False),
        Route("/metrics", api.metrics, include_in_schema=False),
    ]
    routes = [Route(r.path, api.guarded(r.endpoint), methods=sorted(r.methods or ["GET"]),
                    include_in_schema=r.include_in_schema) for r in routes]
    app = Starlette(routes=routes, exception_handlers={errors.RegistryError: _registry_error,
                                                      HTTPException: _http_error, Exception: _unexpected})
    return app if access is None else BasicAuth(app, access)


class BasicAuth:
    """ASGI middleware: HTTP Basic credentials required, as the broker's SASL users
    (``registry_access``); the principal goes to ``request.state.principal``."""

    def __init__(self, app: Any, access: RegistryAccess) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = dict(scope.get("headers") or ()).get(b"authorization", b"").decode("latin-1")
        principal = self.access.authenticate(header)
        if principal is None:
            body = json.dumps({"error_code": 40101, "message": "Unauthorized: HTTP Basic credentials of one of "
                                                               "the broker's SASL users are needed"}).encode()
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", CONTENT_TYPE.encode()),
                                    (b"content-length", str(len(body)).encode()),
                                    (b"www-authenticate", b'Basic realm="pykafkad schema registry"')]})
            await send({"type": "http.response.body", "body": body})
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)
