"""Confluent Schema Registry's errors: an HTTP status, an ``error_code`` and a message, as its
clients parse them (``{"error_code": 40401, "message": "Subject 'x' not found."}``)."""

from __future__ import annotations

from pykafkad.http_error import ConfluentError


class RegistryError(ConfluentError):
    """An answer other than success, in Confluent's shape."""


def subject_not_found(subject: str) -> RegistryError:
    return RegistryError(404, 40401, f"Subject '{subject}' not found.")


def version_not_found(subject: str, version: object) -> RegistryError:
    return RegistryError(404, 40402, f"Version {version} not found.")


def schema_not_found(detail: str = "Schema not found") -> RegistryError:
    return RegistryError(404, 40403, detail)


def subject_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(404, 40404, f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently")


def subject_not_soft_deleted(subject: str) -> RegistryError:
    return RegistryError(404, 40405, f"Subject '{subject}' was not deleted first before being permanently deleted")


def version_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(404, 40406, f"Subject '{subject}' Version {version} was soft deleted.Set permanent=true "
                                     "to delete permanently")


def version_not_soft_deleted(subject: str, version: int) -> RegistryError:
    return RegistryError(404, 40407, f"Subject '{subject}' Version {version} was not deleted first before being "
                                     "permanently deleted")


def subject_compatibility_not_configured(subject: str) -> RegistryError:
    return RegistryError(404, 40408, f"Subject '{subject}' does not have subject-level compatibility configured")


def subject_mode_not_configured(subject: str) -> RegistryError:
    return RegistryError(404, 40409, f"Subject '{subject}' does not have subject-level mode configured")


def invalid_schema(detail: str) -> RegistryError:
    return RegistryError(422, 42201, f"Invalid schema: {detail}")


def reference_exists(subject: str, version: int, by: list[int]) -> RegistryError:
    return RegistryError(422, 42206, f"One or more references exist to the schema {{subject={subject}, "
                                     f"version={version}}}: schema id(s) {', '.join(map(str, by))} reference it; "
                                     "delete those first")


def forbidden(principal: str, operation: str, what: str) -> RegistryError:
    return RegistryError(403, 40301, f"{principal} is not allowed {operation} on {what}: ask an administrator for "
                                     "an ACL (kafka-acls --add)")


def invalid_version(version: str) -> RegistryError:
    return RegistryError(422, 42202, f"The specified version '{version}' is not a valid version id. Allowed values "
                                     "are between [1, 2^31-1] and the string \"latest\"")


def invalid_compatibility_level(level: object) -> RegistryError:
    return RegistryError(422, 42203, f"Invalid compatibility level. Valid values are none, backward, forward, full, "
                                     f"backward_transitive, forward_transitive, and full_transitive (got {level!r})")


def invalid_mode(mode: object) -> RegistryError:
    return RegistryError(422, 42204, f"Invalid mode. Valid values are READWRITE, READONLY and IMPORT (got {mode!r})")


def operation_not_permitted(detail: str) -> RegistryError:
    return RegistryError(422, 42205, detail)


def incompatible(subject: str, reasons: list[str]) -> RegistryError:
    detail = "; ".join(reasons)
    return RegistryError(409, 409, f"Schema being registered is incompatible with an earlier schema for subject "
                                   f"\"{subject}\", details: [{detail}]")


def bad_request(detail: str) -> RegistryError:
    return RegistryError(400, 400, detail)


def unprocessable(detail: str) -> RegistryError:
    return RegistryError(422, 422, detail)


def store_error(detail: str) -> RegistryError:
    return RegistryError(500, 50001, f"Error in the backend data store: {detail}")


def store_timeout(detail: str) -> RegistryError:
    return RegistryError(500, 50002, f"Operation timed out: {detail}")
