"""kafka-python's own integration tests (test/integration of its sdist) against pykafkad and Kafka 4.4.0
(FINDINGS.md's figures are from runs against 4.1.1, with the clients pinned to 4.1.1).

`run.py` fetches and prepares the suite and runs it; `allowlist.txt` names the tests that must pass on
pykafkad; FINDINGS.md says what each broker gave and why.
"""
