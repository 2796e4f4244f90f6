"""Other projects' own test suites, run unchanged against pykafkad (and against Apache Kafka as a reference)."""
