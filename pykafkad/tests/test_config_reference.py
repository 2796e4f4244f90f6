"""docs/configuration.md is generated from the key tables: it must match them, and the tables must
say honestly which modules read each key."""

from __future__ import annotations

from pathlib import Path

from pykafkad.config import ACCEPTED_UNUSED, KEYS
from pykafkad.config_reference import PAGE, render
from pykafkad.topic_config import TOPIC_KEYS

PACKAGE = Path(__file__).resolve().parent.parent


def test_committed_configuration_page_is_up_to_date() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/configuration.md is stale; `make docs` regenerates it from pykafkad/config.py"
    )


def test_every_key_is_on_the_page() -> None:
    page = render()
    for name in [*KEYS, *ACCEPTED_UNUSED, *TOPIC_KEYS]:
        assert f"| `{name}` |" in page, name


def test_every_key_has_a_line_of_documentation() -> None:
    assert [name for name, key in KEYS.items() if not key.doc] == []


def test_the_modules_said_to_honour_a_key_read_it() -> None:
    """Each module named in ``by`` exists, and one of them names the key (or the topic key it
    stands behind); config.py counts, for keys it parses into BrokerConfig's attributes."""
    unread = []
    for key in KEYS.values():
        modules = [m.strip() for m in key.by.split(",") if m.strip()]
        for module in modules:
            assert (PACKAGE / module).is_file(), f"{key.name}: no module pykafkad/{module}"
        names = {key.name} | {t.name for t in TOPIC_KEYS.values() if key.name in t.broker_synonyms}
        if modules and "config.py" not in modules and not any(
                f'"{n}"' in (PACKAGE / m).read_text(encoding="utf-8") for m in modules for n in names):
            unread.append(key.name)
    assert unread == []
