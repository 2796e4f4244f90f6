"""Session fixtures of the deploy tests: podman's environment, the local Debian base image and the
image built from the repository's Dockerfile, each made once per session (the base once per
machine)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from deploy_tests import podman as containers


@pytest.fixture(scope="session")
def podman_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    missing = containers.available()
    if missing is not None:
        pytest.fail(f"containers cannot run here: {missing}")
    return containers.environment(tmp_path_factory.mktemp("podman"))


@pytest.fixture(scope="session")
def image(podman_env: dict[str, str], base_image: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    return containers.build_image(podman_env, base_image, tmp_path_factory.mktemp("build") / "podman-build.log")


@pytest.fixture(scope="session")
def base_image(podman_env: dict[str, str]) -> str:
    return containers.ensure_base(podman_env)


@pytest.fixture(scope="session")
def zookeeper_image(podman_env: dict[str, str], base_image: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    lib = os.environ.get("ZOOKEEPER_LIB")
    if not lib or not Path(lib).is_dir():
        pytest.fail("ZOOKEEPER_LIB must name ZooKeeper's jars (make zookeeper-deps; make test passes it)")
    return containers.build_zookeeper_standin(podman_env, base_image, Path(lib), tmp_path_factory.mktemp("zk"))


@pytest.fixture
def volume(podman_env: dict[str, str], request: pytest.FixtureRequest) -> Iterator[str]:
    name = f"pykafkad-test-{request.node.name[:40].replace('[', '-').replace(']', '')}"
    containers.podman(podman_env, "volume", "rm", "-f", name, check=False)
    containers.podman(podman_env, "volume", "create", name)
    yield name
    containers.podman(podman_env, "volume", "rm", "-f", name, check=False)
