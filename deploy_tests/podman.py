"""Containers for the deploy tests, without a Docker daemon: podman with the runc runtime and
ulimits this VM allows (its own containers.conf), a Debian base image made here with mmdebstrap
that carries the machine's CA certificates and pip configuration (so that apt, pip and cargo inside a
build reach the registries the machine reaches), and the project's real Dockerfile built on it."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
BASE_IMAGE = "localhost/pykafkad-test-base:bookworm"
IMAGE = "localhost/pykafkad:test"
DEBIAN_SOURCES = ["deb http://deb.debian.org/debian bookworm main",
                  "deb http://deb.debian.org/debian bookworm-updates main",
                  "deb http://deb.debian.org/debian-security bookworm-security main"]
# crun fails on this VM's cgroup layout, and the default ulimits are above the VM's own.
CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile=16384:16384", "nproc=4096:4096"]
[engine]
runtime = "runc"
"""
BUILD_TIMEOUT_S = 1800


class PodmanError(AssertionError):
    """A podman command failed; its output is in the message."""


def environment(work: Path) -> dict[str, str]:
    """The environment podman runs with: CONTAINERS_CONF pointing at this module's settings."""
    conf = work / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    return {**os.environ, "CONTAINERS_CONF": str(conf)}


def podman(env: dict[str, str], *args: str, check: bool = True, timeout: float = 300,
           input_bytes: bytes | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["podman", *args], env=env, capture_output=True, timeout=timeout,
                            input=input_bytes.decode() if input_bytes is not None else None, text=True)
    if check and result.returncode != 0:
        raise PodmanError(f"podman {' '.join(args)} exited {result.returncode}:\n{result.stderr[-4000:]}")
    return result


def _trust_files() -> list[Path]:
    """The machine's extra CA certificates and pip configuration, copied into the base image."""
    found = sorted(Path("/usr/local/share/ca-certificates").glob("*.crt"))
    return found + [p for p in (Path("/etc/pip.conf"),) if p.is_file()]


# Bumped when ensure_base makes its image differently.
RECIPE_VERSION = "2"


def _recipe() -> str:
    digest = hashlib.sha256("\n".join([RECIPE_VERSION, *DEBIAN_SOURCES]).encode())
    for path in _trust_files():
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def ensure_base(env: dict[str, str]) -> str:
    """The local Debian base image, made once per machine (and again if the machine's CA
    certificates or pip configuration change): mmdebstrap's minbase, imported into podman."""
    recipe = _recipe()
    found = podman(env, "image", "inspect", "--format", "{{ index .Config.Labels \"recipe\" }}", BASE_IMAGE,
                   check=False)
    if found.returncode == 0 and found.stdout.strip() == recipe:
        return BASE_IMAGE
    hooks = []
    certificates = [str(p) for p in _trust_files() if p.suffix == ".crt"]
    if certificates:
        hooks += ["--customize-hook=copy-in " + " ".join(certificates) + " /usr/local/share/ca-certificates/",
                  '--customize-hook=chroot "$1" update-ca-certificates']
    if Path("/etc/pip.conf").is_file():
        hooks.append("--customize-hook=copy-in /etc/pip.conf /etc/")
    # As Debian's published images: no package cache or lists left behind.
    hooks.append('--customize-hook=chroot "$1" apt-get clean')
    hooks.append('--customize-hook=rm -rf "$1"/var/lib/apt/lists/*')
    print("deploy_tests: making the Debian base image with mmdebstrap (about a minute)", file=sys.stderr)
    strap = subprocess.Popen(["mmdebstrap", "--quiet", "--variant=minbase", "--include=ca-certificates", *hooks,
                              "bookworm", "-", *DEBIAN_SOURCES], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    imported = subprocess.run(["podman", "import", "--change", f"LABEL recipe={recipe}", "-", BASE_IMAGE],
                              stdin=strap.stdout, env=env, capture_output=True, text=True, timeout=900)
    assert strap.stdout is not None and strap.stderr is not None
    strap.stdout.close()
    strap_err = strap.stderr.read().decode(errors="replace")
    if strap.wait(timeout=900) != 0 or imported.returncode != 0:
        raise PodmanError(f"mmdebstrap | podman import failed:\n{strap_err[-3000:]}\n{imported.stderr[-3000:]}")
    return BASE_IMAGE


def build_image(env: dict[str, str], base: str, log: Path) -> str:
    """The repository's Dockerfile built on ``base`` (both stages), tagged IMAGE."""
    print(f"deploy_tests: building the image from the Dockerfile (minutes the first time; log in {log})",
          file=sys.stderr)
    began = time.monotonic()
    with open(log, "w") as out:
        result = subprocess.run(["podman", "build", "--pull=never", "--format", "docker",
                                 "--build-arg", f"BASE={base}", "--build-arg", f"BUILDER_BASE={base}",
                                 "-t", IMAGE, str(REPO_ROOT)], env=env, stdout=out, stderr=subprocess.STDOUT,
                                timeout=BUILD_TIMEOUT_S)
    if result.returncode != 0:
        raise PodmanError(f"podman build failed:\n{log.read_text()[-5000:]}")
    print(f"deploy_tests: image built in {time.monotonic() - began:.0f} s", file=sys.stderr)
    return IMAGE


ZOOKEEPER_IMAGE = "localhost/zookeeper-standin:test"
STANDIN = Path(__file__).resolve().parent / "zookeeper_standin"


def build_zookeeper_standin(env: dict[str, str], base: str, zookeeper_lib: Path, work: Path) -> str:
    """The stand-in for the official zookeeper image (zookeeper_standin/), on ``base`` with the jars
    of ``zookeeper_lib``."""
    context = work / "zookeeper-standin"
    shutil.copytree(STANDIN, context)
    shutil.copytree(zookeeper_lib, context / "lib")
    result = podman(env, "build", "--pull=never", "--build-arg", f"BASE={base}", "-t", ZOOKEEPER_IMAGE,
                    "-f", str(context / "Containerfile"), str(context), check=False, timeout=BUILD_TIMEOUT_S)
    if result.returncode != 0:
        raise PodmanError(f"the zookeeper stand-in did not build:\n{(result.stdout + result.stderr)[-4000:]}")
    return ZOOKEEPER_IMAGE


def remove(env: dict[str, str], container: str) -> None:
    podman(env, "rm", "-f", "-t", "5", container, check=False)


def wait_healthy(env: dict[str, str], container: str, timeout: float = 120) -> None:
    """Until the image's HEALTHCHECK (the broker's /readyz) passes, run by hand: podman's own timer
    needs systemd, which this VM does not run."""
    deadline = time.monotonic() + timeout
    while podman(env, "healthcheck", "run", container, check=False).returncode != 0:
        state = inspect(env, container)["State"]
        if not state["Running"]:
            logs = podman(env, "logs", container, check=False)
            raise PodmanError(f"{container} exited {state['ExitCode']} before it was ready:\n"
                              f"{(logs.stdout + logs.stderr)[-4000:]}")
        if time.monotonic() > deadline:
            raise PodmanError(f"{container} not ready within {timeout:.0f} s")
        time.sleep(0.5)


def logs(env: dict[str, str], container: str) -> str:
    found = podman(env, "logs", container)
    return found.stdout + found.stderr


def inspect(env: dict[str, str], container: str) -> dict:
    return json.loads(podman(env, "inspect", container).stdout)[0]


def available() -> str | None:
    """Why containers cannot run here, or None."""
    missing = [tool for tool in ("podman", "runc", "mmdebstrap") if shutil.which(tool) is None]
    return f"missing {', '.join(missing)} (make system-deps installs them)" if missing else None
