"""This broker authenticating to another over SASL, when the inter-broker listener is SASL_PLAINTEXT
or SASL_SSL: ``sasl.mechanism.inter.broker.protocol`` with the ``username`` and ``password`` of that
listener's JAAS config for the mechanism, as Kafka's brokers take their own credentials."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pykafkad.config import BrokerConfig, ConfigError
from pykafkad.security.sasl import jaas_options

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36

Exchange = Callable[[int, int, dict], Awaitable[dict]]


class SaslClientError(Exception):
    """The other broker refused this broker's credentials."""


@dataclass(frozen=True)
class SaslClient:
    mechanism: str
    username: str
    password: str

    async def authenticate(self, request: Exchange) -> None:
        """Run the exchange over ``request`` (api key, version, body) -> answer."""
        answer = await request(SASL_HANDSHAKE, 1, {"mechanism": self.mechanism})
        if answer["error_code"] != 0:
            raise SaslClientError(f"SaslHandshake for {self.mechanism} answered error {answer['error_code']}")
        if self.mechanism == "PLAIN":
            await self._step(request, b"\x00" + self.username.encode() + b"\x00" + self.password.encode())
            return
        # Imported here: scramp is about 35 ms of a broker's start, and most links use no SCRAM.
        from scramp import ScramClient, ScramException

        client = ScramClient([self.mechanism], self.username, self.password)
        try:
            client.set_server_first((await self._step(request, client.get_client_first().encode())).decode())
            client.set_server_final((await self._step(request, client.get_client_final().encode())).decode())
        except ScramException as e:
            raise SaslClientError(f"SCRAM exchange failed: {e}") from e

    @staticmethod
    async def _step(request: Exchange, token: bytes) -> bytes:
        answer = await request(SASL_AUTHENTICATE, 2, {"auth_bytes": token})
        if answer["error_code"] != 0:
            raise SaslClientError(f"SaslAuthenticate answered error {answer['error_code']}: {answer['error_message']}")
        return bytes(answer["auth_bytes"])


def inter_broker_sasl(config: BrokerConfig) -> SaslClient | None:
    """The credentials this broker presents to the others, when they are reached over SASL."""
    listener = config.inter_broker_listener
    if not listener.uses_sasl:
        return None
    mechanism = config["sasl.mechanism.inter.broker.protocol"]
    options = jaas_options(config, listener.name, mechanism)
    if "username" not in options or "password" not in options:
        raise ConfigError(f"listener.name.{listener.name.lower()}.{mechanism.lower()}.sasl.jaas.config: the "
                          f"inter-broker listener needs username=\"...\" and password=\"...\" for this broker")
    return SaslClient(mechanism, options["username"], options["password"])
