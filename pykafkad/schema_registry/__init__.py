"""A schema registry that speaks Confluent Schema Registry's REST API (issue 29).

It keeps no state of its own: every schema, config and mode is a record of the compacted
``_schemas`` topic, written and read through the Kafka protocol, so the same code serves inside
the broker (``schema.registry.listener``) and on its own against any Kafka cluster
(``pykafkad registry``).  ``registry_state`` owns what the topic says, ``schemas_topic`` reads and
writes the topic, ``api`` answers HTTP, ``avro_schema`` and ``avro_compatibility`` know Avro.
"""
