"""The generator: naming rule, default conversion, and that the committed wire/messages is up to date."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from wire.codegen.definitions import load_definition, parse_message
from wire.codegen.generate import generate_sources, write_sources
from wire.codegen.jar import JarNotFound, find_jar
from wire.codegen.naming import snake_case
from wire.messages import KAFKA_VERSION
from wire.schema import NEVER, TYPE_DEFAULT, ArrayOf, Struct, Versions

MESSAGES_DIR = Path(__file__).resolve().parent.parent / "messages"


@pytest.mark.parametrize(
    ("camel", "snake"),
    [
        ("ClientSoftwareName", "client_software_name"),
        ("TopicId", "topic_id"),
        ("IsrNodes", "isr_nodes"),
        ("ProducerId", "producer_id"),
        ("MaxNumOffsets", "max_num_offsets"),
        ("ThrottleTimeMs", "throttle_time_ms"),
        ("KRaftVersion", "k_raft_version"),
        ("Enable2Pc", "enable2_pc"),
        ("V3AndBelowTopics", "v3_and_below_topics"),
        ("HTTPPort", "http_port"),
        ("ApiVersions", "api_versions"),
    ],
)
def test_snake_case(camel: str, snake: str) -> None:
    assert snake_case(camel) == snake


def test_versions_parse() -> None:
    assert Versions.parse("3+") == Versions(3)
    assert Versions.parse("0-2") == Versions(0, 2)
    assert Versions.parse("5") == Versions(5, 5)
    assert Versions.parse("none") == NEVER
    assert 4 in Versions(3) and 2 not in Versions(3) and 0 not in NEVER


def test_definition_translation() -> None:
    doc = load_definition(
        """
        // comment line
        {
          "apiKey": 99, "type": "request", "name": "ExampleRequest",
          "validVersions": "0-3", "flexibleVersions": "2+",
          "fields": [
            { "name": "LimitMs", "type": "int32", "versions": "0+", "default": "0x7fffffff",
              "about": "http://example.com // not a comment" },
            { "name": "Flag", "type": "bool", "versions": "1+", "default": "False" },
            { "name": "Name", "type": "string", "versions": "0+", "nullableVersions": "1+",
              "default": "null" },
            { "name": "Items", "type": "[]Item", "versions": "0+" },
            { "name": "Extra", "type": "int64", "versions": "2+", "tag": 3, "taggedVersions": "2+",
              "default": "-1" }
          ],
          "commonStructs": [
            { "name": "Item", "versions": "0+", "fields": [
              { "name": "ItemId", "type": "uuid", "versions": "0+" } ] }
          ]
        }
        """
    )
    parsed = parse_message(doc)
    fields = {f.name: f for f in parsed.schema.fields}
    assert parsed.api_key == 99 and parsed.api_name == "Example"
    assert fields["limit_ms"].default == 0x7FFFFFFF
    assert fields["flag"].default is TYPE_DEFAULT  # "False" is the bool type default
    assert fields["name"].default is None and fields["name"].nullable == Versions(1)
    assert fields["items"].type == ArrayOf(Struct("Item", (fields["items"].type.item.fields[0],)))
    assert fields["items"].type.item.fields[0].name == "item_id"
    assert (fields["extra"].tag, fields["extra"].tagged, fields["extra"].default) == (3, Versions(2), -1)


def test_generated_files_carry_banner_and_no_prose() -> None:
    for path in sorted(MESSAGES_DIR.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert text.startswith(
            f"# Generated from kafka-clients {KAFKA_VERSION} by wire.codegen; do not edit.\n"
        )
        assert "about" not in text.lower().replace("about_", ""), path.name


def _jar() -> Path:
    try:
        return find_jar(KAFKA_VERSION, download=shutil.which("mvn") is not None)
    except JarNotFound as exc:  # pragma: no cover - only without Maven and without the jar
        pytest.skip(str(exc))


def test_committed_messages_are_up_to_date(tmp_path: Path) -> None:
    files = generate_sources(_jar(), KAFKA_VERSION)
    write_sources(files, tmp_path, KAFKA_VERSION)
    committed = {p.name: p.read_text(encoding="utf-8") for p in MESSAGES_DIR.glob("*.py")}
    generated = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.glob("*.py")}
    assert sorted(generated) == sorted(committed)
    stale = [name for name in sorted(generated) if generated[name] != committed[name]]
    assert stale == [], (
        f"wire/messages is stale; run `python -m wire.codegen --kafka-version {KAFKA_VERSION}`"
    )


def test_generation_is_deterministic() -> None:
    jar = _jar()
    assert generate_sources(jar, KAFKA_VERSION) == generate_sources(jar, KAFKA_VERSION)


def test_java_lib_directory_is_searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jar = tmp_path / f"kafka-clients-{KAFKA_VERSION}.jar"
    jar.write_bytes(b"")
    monkeypatch.setenv("JAVA_LIB", str(tmp_path))
    assert find_jar(KAFKA_VERSION, download=False) == jar
