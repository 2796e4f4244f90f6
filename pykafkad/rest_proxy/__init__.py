"""The REST proxy: Kafka over HTTP with Confluent REST Proxy's API, in the broker
(``rest.listener``) or on its own against any Kafka cluster (``pykafkad rest``)."""
