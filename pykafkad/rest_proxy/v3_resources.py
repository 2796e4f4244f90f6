"""The shapes of API v3's answers: a resource is ``{"kind", "metadata": {"self", "resource_name"},
...}``, a collection ``{"kind": "...List", "metadata": {"self", "next": null}, "data": [...]}``, a
link to another ``{"related": url}``.  URLs are absolute, built from the request's own base (the
address the client used); resource names are Confluent's CRNs (``crn:///kafka=C/topic=T``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request


class V3Urls:
    """The URLs and resource names of one request's answer."""

    def __init__(self, request: Request, cluster_id: str) -> None:
        self.base = str(request.base_url).rstrip("/") + "/v3/clusters/" + quote(cluster_id, safe="")
        self.cluster_id = cluster_id

    def url(self, *parts: str | int) -> str:
        return "/".join([self.base, *(quote(str(p), safe="") for p in parts)])

    def crn(self, *pairs: tuple[str, str | int]) -> str:
        return "crn:///kafka=" + self.cluster_id + "".join(f"/{k}={v}" for k, v in pairs)

    def related(self, *parts: str | int) -> dict[str, str]:
        return {"related": self.url(*parts)}

    def resource(self, kind: str, self_parts: tuple[str | int, ...], crn: tuple[tuple[str, str | int], ...] | None,
                 **fields: Any) -> dict[str, Any]:
        metadata: dict[str, Any] = {"self": self.url(*self_parts)}
        if crn is not None:
            metadata["resource_name"] = self.crn(*crn)
        return {"kind": kind, "metadata": metadata, "cluster_id": self.cluster_id, **fields}

    def collection(self, kind: str, self_parts: tuple[str | int, ...], data: list[dict[str, Any]]) -> dict[str, Any]:
        return {"kind": kind, "metadata": {"self": self.url(*self_parts), "next": None}, "data": data}
