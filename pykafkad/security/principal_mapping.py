"""The principal of a TLS client certificate: its subject's distinguished name, written as Java's
``X500Principal.getName()`` writes it (RFC 2253, most specific first), then mapped by
``ssl.principal.mapping.rules`` as Kafka's ``SslPrincipalMapper`` maps it.

Rules are ``RULE:pattern/replacement/`` items (an optional ``L`` or ``U`` after the last slash lowers or
raises the result's case) and ``DEFAULT`` (the name unchanged), tried in order; the first pattern that
matches the whole name gives the principal.  A name no rule matches fails the connection, as in Kafka.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The attribute names Java prints by keyword in an RFC 2253 name.
_KEYWORDS = {"commonName": "CN", "organizationalUnitName": "OU", "organizationName": "O", "localityName": "L",
             "stateOrProvinceName": "ST", "countryName": "C", "domainComponent": "DC", "userId": "UID",
             "streetAddress": "STREET"}
_RULE = re.compile(r"RULE:((?:\\/|[^/])*)/((?:\\/|[^/])*)/([LU]?)")


class PrincipalMappingError(Exception):
    """A rule list that does not parse, or a name no rule matches."""


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str = ""
    case: str = ""

    def apply(self, name: str) -> str | None:
        if self.pattern is None:
            return name
        match = self.pattern.fullmatch(name)
        if match is None:
            return None
        result = match.expand(self.replacement)
        return result.lower() if self.case == "L" else result.upper() if self.case == "U" else result


def _java_replacement(text: str) -> str:
    """Java's ``$1`` group references in Python's ``\\g<1>`` form, other characters literal."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "$" and i + 1 < len(text) and text[i + 1].isdigit():
            j = i + 1
            while j < len(text) and text[j].isdigit():
                j += 1
            out.append(f"\\g<{text[i + 1:j]}>")
            i = j
            continue
        out.append("\\\\" if c == "\\" else c)
        i += 1
    return "".join(out)


def parse_rules(text: str) -> list[Rule]:
    """``ssl.principal.mapping.rules``; PrincipalMappingError names the part that does not parse."""
    rules: list[Rule] = []
    rest = text.strip()
    while rest:
        if rest.startswith("DEFAULT"):
            rules.append(Rule(None))
            rest = rest[len("DEFAULT"):]
        else:
            m = _RULE.match(rest)
            if m is None:
                raise PrincipalMappingError(f"invalid rule at {rest[:40]!r}: use RULE:pattern/replacement/[LU] "
                                            "or DEFAULT, separated by commas")
            try:
                pattern = re.compile(m.group(1).replace("\\/", "/"))
            except re.error as e:
                raise PrincipalMappingError(f"invalid pattern {m.group(1)!r}: {e}") from None
            rules.append(Rule(pattern, _java_replacement(m.group(2).replace("\\/", "/")), m.group(3)))
            rest = rest[m.end():]
        rest = rest.lstrip()
        if rest.startswith(","):
            rest = rest[1:].lstrip()
        elif rest:
            raise PrincipalMappingError(f"invalid rule at {rest[:40]!r}: rules are separated by commas")
    return rules or [Rule(None)]


def map_name(rules: list[Rule], name: str) -> str:
    for rule in rules:
        mapped = rule.apply(name)
        if mapped is not None:
            return mapped
    raise PrincipalMappingError(f"no rule of ssl.principal.mapping.rules applies to {name}")


def _escape(value: str) -> str:
    out = "".join("\\" + c if c in ',+"\\<>;' else c for c in value)
    if out.startswith(("#", " ")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def subject_name(peer_cert: dict) -> str | None:
    """The RFC 2253 subject of ``ssl.SSLObject.getpeercert()``'s answer, or None without a certificate."""
    subject = peer_cert.get("subject") if peer_cert else None
    if not subject:
        return None
    rdns = ["+".join(f"{_KEYWORDS.get(k, k)}={_escape(v)}" for k, v in rdn) for rdn in subject]
    return ",".join(reversed(rdns))
