"""Kafka's regular expressions: RE2 syntax, matched against whole names.

Kafka compiles the patterns clients send (ListTransactions' transactional id pattern, KIP-1152; the
subscriptions of KIP-848 consumer groups) with re2j, not java.util.regex: no backreferences or
lookaround, and a match always runs in time linear in the name.  This module owns that one
behaviour, through Google's RE2 (the ``google-re2`` binding), so a pattern Kafka refuses is refused
here with the same error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import re2

from pykafkad.errors import KafkaError
from wire.error_codes import ErrorCode

_OPTIONS = re2.Options()
# RE2 would also print every refused pattern to stderr; the client gets the error instead.
_OPTIONS.log_errors = False


# Consumer groups test their members' patterns on every heartbeat: each is compiled once.
@functools.lru_cache(maxsize=1024)
def whole_name_matcher(pattern: str) -> Callable[[str], bool]:
    """A test of whether a name matches ``pattern`` from its first character to its last, as re2j's
    ``Matcher.matches``; INVALID_REGULAR_EXPRESSION if RE2 refuses the pattern."""
    try:
        compiled = re2.compile(pattern, _OPTIONS)
    except re2.error as e:
        raise KafkaError(ErrorCode.INVALID_REGULAR_EXPRESSION,
                         f"Invalid regular expression {pattern!r}: {e}") from None
    return lambda name: compiled.fullmatch(name) is not None
