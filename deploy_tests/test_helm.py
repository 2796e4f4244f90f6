"""The Helm chart (deploy/helm/pykafkad): ``helm lint --strict``, ``helm template`` with the default
values and with non-default ones (TLS, SASL, an existing ZooKeeper), every rendered manifest valid
against Kubernetes' schemas, and what the brokers' StatefulSet does checked for real: the broker id
from the pod's ordinal (its shell line run), the per-pod advertised listener, and a config that
pykafkad's own loader accepts.  deploy/kubernetes/ is the chart rendered by ``make kubernetes``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from pykafkad.config import load_config, read_properties
from pykafkad.config_environment import environment_config

REPO_ROOT = Path(__file__).resolve().parent.parent
CHART = REPO_ROOT / "deploy" / "helm" / "pykafkad"
SECURED = Path(__file__).resolve().parent / "helm_values_secured.yaml"
RENDERED = REPO_ROOT / "deploy" / "kubernetes" / "pykafkad.yaml"
KUBERNETES_VERSION = "1.33.0"
NAMESPACE = "kafka"


@pytest.fixture(scope="module")
def helm() -> str:
    found = os.environ.get("HELM") or shutil.which("helm")
    if not found or not Path(found).is_file():
        pytest.fail("helm not found: make helm-deps builds it (make test passes HELM)")
    return found


def _helm(helm: str, *args: str) -> str:
    result = subprocess.run([helm, *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


def _render(helm: str, values: Path | None = None, namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    extra = ["-f", str(values)] if values else []
    text = _helm(helm, "template", "demo", str(CHART), "--namespace", namespace, *extra)
    return [doc for doc in yaml.safe_load_all(text) if doc]


def _one(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    [found] = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container["env"]}


def _expand(value: str, variables: dict[str, str]) -> str:
    """Kubernetes' $(VAR) expansion in an env value."""
    for name, replacement in variables.items():
        value = value.replace(f"$({name})", replacement)
    return value


def _broker_id(container: dict[str, Any], pod: str) -> int:
    """The container's own shell line, run with the pod's host name, up to the exec of the entrypoint."""
    line = container["args"][0].replace("exec pykafkad-entrypoint", 'echo "$KAFKA_BROKER_ID"')
    assert container["command"] == ["tini", "--", "/bin/sh", "-c"]
    out = subprocess.run(["/bin/sh", "-c", line], env={"HOSTNAME": pod, "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, check=True).stdout
    return int(out)


def _broker_config(docs: list[dict[str, Any]], pod: str, tmp_path: Path, secrets: dict[str, str]) -> Any:
    """The config pykafkad would start with in ``pod``: the ConfigMap's server.properties under the
    container's KAFKA_* variables (secrets filled in from ``secrets``)."""
    statefulset = _one(docs, "StatefulSet", "demo-pykafkad")
    [container] = statefulset["spec"]["template"]["spec"]["containers"]
    properties = tmp_path / f"{pod}.properties"
    properties.write_text(_one(docs, "ConfigMap", "demo-pykafkad-config")["data"]["server.properties"])
    variables = {"POD_NAME": pod}
    environment = {"KAFKA_BROKER_ID": str(_broker_id(container, pod))}
    for name, entry in _env(container).items():
        if "value" in entry:
            environment[name] = _expand(entry["value"], variables)
        elif "secretKeyRef" in entry.get("valueFrom", {}):
            environment[name] = secrets[entry["valueFrom"]["secretKeyRef"]["key"]]
    keys = environment_config({k: v for k, v in environment.items() if k.startswith("KAFKA_")})
    assert read_properties(properties)  # the ConfigMap's text is a properties file
    return load_config(properties, [], keys)


def test_lint_strict(helm: str) -> None:
    _helm(helm, "lint", "--strict", str(CHART))
    _helm(helm, "lint", "--strict", str(CHART), "-f", str(SECURED))


@pytest.mark.parametrize("values", [None, SECURED], ids=["default", "secured"])
def test_every_rendered_manifest_is_valid_kubernetes(helm: str, values: Path | None) -> None:
    docs = _render(helm, values)
    kinds = {d["kind"] for d in docs}
    assert {"StatefulSet", "Service", "ConfigMap", "PodDisruptionBudget"} <= kinds
    for doc in docs:
        if doc["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # a CRD's kind: no schema of Kubernetes' own
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_the_brokers_statefulset(helm: str, tmp_path: Path) -> None:
    docs = _render(helm)
    statefulset = _one(docs, "StatefulSet", "demo-pykafkad")
    spec = statefulset["spec"]
    pod = spec["template"]["spec"]
    [container] = pod["containers"]
    assert spec["replicas"] == 3
    headless = _one(docs, "Service", spec["serviceName"])
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["selector"] == spec["selector"]["matchLabels"]

    # Ids from the ordinal: pod 0 is broker 1, and a rescheduled pod-2 is broker 3 again.
    assert [_broker_id(container, f"demo-pykafkad-{n}") for n in range(3)] == [1, 2, 3]
    config = _broker_config(docs, "demo-pykafkad-2", tmp_path, {})
    assert config.node_id == 3
    assert [(lst.name, lst.host, lst.port) for lst in config.advertised] == [
        ("PLAINTEXT", f"demo-pykafkad-2.demo-pykafkad-headless.{NAMESPACE}.svc.cluster.local", 9092)]
    assert config["zookeeper.connect"] == (
        f"demo-pykafkad-zookeeper-0.demo-pykafkad-zookeeper-headless.{NAMESPACE}.svc.cluster.local:2181")
    assert config["min.insync.replicas"] == 2
    assert config["default.replication.factor"] == 3

    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert {p["name"]: p["containerPort"] for p in container["ports"]}["metrics"] == 9644
    assert pod["terminationGracePeriodSeconds"] >= 60
    assert pod["enableServiceLinks"] is False
    assert pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    [claim] = spec["volumeClaimTemplates"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "10Gi"
    assert {"name": "data", "mountPath": "/var/lib/pykafkad"} in container["volumeMounts"]

    budget = _one(docs, "PodDisruptionBudget", "demo-pykafkad")
    assert budget["spec"]["maxUnavailable"] == 1
    assert budget["spec"]["selector"]["matchLabels"] == spec["selector"]["matchLabels"]

    zookeeper = _one(docs, "StatefulSet", "demo-pykafkad-zookeeper")
    assert zookeeper["spec"]["replicas"] == 1
    assert "ZOO_MY_ID=$(( ${HOSTNAME##*-} + 1 ))" in zookeeper["spec"]["template"]["spec"]["containers"][0]["args"][0]


def test_secured_values(helm: str, tmp_path: Path) -> None:
    docs = _render(helm, SECURED)
    statefulset = _one(docs, "StatefulSet", "demo-pykafkad")
    [container] = statefulset["spec"]["template"]["spec"]["containers"]
    assert statefulset["spec"]["replicas"] == 5
    assert container["image"] == "registry.example.com/pykafkad:0.1.0-test"
    assert not [d for d in docs if d["metadata"]["name"] == "demo-pykafkad-zookeeper"]
    secret = _one(docs, "Secret", "demo-pykafkad-sasl")
    jaas = secret["stringData"]["jaas"]
    assert 'user_alice="alice-secret"' in jaas and 'user_bob="bob-secret"' in jaas

    certificate = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
    config = _broker_config(docs, "demo-pykafkad-4", tmp_path,
                            {"jaas": jaas, "tls.crt": certificate, "tls.key": "key", "ca.crt": certificate})
    assert config.node_id == 4  # brokerIdOffset 0
    assert config.protocol_map["CLIENT"] == "SASL_SSL"
    assert config.inter_broker_listener.name == "INTERNAL"
    assert config["zookeeper.connect"] == "zk-0.zk:2181,zk-1.zk:2181,zk-2.zk:2181/pykafkad"
    assert config["num.partitions"] == 6 and config["log.retention.hours"] == 72
    assert config["sasl.enabled.mechanisms"] == ["PLAIN"]
    assert config.listener_props["listener.name.client.plain.sasl.jaas.config"] == jaas
    assert config["rest.listener"] == "http://0.0.0.0:8082"

    pod = statefulset["spec"]["template"]["spec"]
    assert pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    monitor = _one(docs, "ServiceMonitor", "demo-pykafkad")
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    wanted = monitor["spec"]["selector"]["matchLabels"]
    [scraped] = [d for d in docs if d["kind"] == "Service"
                 and all(d["metadata"]["labels"].get(k) == v for k, v in wanted.items())]
    assert scraped["spec"]["clusterIP"] == "None"


def test_the_plain_manifests_are_the_chart_rendered(helm: str) -> None:
    rendered = _helm(helm, "template", "pykafkad", str(CHART), "--namespace", "default")
    assert RENDERED.read_text() == rendered, "deploy/kubernetes/ is stale: run `make kubernetes`"
