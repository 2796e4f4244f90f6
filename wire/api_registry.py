"""The generated schemas by api key, each API's module imported the first time it is asked for.

A broker's start imported all of them (about 90 modules, 40-60 ms of the 0.4-0.5 s from exec to the
first produce); a broker that never sees share-group or KRaft voter requests never needs theirs.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from wire.schema import ApiSchema


class ApiRegistry(Mapping[int, ApiSchema]):
    """``{api key: ApiSchema}`` over the modules of ``package`` named in ``modules``."""

    def __init__(self, package: str, modules: dict[int, str]) -> None:
        self._package = package
        self._modules = modules
        self._loaded: dict[int, ApiSchema] = {}

    def __getitem__(self, api_key: int) -> ApiSchema:
        api = self._loaded.get(api_key)
        if api is None:
            module = importlib.import_module(f"{self._package}.{self._modules[api_key]}")
            api = self._loaded[api_key] = module.API
        return api

    def __contains__(self, api_key: object) -> bool:
        return api_key in self._modules

    def __iter__(self) -> Iterator[int]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


__all__ = ["ApiRegistry"]
