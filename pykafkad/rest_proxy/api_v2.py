"""REST Proxy API v2 (``application/vnd.kafka.v2+json``) as Starlette endpoints: topics,
partitions, brokers, produce in the embedded formats, and stateful consumer instances, with
Confluent's paths, bodies, status codes and error bodies."""

from __future__ import annotations

import json
from typing import Any

import trio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pykafkad.http_body import BodyTooLarge, read_body
from pykafkad.rest_proxy import embedded_format, rest_errors
from pykafkad.rest_proxy.cluster_view import ClusterView
from pykafkad.rest_proxy.consumer_instance import ConsumerInstance, ConsumerSettings
from pykafkad.rest_proxy.consumer_instances import ConsumerInstances
from pykafkad.rest_proxy.embedded_format import V2_JSON
from pykafkad.rest_proxy.kafka_clients import ClientsOfCaller
from pykafkad.rest_proxy.record_producer import OutgoingRecord, RecordProducer
from pykafkad.rest_proxy.rest_metrics import RECORDS_CONSUMED, RECORDS_PRODUCED
from pykafkad.rest_proxy.schema_formats import SchemaFormats

# What v2 takes as a body that holds no records.
V2_BODY_TYPES = (V2_JSON, "application/vnd.kafka+json", "application/json", "application/octet-stream")
OFFSET_RESETS = {"earliest": "earliest", "smallest": "earliest", "latest": "latest", "largest": "latest",
                 "none": "error"}


class V2Response(JSONResponse):
    media_type = V2_JSON

    def render(self, content: Any) -> bytes:
        return embedded_format.json_bytes(content)


def _media(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def _int_param(request: Request, name: str, what: str) -> int:
    text = request.path_params[name]
    if not (text.isascii() and text.isdigit()):
        raise rest_errors.not_found(f"{what} {text!r} is not a number")
    return int(text)


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise rest_errors.unprocessable(f"{what} must be a JSON object")
    return value


def _partitions(body: dict[str, Any], key: str = "partitions") -> list[tuple[str, int]]:
    """The ``[{"topic": ..., "partition": ...}]`` list of a body."""
    found = body.get(key)
    if not isinstance(found, list):
        raise rest_errors.unprocessable(f"{key} must be a list of {{\"topic\", \"partition\"}}")
    result = []
    for i, entry in enumerate(found):
        if not isinstance(entry, dict) or not isinstance(entry.get("topic"), str) \
                or not isinstance(entry.get("partition"), int) or isinstance(entry.get("partition"), bool):
            raise rest_errors.unprocessable(f"{key}[{i}] must be {{\"topic\": string, \"partition\": integer}}")
        result.append((entry["topic"], entry["partition"]))
    return result


def _offsets(body: dict[str, Any]) -> list[tuple[str, int, int, str | None]]:
    found = body.get("offsets")
    if not isinstance(found, list):
        raise rest_errors.unprocessable("offsets must be a list of {\"topic\", \"partition\", \"offset\"}")
    result = []
    for i, entry in enumerate(found):
        ok = isinstance(entry, dict) and isinstance(entry.get("topic"), str) and all(
            isinstance(entry.get(k), int) and not isinstance(entry.get(k), bool) for k in ("partition", "offset"))
        if not ok or entry["offset"] < 0:
            raise rest_errors.unprocessable(f"offsets[{i}] must be {{\"topic\": string, \"partition\": integer, "
                                            "\"offset\": integer >= 0}")
        metadata = entry.get("metadata")
        result.append((entry["topic"], entry["partition"], entry["offset"],
                       metadata if isinstance(metadata, str) else None))
    return result


class V2Api:
    def __init__(self, clients: ClientsOfCaller, instances: ConsumerInstances,
                 schemas: SchemaFormats, max_request_bytes: int, max_records: int) -> None:
        self.clients = clients
        self.instances = instances
        self.schemas = schemas
        self.max_request_bytes = max_request_bytes
        self.max_records = max_records

    @property
    def view(self) -> ClusterView:
        """The cluster as the caller of the request being served sees it."""
        return self.clients.current().view

    @property
    def producer(self) -> RecordProducer:
        return self.clients.current().producer

    async def _json(self, request: Request, allowed: tuple[str, ...] = V2_BODY_TYPES,
                    empty: Any = None) -> Any:
        kind = _media(request)
        if kind and kind not in allowed:
            raise rest_errors.unsupported_media_type(kind, " or ".join(allowed[:2]))
        try:
            raw = await read_body(request, self.max_request_bytes)
        except BodyTooLarge:
            raise rest_errors.too_large("rest.max.request.bytes", self.max_request_bytes) from None
        if not raw.strip():
            if empty is not None:
                return empty
            raise rest_errors.bad_request("the request needs a JSON body")
        try:
            return embedded_format.parse_json(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise rest_errors.bad_request(f"the body is not JSON: {e}") from None

    # -- topics, partitions, brokers -------------------------------------------------------------

    async def topics(self, request: Request) -> Response:
        """---
        get: {summary: The names of the cluster's topics, responses: {"200": {description: names}}}
        """
        return V2Response(await trio.to_thread.run_sync(self.view.topics))

    async def topic(self, request: Request) -> Response:
        """---
        get: {summary: A topic with its configs and partitions, responses: {"200": {description: the topic}}}
        """
        name = request.path_params["topic"]
        partitions = await trio.to_thread.run_sync(self.view.partitions, name)
        configs = await trio.to_thread.run_sync(self.view.topic_configs, name)
        return V2Response({"name": name, "configs": configs, "partitions": [p.v2() for p in partitions]})

    async def partitions(self, request: Request) -> Response:
        """---
        get: {summary: A topic's partitions and their replicas, responses: {"200": {description: partitions}}}
        """
        found = await trio.to_thread.run_sync(self.view.partitions, request.path_params["topic"])
        return V2Response([p.v2() for p in found])

    async def partition(self, request: Request) -> Response:
        """---
        get: {summary: One partition, responses: {"200": {description: the partition}}}
        """
        topic, index = request.path_params["topic"], _int_param(request, "partition", "partition")
        return V2Response((await trio.to_thread.run_sync(self.view.partition, topic, index)).v2())

    async def partition_offsets(self, request: Request) -> Response:
        """---
        get: {summary: A partition's first and next offsets, responses: {"200": {description: offsets}}}
        """
        topic, index = request.path_params["topic"], _int_param(request, "partition", "partition")
        low, high = await trio.to_thread.run_sync(self.view.watermarks, topic, index)
        return V2Response({"beginning_offset": low, "end_offset": high})

    async def brokers(self, request: Request) -> Response:
        """---
        get: {summary: The ids of the cluster's brokers, responses: {"200": {description: ids}}}
        """
        return V2Response({"brokers": await trio.to_thread.run_sync(self.view.brokers)})

    # -- produce -----------------------------------------------------------------------------------

    async def produce(self, request: Request) -> Response:
        """---
        post:
          summary: Records in one embedded format (the Content-Type), each answered with its partition and offset
          responses: {"200": {description: offsets}}
        """
        topic = request.path_params["topic"]
        fixed = _int_param(request, "partition", "partition") if "partition" in request.path_params else None
        fmt = embedded_format.format_of(_media(request))
        if fmt is None:
            kinds = ", ".join(embedded_format.media_type(f) for f in embedded_format.FORMATS)
            raise rest_errors.unsupported_media_type(_media(request) or "none", f"one of {kinds}")
        body = _object(await self._json(request, (_media(request),)), "the body")
        records = body.get("records")
        if not isinstance(records, list) or not records:
            raise rest_errors.unprocessable("records must be a non-empty list")
        if len(records) > self.max_records:
            raise rest_errors.unprocessable(f"{len(records)} records in one request; at most "
                                            f"{self.max_records} (rest.producer.records.max)")
        partitions = await self.clients.current().partitions_for_produce(topic)
        if fixed is not None and fixed not in partitions:
            raise rest_errors.partition_not_found(topic, fixed)
        encoder = await self.schemas.encoder(fmt, topic, body)
        outgoing = []
        for i, record in enumerate(records):
            record = _object(record, f"records[{i}]")
            partition = record.get("partition") if fixed is None else fixed
            if partition is not None and (not isinstance(partition, int) or partition not in partitions):
                raise rest_errors.partition_not_found(topic, partition)
            outgoing.append(OutgoingRecord(partition, encoder.key(i, record.get("key")),
                                           encoder.value(i, record.get("value"))))
        outcomes = await self.producer.produce(topic, outgoing)
        offsets = []
        status = 200
        for outcome in outcomes:
            if outcome.error is None:
                offsets.append({"partition": outcome.partition, "offset": outcome.offset,
                                "error_code": None, "error": None})
                continue
            code = outcome.error.rest_code
            if code in (40101, 40301) and status == 200:
                status = code // 100  # as Confluent's proxy: the first refusal decides
            offsets.append({"partition": None, "offset": None, "error_code": code, "error": str(outcome.error)})
        RECORDS_PRODUCED.labels(topic).inc(sum(1 for o in outcomes if o.error is None))
        return V2Response({"key_schema_id": encoder.key_schema_id, "value_schema_id": encoder.value_schema_id,
                           "offsets": offsets}, status_code=status)

    # -- consumer instances ------------------------------------------------------------------------

    def _instance(self, request: Request) -> ConsumerInstance:
        return self.instances.get(request.path_params["group"], request.path_params["instance"])

    async def create_consumer(self, request: Request) -> Response:
        """---
        post: {summary: A consumer instance in the group, on this proxy, responses: {"200": {description: base_uri}}}
        """
        group = request.path_params["group"]
        body = _object(await self._json(request, empty={}), "the body")
        settings = _settings(body)
        name = body.get("name") or body.get("id")
        if name is not None and (not isinstance(name, str) or not name or "/" in name):
            raise rest_errors.invalid_consumer_config("name must be a non-empty string without '/'")
        instance = await self.instances.create(group, name, settings)
        base = str(request.base_url).rstrip("/")
        return V2Response({"instance_id": instance.name,
                           "base_uri": f"{base}/consumers/{group}/instances/{instance.name}"})

    async def delete_consumer(self, request: Request) -> Response:
        """---
        delete: {summary: The instance closed; it leaves its group, responses: {"204": {description: deleted}}}
        """
        await self.instances.delete(request.path_params["group"], request.path_params["instance"])
        return Response(status_code=204)

    async def subscription(self, request: Request) -> Response:
        """---
        get: {summary: The topics subscribed to, responses: {"200": {description: topics}}}
        post: {summary: Subscribe to topics or a pattern, responses: {"204": {description: subscribed}}}
        delete: {summary: Unsubscribe, responses: {"204": {description: unsubscribed}}}
        """
        instance = self._instance(request)
        if request.method == "GET":
            return V2Response({"topics": instance.topics} if instance.pattern is None
                              else {"topics": instance.topics, "topic_pattern": instance.pattern})
        if request.method == "DELETE":
            await trio.to_thread.run_sync(instance.unsubscribe)
            return Response(status_code=204)
        body = _object(await self._json(request), "the body")
        topics, pattern = body.get("topics"), body.get("topic_pattern")
        if topics is None and pattern is None:
            raise rest_errors.unprocessable("give topics (a list of names) or topic_pattern (a regular expression)")
        if topics is not None:
            pattern = None  # as Confluent's proxy: topics win over a pattern
        if topics is not None and (not isinstance(topics, list) or not topics
                                   or not all(isinstance(t, str) and t for t in topics)):
            raise rest_errors.unprocessable("topics must be a non-empty list of topic names")
        if pattern is not None and (not isinstance(pattern, str) or not pattern):
            raise rest_errors.unprocessable("topic_pattern must be a non-empty string")
        await trio.to_thread.run_sync(instance.subscribe, topics, pattern)
        return Response(status_code=204)

    async def assignments(self, request: Request) -> Response:
        """---
        get: {summary: The partitions assigned, responses: {"200": {description: partitions}}}
        post: {summary: Assign partitions by hand, responses: {"204": {description: assigned}}}
        """
        instance = self._instance(request)
        if request.method == "GET":
            found = await trio.to_thread.run_sync(instance.assignment)
            return V2Response({"partitions": [{"topic": t, "partition": p} for t, p in found]})
        partitions = _partitions(_object(await self._json(request), "the body"))
        await trio.to_thread.run_sync(instance.assign, partitions)
        return Response(status_code=204)

    async def positions(self, request: Request) -> Response:
        """---
        post: {summary: Where the next records are read from, responses: {"204": {description: moved}}}
        """
        instance = self._instance(request)
        body = _object(await self._json(request), "the body")
        await trio.to_thread.run_sync(instance.seek, [(t, p, o) for t, p, o, _ in _offsets(body)])
        return Response(status_code=204)

    async def positions_edge(self, request: Request) -> Response:
        """---
        post: {summary: Read the partitions from their beginning or end, responses: {"204": {description: moved}}}
        """
        instance = self._instance(request)
        partitions = _partitions(_object(await self._json(request), "the body"))
        await trio.to_thread.run_sync(instance.seek_to, partitions, request.url.path.endswith("/end"))
        return Response(status_code=204)

    async def records(self, request: Request) -> Response:
        """---
        get:
          summary: Records from the current positions, in the instance's format (the Accept header)
          parameters:
            - {name: timeout, in: query, schema: {type: integer}}
            - {name: max_bytes, in: query, schema: {type: integer}}
          responses: {"200": {description: records}}
        """
        instance = self._instance(request)
        fmt = instance.settings.format
        for accepted in request.headers.get("accept", "*/*").split(","):
            named = embedded_format.format_of(accepted)
            if named is not None and named != fmt:
                raise rest_errors.consumer_format_mismatch(fmt, named)
        timeout_ms = _query_int(request, "timeout", instance.settings.request_timeout_ms)
        max_bytes = _query_int(request, "max_bytes", 64 * 1024 * 1024)
        fetched = await trio.to_thread.run_sync(instance.poll, min(timeout_ms, 60_000) / 1000, max_bytes)
        decoder = self.schemas.decoder(fmt)
        answer = []
        try:
            for record in fetched:
                answer.append({"topic": record.topic, "key": await decoder.key(record.key),
                               "value": await decoder.value(record.value), "partition": record.partition,
                               "offset": record.offset})
        except rest_errors.RestError:
            # Nothing of this read is answered, so nothing of it counts as read: the next read
            # starts again at these records (and meets the same record, until a seek passes it).
            await trio.to_thread.run_sync(instance.rewind, fetched)
            raise
        for record in fetched:
            RECORDS_CONSUMED.labels(record.topic).inc()
        return JSONResponse(answer, media_type=embedded_format.media_type(fmt))

    async def offsets(self, request: Request) -> Response:
        """---
        get: {summary: The committed offsets of the partitions named, responses: {"200": {description: offsets}}}
        post: {summary: Commit the offsets given, or of every record read, responses: {"200": {description: committed}}}
        """
        instance = self._instance(request)
        if request.method == "GET":
            body = await self._json(request, empty={})
            if not _object(body, "the body").get("partitions"):
                raise rest_errors.RestError(404, 40402, "Partition not found: name the partitions in the body "
                                                        "({\"partitions\": [{\"topic\", \"partition\"}]})")
            found = await trio.to_thread.run_sync(instance.committed, _partitions(body))
            # Partitions with nothing committed are left out, as Confluent's proxy does.
            return V2Response({"offsets": [{"topic": t, "partition": p, "offset": o, "metadata": m}
                                           for t, p, o, m in found if o >= 0]})
        body = _object(await self._json(request, empty={}), "the body")
        offsets = None
        if body.get("offsets") is not None:
            # The offsets given are of the last records processed: the next, one on, is committed.
            offsets = [(t, p, o + 1, m) for t, p, o, m in _offsets(body)]
        await trio.to_thread.run_sync(instance.commit, offsets)
        return V2Response([])


def _query_int(request: Request, name: str, default: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    if not (text.isascii() and text.isdigit()):
        raise rest_errors.bad_request(f"{name} must be a non-negative integer (got {text!r})")
    return int(text)


def _settings(body: dict[str, Any]) -> ConsumerSettings:
    """A consumer's settings from its creation body, each checked."""
    settings = ConsumerSettings()
    fmt = body.get("format", "binary")
    if not isinstance(fmt, str) or fmt.lower() not in embedded_format.FORMATS:
        raise rest_errors.invalid_consumer_config(f"format must be one of {', '.join(embedded_format.FORMATS)} "
                                                  f"(got {fmt!r})")
    settings.format = fmt.lower()
    reset = body.get("auto.offset.reset")
    if reset is not None:
        if not isinstance(reset, str) or reset.lower() not in OFFSET_RESETS:
            raise rest_errors.invalid_consumer_config(f"auto.offset.reset must be earliest, latest or none "
                                                      f"(got {reset!r})")
        settings.auto_offset_reset = OFFSET_RESETS[reset.lower()]
    commit = body.get("auto.commit.enable")
    if commit is not None:
        if str(commit).lower() not in ("true", "false"):
            raise rest_errors.invalid_consumer_config(f"auto.commit.enable must be true or false (got {commit!r})")
        settings.auto_commit = str(commit).lower() == "true"
    for key, attr in (("fetch.min.bytes", "fetch_min_bytes"), ("consumer.request.timeout.ms", "request_timeout_ms")):
        value = body.get(key)
        if value is None:
            continue
        text = str(value)
        if not (text.isascii() and text.isdigit()):
            raise rest_errors.invalid_consumer_config(f"{key} must be a non-negative integer (got {value!r})")
        setattr(settings, attr, int(text))
    return settings
