"""Exceptions raised by the wire codec."""

from __future__ import annotations


class DecodeError(Exception):
    """The bytes are malformed or truncated and cannot be decoded."""


class UnsupportedVersion(Exception):
    """The api key is unknown, or the version is outside the API's valid versions."""


class EncodeError(ValueError):
    """A value cannot be encoded: wrong type, out of range, or null in a non-nullable field."""
