"""pykafkad: a broker that speaks the Apache Kafka protocol, on Trio, with a Rust log core."""

__version__ = "0.1.0"
