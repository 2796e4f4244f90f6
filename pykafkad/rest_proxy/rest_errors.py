"""Confluent REST Proxy's errors: an HTTP status, an ``error_code`` and a message
(``{"error_code": 40401, "message": "Topic not found."}``), as its clients parse them."""

from __future__ import annotations

from pykafkad.http_error import ConfluentError


class RestError(ConfluentError):
    """An answer other than success, in Confluent's shape."""


def topic_not_found(topic: str) -> RestError:
    # 40403, as Confluent's proxy answers (Kafka's UNKNOWN_TOPIC_OR_PARTITION), not its unused 40401.
    return RestError(404, 40403, f"This server does not host this topic-partition: topic {topic} not found.")


def partition_not_found(topic: str, partition: object) -> RestError:
    return RestError(404, 40402, f"Partition not found: {topic}-{partition}.")


def consumer_instance_not_found(group: str, instance: str) -> RestError:
    return RestError(404, 40403, f"Consumer instance not found: {instance} in group {group} (it may have "
                                 "expired; create it again with POST /consumers/{group}).")


def not_found(what: str) -> RestError:
    return RestError(404, 404, f"HTTP 404 Not Found: {what}")


def consumer_format_mismatch(instance_format: str, accepted: str) -> RestError:
    return RestError(406, 40601, f"The requested embedded data format ({accepted}) does not match the "
                                 f"deserializer for this consumer instance ({instance_format}).")


def consumer_already_subscribed() -> RestError:
    return RestError(409, 40901, "Consumer cannot subscribe the specified target because it has already "
                                 "subscribed to other topics.")


def consumer_already_exists(group: str, instance: str) -> RestError:
    return RestError(409, 40902, f"Consumer with specified consumer ID already exists in the specified consumer "
                                 f"group: {instance} in {group}.")


def illegal_state(detail: str) -> RestError:
    return RestError(409, 40903, f"Illegal state: {detail}")


def too_large(limit_key: str, limit: int) -> RestError:
    return RestError(413, 413, f"HTTP 413 Request Entity Too Large: the body is larger than {limit_key} ({limit})")


def unsupported_media_type(kind: str, wanted: str) -> RestError:
    return RestError(415, 415, f"HTTP 415 Unsupported Media Type: {kind}; send {wanted}")


def key_schema_missing() -> RestError:
    return RestError(422, 42201, "Request includes keys but does not include key schema")


def value_schema_missing() -> RestError:
    return RestError(422, 42202, "Request includes values but does not include value schema")


def bad_data(detail: str) -> RestError:
    """A key or value that is not what its format or schema asks for (Confluent: 400)."""
    return RestError(400, 400, f"Bad Request: {detail}")


def deserialization(detail: str) -> RestError:
    """A record read that its instance's format cannot decode (Confluent: SerializationException)."""
    return RestError(408, 40801, f"Error deserializing a record: {detail}")


def invalid_consumer_config(detail: str) -> RestError:
    return RestError(422, 42204, f"Invalid consumer configuration: {detail}")


def invalid_schema(detail: str) -> RestError:
    return RestError(422, 42205, f"Invalid schema: {detail}")


def unprocessable(detail: str) -> RestError:
    return RestError(422, 422, detail)


def bad_request(detail: str) -> RestError:
    return RestError(400, 400, detail)


def payload(detail: str) -> RestError:
    return RestError(422, 42206, f"Payload error. {detail}")


def serialization(detail: str) -> RestError:
    """The schema registry could not give what a schema format needs (Confluent: 42207)."""
    return RestError(422, 42207, f"Error serializing message. {detail}")


def too_many_instances(limit: int) -> RestError:
    return RestError(429, 42901, f"Too many consumer instances on this proxy ({limit}, rest.consumer.instances.max); "
                                 "delete idle ones or wait for them to expire")


def unauthorized() -> RestError:
    return RestError(401, 40101, "Unauthorized: HTTP Basic credentials of one of the cluster's SASL users are needed")


def forbidden(detail: str) -> RestError:
    return RestError(403, 40301, f"Not authorized: {detail}")


def kafka_error(detail: str, retriable: bool = False) -> RestError:
    return RestError(500, 50003 if retriable else 50002, f"Kafka error: {detail}")
