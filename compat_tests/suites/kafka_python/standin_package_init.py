"""Stand-in for kafka-python's ``test/__init__.py``, which its sdist does not ship.

The suite runner (compat_tests/suites/kafka_python/run.py) copies this file to ``test/__init__.py``
next to the extracted ``test/integration``, so that ``test`` is a package and the suite's
``from test.testutil import ...`` and ``from test.service import ...`` resolve to the extracted
files rather than to the standard library's ``test`` package.  It needs no content.
"""
