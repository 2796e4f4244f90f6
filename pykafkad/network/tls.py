"""TLS for the SSL listeners and for links to other brokers: Kafka's ``ssl.*`` keys with PEM stores.

Kafka's brokers read JKS or PKCS12 stores by default; pykafkad reads what Kafka reads with
``ssl.keystore.type=PEM`` and ``ssl.truststore.type=PEM``: the private key and its certificate
chain in one PEM file (``ssl.keystore.location``) or inline (``ssl.keystore.key`` and
``ssl.keystore.certificate.chain``), an encrypted key's ``ssl.key.password``, and the trusted
certificates in a PEM file (``ssl.truststore.location``) or inline (``ssl.truststore.certificates``).
PEM stores have no store password: ``ssl.keystore.password`` and ``ssl.truststore.password`` are
refused with Kafka's own messages (DefaultSslEngineFactory), as Kafka refuses them with PEM.
``ssl.client.auth`` asks clients for certificates (``required`` refuses a client without one from a
trusted CA).  ``ssl.protocol`` is Kafka's SSLContext protocol: it leaves the versions an SSL listener
accepts to ``ssl.enabled.protocols`` (a Kafka broker with ``ssl.protocol=TLSv1.2`` still accepts
TLS 1.3 clients), but ``TLSv1.2`` keeps this broker's own connections to other brokers at TLS 1.2,
as Kafka's clients with ``ssl.protocol=TLSv1.2`` do not use TLS 1.3.  A bad setting stops the broker
at start with one line saying which key to fix.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile
from collections.abc import Callable

from pykafkad.config import BrokerConfig, ConfigError

_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.S)
_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}


def _normalized_pem(text: str) -> str:
    """PEM as the ssl module reads it, from Kafka's inline form (a properties value whose lines may
    have been joined): each block's base64 rewrapped at 64 characters."""
    blocks = []
    for kind, body in _PEM_BLOCK.findall(text):
        data = "".join(body.split())
        lines = [data[i:i + 64] for i in range(0, len(data), 64)]
        blocks.append(f"-----BEGIN {kind}-----\n" + "\n".join(lines) + f"\n-----END {kind}-----\n")
    return "".join(blocks)


def _check_pem_type(config: BrokerConfig, key: str) -> None:
    if str(config[key]).upper() != "PEM":
        raise ConfigError(f"{key}={config[key]}: pykafkad reads PEM stores only; set {key}=PEM")


class _NoKeyPassword(Exception):
    """The private key is encrypted and ssl.key.password is not set."""


def _key_password(config: BrokerConfig) -> Callable[[], str]:
    """ssl.key.password for the ssl module; without one, an encrypted key is refused (OpenSSL would
    otherwise ask for a pass phrase on the terminal)."""
    password = config["ssl.key.password"]

    def supply() -> str:
        if password is None:
            raise _NoKeyPassword
        return str(password)

    return supply


def _store_password_problem(config: BrokerConfig) -> str | None:
    """Kafka's refusals of a key store password with PEM key stores (createKeystore)."""
    if config["ssl.keystore.password"] is None:
        return None
    if config["ssl.keystore.key"]:
        return "SSL key store password cannot be specified with PEM format, only key password may be specified."
    if config["ssl.keystore.location"]:
        return "SSL key store password cannot be specified with PEM format, only key password may be specified"
    return "SSL key store is not specified, but key store password is specified."


def _load_key_store(context: ssl.SSLContext, config: BrokerConfig) -> None:
    location, key, chain = (config["ssl.keystore.location"], config["ssl.keystore.key"],
                            config["ssl.keystore.certificate.chain"])
    problem = _store_password_problem(config)
    if problem and (location or key):
        _check_pem_type(config, "ssl.keystore.type")
    if problem:
        raise ConfigError(f"ssl.keystore.password: {problem}")
    password = _key_password(config)
    if location:
        _check_pem_type(config, "ssl.keystore.type")
        try:
            context.load_cert_chain(location, password=password)
        except _NoKeyPassword:
            raise ConfigError(f"ssl.keystore.location={location}: the private key is encrypted; set "
                              "ssl.key.password") from None
        except (OSError, ssl.SSLError) as e:
            raise ConfigError(f"ssl.keystore.location={location}: cannot load a PEM private key and certificate "
                              f"chain from it ({e})") from None
        return
    if key and chain:
        _check_pem_type(config, "ssl.keystore.type")
        # The ssl module loads key stores from files only: a private file, removed at once.
        fd, path = tempfile.mkstemp(prefix="pykafkad-keystore-", suffix=".pem")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(_normalized_pem(key) + _normalized_pem(chain))
            context.load_cert_chain(path, password=password)
        except _NoKeyPassword:
            raise ConfigError("ssl.keystore.key: the private key is encrypted; set ssl.key.password") from None
        except ssl.SSLError as e:
            raise ConfigError(f"ssl.keystore.key / ssl.keystore.certificate.chain: not a PEM private key and "
                              f"certificate chain ({e})") from None
        finally:
            os.unlink(path)
        return
    raise ConfigError("an SSL listener needs a key store: set ssl.keystore.type=PEM and ssl.keystore.location (a "
                      "PEM file with the private key and certificate chain), or ssl.keystore.key and "
                      "ssl.keystore.certificate.chain")


def _check_trust_store_password(config: BrokerConfig) -> None:
    """Kafka's refusals of a trust store password (createTruststore): PEM trust stores have none."""
    if config["ssl.truststore.password"] is None:
        return
    if config["ssl.truststore.location"] or config["ssl.truststore.certificates"]:
        _check_pem_type(config, "ssl.truststore.type")
        raise ConfigError("ssl.truststore.password: SSL trust store password cannot be specified for PEM format.")
    raise ConfigError("ssl.truststore.password: SSL trust store is not specified, but trust store password is "
                      "specified.")


def _load_trust_store(context: ssl.SSLContext, config: BrokerConfig) -> bool:
    """Load the trusted certificates; False when none are configured."""
    location, inline = config["ssl.truststore.location"], config["ssl.truststore.certificates"]
    _check_trust_store_password(config)
    if location:
        _check_pem_type(config, "ssl.truststore.type")
        try:
            context.load_verify_locations(cafile=location)
        except (OSError, ssl.SSLError) as e:
            raise ConfigError(f"ssl.truststore.location={location}: cannot load PEM certificates from it ({e})") \
                from None
        return True
    if inline:
        _check_pem_type(config, "ssl.truststore.type")
        try:
            context.load_verify_locations(cadata=_normalized_pem(inline))
        except ssl.SSLError as e:
            raise ConfigError(f"ssl.truststore.certificates: not PEM certificates ({e})") from None
        return True
    return False


def _versions(context: ssl.SSLContext, config: BrokerConfig, client: bool = False) -> None:
    enabled = config["ssl.enabled.protocols"]
    unknown = [v for v in enabled if v not in _VERSIONS]
    if unknown or not enabled:
        raise ConfigError(f"ssl.enabled.protocols: {', '.join(unknown) or '(empty)'} not supported; use TLSv1.2 "
                          "and/or TLSv1.3")
    lowest, highest = min(_VERSIONS[v] for v in enabled), max(_VERSIONS[v] for v in enabled)
    if client and config["ssl.protocol"] == "TLSv1.2":
        # A TLSv1.2 SSLContext's clients offer TLS 1.2 at most, whatever ssl.enabled.protocols says.
        highest = min(highest, ssl.TLSVersion.TLSv1_2)
        if highest < lowest:
            raise ConfigError(f"ssl.protocol=TLSv1.2 with ssl.enabled.protocols={','.join(enabled)} leaves no TLS "
                              "version for connections to other brokers; enable TLSv1.2 or set ssl.protocol=TLSv1.3")
    context.minimum_version, context.maximum_version = lowest, highest


def server_context(config: BrokerConfig) -> ssl.SSLContext:
    """The context of this broker's SSL listeners; ConfigError names the setting to fix."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _versions(context, config)
    _load_key_store(context, config)
    # Kafka builds the trust store of every SSL listener, so its password is refused even unused.
    _check_trust_store_password(config)
    client_auth = _CLIENT_AUTH[config["ssl.client.auth"]]
    if client_auth != ssl.CERT_NONE:
        if not _load_trust_store(context, config):
            raise ConfigError(f"ssl.client.auth={config['ssl.client.auth']} needs a trust store for the clients' "
                              "certificates: set ssl.truststore.type=PEM and ssl.truststore.location")
        context.verify_mode = client_auth
    return context


def client_context(config: BrokerConfig) -> ssl.SSLContext:
    """The context this broker connects to other brokers' SSL listeners with: their certificates
    checked against the trust store (and their host name, with
    ``ssl.endpoint.identification.algorithm=https``), this broker's own key store presented."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _versions(context, config, client=True)
    if not _load_trust_store(context, config):
        context.load_default_certs()
    context.check_hostname = str(config["ssl.endpoint.identification.algorithm"] or "").lower() == "https"
    if config["ssl.keystore.location"] or (config["ssl.keystore.key"] and config["ssl.keystore.certificate.chain"]):
        _load_key_store(context, config)
    return context


_inter_broker: dict[int, ssl.SSLContext | None] = {}


def inter_broker_context(config: BrokerConfig) -> ssl.SSLContext | None:
    """The context for links to other brokers when their listener is SSL, else None (made once)."""
    key = id(config)
    if key not in _inter_broker:
        _inter_broker[key] = (client_context(config)
                              if config.inter_broker_listener.uses_tls else None)
    return _inter_broker[key]
