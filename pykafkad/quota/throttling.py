"""What a request costs against its client's quotas, and how the client is held back.

Kafka counts a Produce request's size against ``producer_byte_rate``, a consumer's Fetch response
size against ``consumer_byte_rate`` and the handler's time against ``request_percentage`` (one
handler thread busy for the whole window is 100).  Requests between brokers are exempt (a
follower's Fetch, WriteTxnMarkers), as are the SASL exchange's.  The throttle time is the
largest any of them earns; the response carries it in ``throttle_time_ms``.  Clients that back off
themselves (KIP-219: from the version of each API named below) get the response at once and the
connection is muted for the throttle time; older ones get the response only after it.

A consumer's Fetch that earns a throttle time is answered with no data at all, as Kafka's
KafkaApis answers it (``getThrottledResponse``: no topics, no error, session id 0), and its bytes
are taken back off ``consumer_byte_rate``: they were never sent.
"""

from __future__ import annotations

from typing import Any

from pykafkad.quota.client_quota import ClientQuotaManager
from pykafkad.quota.entity import CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE

PRODUCE, FETCH = 0, 1
SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
WRITE_TXN_MARKERS = 27
FETCH_REPLICA_STATE_FROM = 15

# Kafka's AbstractResponse.shouldClientThrottle: API key -> the first version whose clients back off
# by themselves.  APIs not named never do (Kafka's default), so their responses are delayed instead.
CLIENT_THROTTLES_FROM: dict[int, int] = {
    0: 6, 1: 8, 2: 3, 3: 6, 8: 4, 9: 4, 10: 2, 11: 3, 12: 2, 13: 2, 14: 2, 15: 2, 16: 2, 18: 2, 19: 3,
    20: 2, 21: 1, 22: 1, 24: 1, 25: 1, 26: 1, 28: 1, 29: 1, 30: 1, 31: 1, 32: 2, 33: 1, 34: 1, 35: 1,
    37: 1, 38: 1, 40: 1, 41: 1, 42: 1, 43: 0, 44: 0, 45: 0, 46: 0, 47: 0, 50: 0, 51: 0, 75: 0,
}

# Percentage-seconds per second of handler time (Kafka's nanosToPercentage).
PERCENT_PER_SECOND = 100.0


def client_throttles(api_key: int, version: int) -> bool:
    """Whether a client of this API version backs off by itself when told to (KIP-219)."""
    first = CLIENT_THROTTLES_FROM.get(api_key)
    return first is not None and version >= first


def from_broker(api_key: int, version: int, body: dict[str, Any]) -> bool:
    """Whether the request is one brokers send each other, which no client quota holds back."""
    if api_key == FETCH:
        replica_id = body["replica_state"]["replica_id"] if version >= FETCH_REPLICA_STATE_FROM else body["replica_id"]
        return replica_id >= 0
    return api_key == WRITE_TXN_MARKERS


def quota_user(principal: str) -> str:
    """The quota user of a principal: its name (``User:alice`` -> ``alice``, ``ANONYMOUS`` unauthenticated)."""
    return principal.partition(":")[2] or principal


def throttle_time_ms(quotas: ClientQuotaManager, principal: str, client_id: str | None, api_key: int,
                     version: int, body: dict[str, Any], request_bytes: int, response_bytes: int,
                     handler_seconds: float | None) -> int:
    """Record the request against its client's quotas; the throttle time it earns (0: none)."""
    if api_key in (SASL_HANDSHAKE, SASL_AUTHENTICATE) or from_broker(api_key, version, body):
        return 0
    user, client = quota_user(principal), client_id or ""
    throttle = 0
    if api_key == PRODUCE:
        throttle = quotas.record(PRODUCER_BYTE_RATE, user, client, request_bytes)
    elif api_key == FETCH:
        throttle = quotas.record(CONSUMER_BYTE_RATE, user, client, response_bytes)
    if handler_seconds is not None:
        throttle = max(throttle, quotas.record(REQUEST_PERCENTAGE, user, client,
                                               handler_seconds * PERCENT_PER_SECOND))
    if api_key == FETCH and throttle > 0:
        # Whichever quota throttles it, the Fetch is answered empty (withhold_throttled_data).
        quotas.unrecord(CONSUMER_BYTE_RATE, user, client, response_bytes)
    return throttle


def withhold_throttled_data(api_key: int, response: dict[str, Any]) -> None:
    """Empty the response of a request that earned a throttle time where Kafka does: a consumer's
    Fetch keeps only its throttle time (Kafka's FetchContext.getThrottledResponse)."""
    if api_key == FETCH:
        response.update(error_code=0, session_id=0, responses=[])
