"""REST Proxy API v3 (``application/json``) as Starlette endpoints: the cluster, its brokers and
their configs, topics (create, delete, more partitions) with their configs and partitions, consumer
groups with their members, assignments and lag, and ACLs, in Confluent's resource shapes
(``v3_resources``).  Records are produced by ``api_v3_records``."""

from __future__ import annotations

import json
from typing import Any

import trio
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ConfigResource,
    ResourcePatternType,
    ResourceType,
)
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pykafkad.http_body import BodyTooLarge, read_body
from pykafkad.rest_proxy import rest_errors
from pykafkad.rest_proxy.cluster_admin import ClusterAdmin, ConfigValue, Group
from pykafkad.rest_proxy.cluster_view import INTERNAL_TOPICS, ClusterView
from pykafkad.rest_proxy.kafka_clients import ClientsOfCaller
from pykafkad.rest_proxy.v3_resources import V3Urls

ACL_ENUMS: dict[str, Any] = {"resource_type": ResourceType, "pattern_type": ResourcePatternType,
                             "operation": AclOperation, "permission": AclPermissionType}


def _name(value: Any) -> str:
    return getattr(value, "name", str(value))


class V3Api:
    def __init__(self, clients: ClientsOfCaller, max_request_bytes: int) -> None:
        self.clients = clients
        self.max_request_bytes = max_request_bytes
        self._cluster_id: str | None = None

    @property
    def view(self) -> ClusterView:
        """The cluster as the caller of the request being served sees it."""
        return self.clients.current().view

    @property
    def admin(self) -> ClusterAdmin:
        return self.clients.current().admin

    async def cluster_id(self) -> str:
        if self._cluster_id is None:
            self._cluster_id = (await trio.to_thread.run_sync(self.admin.describe))[0]
        return self._cluster_id

    async def urls(self, request: Request) -> V3Urls:
        """The request's URL builder, once the cluster in its path is this proxy's (404 if not)."""
        cluster_id = await self.cluster_id()
        asked = request.path_params.get("cluster_id", cluster_id)
        if asked != cluster_id:
            raise rest_errors.not_found(f"Cluster {asked} cannot be found.")
        return V3Urls(request, cluster_id)

    async def body(self, request: Request) -> dict[str, Any]:
        kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if kind not in ("application/json", ""):
            raise rest_errors.unsupported_media_type(kind, "application/json")
        try:
            raw = await read_body(request, self.max_request_bytes)
        except BodyTooLarge:
            raise rest_errors.too_large("rest.max.request.bytes", self.max_request_bytes) from None
        if not raw.strip():
            raise rest_errors.payload("Request body is empty. Data is required.")
        try:
            found = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise rest_errors.bad_request(f"the body is not JSON: {e}") from None
        if not isinstance(found, dict):
            raise rest_errors.bad_request("the body must be a JSON object")
        return found

    # -- the cluster and its brokers -------------------------------------------------------------

    def _cluster(self, urls: V3Urls, controller: int | None) -> dict[str, Any]:
        return urls.resource(
            "KafkaCluster", (), (),
            controller=urls.related("brokers", controller) if controller is not None else None,
            acls=urls.related("acls"), brokers=urls.related("brokers"),
            broker_configs=urls.related("broker-configs"), consumer_groups=urls.related("consumer-groups"),
            topics=urls.related("topics"), partition_reassignments=urls.related("topics", "-", "partitions", "-",
                                                                                "reassignment"))

    async def clusters(self, request: Request) -> Response:
        """---
        get: {summary: The one cluster this proxy serves, responses: {"200": {description: KafkaClusterList}}}
        """
        urls = await self.urls(request)
        _, controller, _ = await trio.to_thread.run_sync(self.admin.describe)
        listing = {"kind": "KafkaClusterList", "metadata": {"self": urls.base.rsplit("/", 1)[0], "next": None},
                   "data": [self._cluster(urls, controller)]}
        return JSONResponse(listing)

    async def cluster(self, request: Request) -> Response:
        """---
        get: {summary: The cluster, responses: {"200": {description: KafkaCluster}}}
        """
        urls = await self.urls(request)
        _, controller, _ = await trio.to_thread.run_sync(self.admin.describe)
        return JSONResponse(self._cluster(urls, controller))

    def _broker(self, urls: V3Urls, node: Any) -> dict[str, Any]:
        return urls.resource("KafkaBroker", ("brokers", node.id), (("broker", node.id),), broker_id=node.id,
                             host=node.host, port=node.port, rack=node.rack,
                             configs=urls.related("brokers", node.id, "configs"),
                             partition_replicas=urls.related("brokers", node.id, "partition-replicas"))

    async def brokers(self, request: Request) -> Response:
        """---
        get: {summary: The cluster's brokers, responses: {"200": {description: KafkaBrokerList}}}
        """
        urls = await self.urls(request)
        _, _, nodes = await trio.to_thread.run_sync(self.admin.describe)
        return JSONResponse(urls.collection("KafkaBrokerList", ("brokers",), [self._broker(urls, n) for n in nodes]))

    async def _node(self, request: Request) -> Any:
        _, _, nodes = await trio.to_thread.run_sync(self.admin.describe)
        wanted = request.path_params["broker_id"]
        for node in nodes:
            if str(node.id) == wanted:
                return node
        raise rest_errors.not_found(f"Broker {wanted} cannot be found.")

    async def broker(self, request: Request) -> Response:
        """---
        get: {summary: One broker, responses: {"200": {description: KafkaBroker}}}
        """
        urls = await self.urls(request)
        return JSONResponse(self._broker(urls, await self._node(request)))

    def _config(self, urls: V3Urls, kind: str, owner: tuple[str, str | int], config: ConfigValue) -> dict[str, Any]:
        parent = ("brokers" if owner[0] == "broker_id" else "topics", owner[1])
        crn_owner = ("broker" if owner[0] == "broker_id" else "topic", owner[1])
        return urls.resource(kind, (*parent, "configs", config.name), (crn_owner, ("config", config.name)),
                             **{owner[0]: owner[1]}, name=config.name, value=config.value,
                             is_default=config.is_default, is_read_only=config.is_read_only,
                             is_sensitive=config.is_sensitive, source=config.source,
                             synonyms=[{"name": n, "value": v, "source": s} for n, v, s in config.synonyms])

    async def broker_configs(self, request: Request) -> Response:
        """---
        get: {summary: A broker's configs, or one of them, responses: {"200": {description: KafkaBrokerConfig(List)}}}
        """
        urls = await self.urls(request)
        node = await self._node(request)
        found = await trio.to_thread.run_sync(self.admin.configs, ConfigResource.Type.BROKER, str(node.id))
        return self._configs(urls, request, "KafkaBrokerConfig", ("broker_id", node.id), found)

    def _configs(self, urls: V3Urls, request: Request, kind: str, owner: tuple[str, str | int],
                 found: list[ConfigValue]) -> Response:
        name = request.path_params.get("name")
        if name is None:
            parent = ("brokers" if owner[0] == "broker_id" else "topics", owner[1], "configs")
            return JSONResponse(urls.collection(kind + "List", parent, [self._config(urls, kind, owner, c)
                                                                        for c in found]))
        for config in found:
            if config.name == name:
                return JSONResponse(self._config(urls, kind, owner, config))
        raise rest_errors.not_found(f"Config {name} cannot be found.")

    # -- topics ----------------------------------------------------------------------------------

    def _topic(self, urls: V3Urls, name: str, partitions: list[Any]) -> dict[str, Any]:
        return urls.resource("KafkaTopic", ("topics", name), (("topic", name),), topic_name=name,
                             is_internal=name in INTERNAL_TOPICS,
                             replication_factor=len(partitions[0].replicas) if partitions else 0,
                             partitions_count=len(partitions), partitions=urls.related("topics", name, "partitions"),
                             configs=urls.related("topics", name, "configs"),
                             partition_reassignments=urls.related("topics", name, "partitions", "-", "reassignment"),
                             authorized_operations=[])

    async def topics(self, request: Request) -> Response:
        """---
        get: {summary: The cluster's topics, responses: {"200": {description: KafkaTopicList}}}
        post: {summary: Create a topic, responses: {"201": {description: KafkaTopic}}}
        """
        urls = await self.urls(request)
        if request.method == "POST":
            return await self._create_topic(request, urls)
        names = await trio.to_thread.run_sync(self.view.topics)
        data = [self._topic(urls, name, await trio.to_thread.run_sync(self.view.partitions, name)) for name in names]
        return JSONResponse(urls.collection("KafkaTopicList", ("topics",), data))

    async def _create_topic(self, request: Request, urls: V3Urls) -> Response:
        body = await self.body(request)
        name = body.get("topic_name")
        if not isinstance(name, str) or not name:
            raise rest_errors.payload("Invalid topic name.")
        partitions = _optional_int(body, "partitions_count", -1)
        replication = _optional_int(body, "replication_factor", -1)
        configs = {}
        for i, entry in enumerate(body.get("configs") or []):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise rest_errors.bad_request(f"configs[{i}] must be {{\"name\": string, \"value\": string}}")
            configs[entry["name"]] = None if entry.get("value") is None else str(entry["value"])
        assignments = None
        if body.get("replicas_assignments"):
            given = body["replicas_assignments"]
            if not isinstance(given, dict):
                raise rest_errors.bad_request("replicas_assignments must map partition ids to broker id lists")
            assignments = [list(given[k]) for k in sorted(given, key=int)]
        validate_only = bool(body.get("validate_only"))
        await trio.to_thread.run_sync(self.admin.create_topic, name, partitions, replication,
                                      {k: v for k, v in configs.items() if v is not None}, assignments,
                                      validate_only)
        if validate_only:
            count = len(assignments) if assignments else partitions
            rf = len(assignments[0]) if assignments else replication
            return JSONResponse(urls.resource("KafkaTopic", ("topics", name), (("topic", name),), topic_name=name,
                                              is_internal=False, replication_factor=rf, partitions_count=count,
                                              partitions=urls.related("topics", name, "partitions"),
                                              configs=urls.related("topics", name, "configs"),
                                              partition_reassignments=urls.related("topics", name, "partitions",
                                                                                   "-", "reassignment"),
                                              authorized_operations=[]))
        created = await self._partitions_once_known(name)
        return JSONResponse(self._topic(urls, name, created), status_code=201,
                            headers={"Location": urls.url("topics", name)})

    async def _partitions_once_known(self, name: str) -> list[Any]:
        with trio.move_on_after(10):
            while True:
                try:
                    return await trio.to_thread.run_sync(self.view.partitions, name)
                except rest_errors.RestError:
                    await trio.sleep(0.1)
        return await trio.to_thread.run_sync(self.view.partitions, name)

    async def topic(self, request: Request) -> Response:
        """---
        get: {summary: A topic, responses: {"200": {description: KafkaTopic}}}
        patch: {summary: More partitions (partitions_count), responses: {"200": {description: KafkaTopic}}}
        delete: {summary: Delete the topic, responses: {"204": {description: deleted}}}
        """
        urls = await self.urls(request)
        name = request.path_params["topic"]
        if request.method == "DELETE":
            await trio.to_thread.run_sync(self.view.partitions, name)
            await trio.to_thread.run_sync(self.admin.delete_topic, name)
            return Response(status_code=204)
        if request.method == "PATCH":
            body = await self.body(request)
            count = _optional_int(body, "partitions_count", -1)
            if count < 0:
                raise rest_errors.payload("partitions_count is required")
            await trio.to_thread.run_sync(self.admin.add_partitions, name, count)
            with trio.move_on_after(10):
                while len(await trio.to_thread.run_sync(self.view.partitions, name)) < count:
                    await trio.sleep(0.1)
        partitions = await trio.to_thread.run_sync(self.view.partitions, name)
        return JSONResponse(self._topic(urls, name, partitions))

    async def topic_configs(self, request: Request) -> Response:
        """---
        get: {summary: A topic's configs, or one, responses: {"200": {description: KafkaTopicConfig(List)}}}
        put: {summary: Set one config (value), responses: {"204": {description: set}}}
        delete: {summary: Reset one config to its default, responses: {"204": {description: reset}}}
        """
        urls = await self.urls(request)
        name = request.path_params["topic"]
        await trio.to_thread.run_sync(self.view.partitions, name)
        if request.method in ("PUT", "DELETE"):
            key = request.path_params["name"]
            value = None
            if request.method == "PUT":
                body = await self.body(request)
                value = None if body.get("value") is None else str(body["value"])
            await trio.to_thread.run_sync(self.admin.alter_configs, ConfigResource.Type.TOPIC, name,
                                          [(key, value, request.method == "DELETE" or value is None)])
            return Response(status_code=204)
        found = await trio.to_thread.run_sync(self.admin.configs, ConfigResource.Type.TOPIC, name)
        return self._configs(urls, request, "KafkaTopicConfig", ("topic_name", name), found)

    async def alter_topic_configs(self, request: Request) -> Response:
        """---
        post: {summary: Set or reset several configs at once, responses: {"204": {description: altered}}}
        """
        await self.urls(request)
        name = request.path_params["topic"]
        body = await self.body(request)
        data = body.get("data")
        if not isinstance(data, list):
            raise rest_errors.payload("Null input provided. Data is required.")
        changes = []
        for i, entry in enumerate(data):
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise rest_errors.bad_request(f"data[{i}] must be {{\"name\", \"value\", \"operation\"}}")
            operation = str(entry.get("operation") or "SET").upper()
            if operation not in ("SET", "DELETE"):
                raise rest_errors.bad_request(f"data[{i}].operation must be SET or DELETE")
            value = entry.get("value")
            changes.append((entry["name"], None if value is None else str(value), operation == "DELETE"))
        await trio.to_thread.run_sync(self.view.partitions, name)
        await trio.to_thread.run_sync(self.admin.alter_configs, ConfigResource.Type.TOPIC, name, changes,
                                      bool(body.get("validate_only")))
        return Response(status_code=204)

    def _partition(self, urls: V3Urls, topic: str, info: Any) -> dict[str, Any]:
        base = ("topics", topic, "partitions", info.partition)
        return urls.resource("KafkaPartition", base, (("topic", topic), ("partition", info.partition)),
                             topic_name=topic, partition_id=info.partition,
                             leader=urls.related(*base, "replicas", info.leader) if info.leader >= 0 else None,
                             replicas=urls.related(*base, "replicas"), reassignment=urls.related(*base, "reassignment"))

    async def partitions(self, request: Request) -> Response:
        """---
        get: {summary: A topic's partitions, or one, responses: {"200": {description: KafkaPartition(List)}}}
        """
        urls = await self.urls(request)
        topic = request.path_params["topic"]
        if "partition_id" in request.path_params:
            text = request.path_params["partition_id"]
            if not text.isdigit():
                raise rest_errors.partition_not_found(topic, text)
            info = await trio.to_thread.run_sync(self.view.partition, topic, int(text))
            return JSONResponse(self._partition(urls, topic, info))
        found = await trio.to_thread.run_sync(self.view.partitions, topic)
        return JSONResponse(urls.collection("KafkaPartitionList", ("topics", topic, "partitions"),
                                            [self._partition(urls, topic, p) for p in found]))

    # -- consumer groups -------------------------------------------------------------------------

    def _group(self, urls: V3Urls, group: Group) -> dict[str, Any]:
        g = group.group_id
        return urls.resource("KafkaConsumerGroup", ("consumer-groups", g), (("consumer-group", g),),
                             consumer_group_id=g, is_simple=group.is_simple, partition_assignor=group.assignor,
                             state=group.state, type="CLASSIC", is_mixed_consumer_group=False,
                             coordinator=urls.related("brokers", group.coordinator)
                             if group.coordinator is not None else None,
                             consumers=urls.related("consumer-groups", g, "consumers"),
                             lag_summary=urls.related("consumer-groups", g, "lag-summary"))

    async def groups(self, request: Request) -> Response:
        """---
        get: {summary: The consumer groups, or one, responses: {"200": {description: KafkaConsumerGroup(List)}}}
        """
        urls = await self.urls(request)
        if "group" in request.path_params:
            group = await trio.to_thread.run_sync(self.admin.group, request.path_params["group"])
            return JSONResponse(self._group(urls, group))
        data = []
        for group_id in await trio.to_thread.run_sync(self.admin.group_ids):
            try:
                data.append(self._group(urls, await trio.to_thread.run_sync(self.admin.group, group_id)))
            except rest_errors.RestError:
                continue  # gone meanwhile
        return JSONResponse(urls.collection("KafkaConsumerGroupList", ("consumer-groups",), data))

    def _member(self, urls: V3Urls, group: str, member: Any) -> dict[str, Any]:
        base = ("consumer-groups", group, "consumers", member.consumer_id)
        return urls.resource("KafkaConsumer", base, (("consumer-group", group), ("consumer", member.consumer_id)),
                             consumer_group_id=group, consumer_id=member.consumer_id, instance_id=member.instance_id,
                             client_id=member.client_id, assignments=urls.related(*base, "assignments"))

    async def consumers(self, request: Request) -> Response:
        """---
        get: {summary: A group's consumers, or one, responses: {"200": {description: KafkaConsumer(List)}}}
        """
        urls = await self.urls(request)
        group = await trio.to_thread.run_sync(self.admin.group, request.path_params["group"])
        wanted = request.path_params.get("consumer")
        if wanted is None:
            return JSONResponse(urls.collection("KafkaConsumerList", ("consumer-groups", group.group_id, "consumers"),
                                                [self._member(urls, group.group_id, m) for m in group.members]))
        member = _find_member(group, wanted)
        if "assignments" not in request.url.path:
            return JSONResponse(self._member(urls, group.group_id, member))
        base = ("consumer-groups", group.group_id, "consumers", member.consumer_id, "assignments")
        data = [urls.resource("KafkaConsumerAssignment", (*base, t, "partitions", p),
                              (("consumer-group", group.group_id), ("consumer", member.consumer_id),
                               ("assignment", t), ("partition", p)),
                              consumer_group_id=group.group_id, consumer_id=member.consumer_id, topic_name=t,
                              partition_id=p, partition=urls.related("topics", t, "partitions", p),
                              lag=urls.related("consumer-groups", group.group_id, "lags", t, "partitions", p))
                for t, p in member.assignments]
        return JSONResponse(urls.collection("KafkaConsumerAssignmentList", base, data))

    async def _lags(self, request: Request, urls: V3Urls) -> tuple[Group, list[dict[str, Any]]]:
        group = await trio.to_thread.run_sync(self.admin.group, request.path_params["group"])
        committed = await trio.to_thread.run_sync(self.admin.committed, group.group_id)
        if not committed:
            raise rest_errors.not_found("Consumer lags not found.")
        ends = await trio.to_thread.run_sync(self.admin.end_offsets, sorted(committed))
        owner = {tp: m for m in group.members for tp in m.assignments}
        lags = []
        for (topic, partition), offset in committed.items():
            member = owner.get((topic, partition))
            end = ends.get((topic, partition), offset)
            lags.append(urls.resource(
                "KafkaConsumerLag", ("consumer-groups", group.group_id, "lags", topic, "partitions", partition),
                (("consumer-group", group.group_id), ("lag", topic), ("partition", partition)),
                consumer_group_id=group.group_id, topic_name=topic, partition_id=partition,
                consumer_id=member.consumer_id if member else "", instance_id=member.instance_id if member else None,
                client_id=member.client_id if member else "", current_offset=offset, log_end_offset=end,
                lag=max(0, end - offset)))
        lags.sort(key=lambda d: (-d["lag"], d["topic_name"], d["partition_id"]))
        return group, lags

    async def lags(self, request: Request) -> Response:
        """---
        get: {summary: Each partition's lag behind its end, responses: {"200": {description: KafkaConsumerLagList}}}
        """
        urls = await self.urls(request)
        group, lags = await self._lags(request, urls)
        return JSONResponse(urls.collection("KafkaConsumerLagList", ("consumer-groups", group.group_id, "lags"), lags))

    async def lag_summary(self, request: Request) -> Response:
        """---
        get: {summary: The group's largest and total lag, responses: {"200": {description: lag summary}}}
        """
        urls = await self.urls(request)
        group, lags = await self._lags(request, urls)
        top = lags[0]
        g = group.group_id
        summary = urls.resource(
            "KafkaConsumerGroupLagSummary", ("consumer-groups", g, "lag-summary"),
            None, consumer_group_id=g,
            max_lag_consumer_id=top["consumer_id"], max_lag_instance_id=top["instance_id"],
            max_lag_client_id=top["client_id"], max_lag_topic_name=top["topic_name"],
            max_lag_partition_id=top["partition_id"], max_lag=top["lag"], total_lag=sum(d["lag"] for d in lags),
            max_lag_consumer=urls.related("consumer-groups", g, "consumers", top["consumer_id"])
            if top["consumer_id"] else None,
            max_lag_partition=urls.related("topics", top["topic_name"], "partitions", top["partition_id"]))
        summary["metadata"]["resource_name"] = urls.crn(("consumer-group", g)) + "/lag-summary"
        return JSONResponse(summary)

    # -- ACLs ------------------------------------------------------------------------------------

    def _acl(self, urls: V3Urls, binding: AclBinding) -> dict[str, Any]:
        fields = {"resource_type": _name(binding.restype), "resource_name": binding.name,
                  "pattern_type": _name(binding.resource_pattern_type), "principal": binding.principal,
                  "host": binding.host, "operation": _name(binding.operation),
                  "permission": _name(binding.permission_type)}
        query = "&".join(f"{k}={_quote(str(v))}" for k, v in fields.items())
        return {"kind": "KafkaAcl", "metadata": {"self": urls.url("acls") + "?" + query},
                "cluster_id": urls.cluster_id, **fields}

    async def acls(self, request: Request) -> Response:
        """---
        get: {summary: The ACLs matching the query, responses: {"200": {description: KafkaAclList}}}
        post: {summary: Create an ACL, responses: {"201": {description: created}}}
        delete: {summary: Delete the ACLs matching the query, responses: {"200": {description: the ACLs deleted}}}
        """
        urls = await self.urls(request)
        if request.method == "POST":
            body = await self.body(request)
            binding = _binding(body)
            await trio.to_thread.run_sync(self.admin.create_acls, [binding])
            return Response(status_code=201, headers={"Location": self._acl(urls, binding)["metadata"]["self"]})
        query = _acl_filter(dict(request.query_params), required=request.method == "DELETE")
        if request.method == "DELETE":
            deleted = await trio.to_thread.run_sync(self.admin.delete_acls, query)
            return JSONResponse({"data": [self._acl(urls, b) for b in sorted(deleted, key=_acl_order)]})
        found = await trio.to_thread.run_sync(self.admin.acls, query)
        data = [self._acl(urls, b) for b in sorted(found, key=_acl_order)]
        listing = urls.collection("KafkaAclList", ("acls",), data)
        if request.url.query:
            listing["metadata"]["self"] += "?" + request.url.query
        return JSONResponse(listing)


def _quote(text: str) -> str:
    from urllib.parse import quote
    return quote(text, safe="*")


def _acl_order(binding: AclBinding) -> tuple[str, ...]:
    return (_name(binding.restype), binding.name or "", _name(binding.resource_pattern_type), binding.principal or "",
            binding.host or "", _name(binding.operation), _name(binding.permission_type))


def _enum(field: str, text: Any, allowed_any: bool) -> Any:
    enum = ACL_ENUMS[field]
    if not isinstance(text, str) or text.upper() not in enum.__members__ or text.upper() == "UNKNOWN":
        raise rest_errors.bad_request(f"{field} must be one of "
                                      f"{', '.join(m for m in enum.__members__ if m != 'UNKNOWN')} (got {text!r})")
    value = enum[text.upper()]
    if not allowed_any and text.upper() in ("ANY", "MATCH"):
        raise rest_errors.bad_request(f"{field} cannot be {text.upper()} here")
    return value


def _binding(body: dict[str, Any]) -> AclBinding:
    for field in ("resource_type", "resource_name", "pattern_type", "principal", "host", "operation", "permission"):
        if not isinstance(body.get(field), str):
            raise rest_errors.bad_request(f"{field} is required")
    return AclBinding(_enum("resource_type", body["resource_type"], False), body["resource_name"],
                      _enum("pattern_type", body["pattern_type"], False), body["principal"], body["host"],
                      _enum("operation", body["operation"], False), _enum("permission", body["permission"], False))


def _acl_filter(query: dict[str, str], required: bool) -> AclBindingFilter:
    values = {}
    for field in ACL_ENUMS:
        if field not in query:
            if required:
                raise rest_errors.bad_request(f"{field} cannot be unspecified or UNKNOWN")
            values[field] = ACL_ENUMS[field]["ANY"]
        else:
            values[field] = _enum(field, query[field], True)
    return AclBindingFilter(values["resource_type"], query.get("resource_name") or None, values["pattern_type"],
                            query.get("principal") or None, query.get("host") or None, values["operation"],
                            values["permission"])


def _find_member(group: Group, consumer_id: str) -> Any:
    for member in group.members:
        if member.consumer_id == consumer_id:
            return member
    raise rest_errors.not_found(f"Consumer {consumer_id} cannot be found in group {group.group_id}.")


def _optional_int(body: dict[str, Any], key: str, default: int) -> int:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise rest_errors.bad_request(f"{key} must be an integer")
    return value
