"""``wire.messages.APIS`` loads an API's schema module only when that API is first asked for."""

import subprocess
import sys

from wire.messages import APIS
from wire.schema import ApiSchema


def test_every_api_loads_by_its_key_and_unknown_keys_are_absent() -> None:
    assert len(APIS) == len(list(APIS)) > 80
    for key in APIS:
        api = APIS[key]
        assert isinstance(api, ApiSchema) and api.api_key == key
    assert APIS.get(9999) is None and 9999 not in APIS
    assert 0 in APIS and APIS[0].name == "Produce"


def test_a_broker_start_imports_no_api_module_until_a_request_needs_it() -> None:
    probe = (
        "import sys, pykafkad.network.server, wire\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('wire.messages.'))\n"
        "print(loaded())\n"
        "wire.decode_request_header(bytes.fromhex('0001000c00000007ffff00'))\n"
        "print(loaded())\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "['wire.messages.headers']"
    assert out[1] == "['wire.messages.fetch', 'wire.messages.headers']"
