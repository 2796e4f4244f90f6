"""``pykafkad`` commands for people, in the style of Redpanda's ``rpk``: cluster, topic, group,
produce and consume.  They speak the Kafka protocol through librdkafka (confluent-kafka), so they
work against any Kafka broker, pykafkad or Apache Kafka; tables for people, ``--json`` for scripts."""
