"""Compatibility tests that drive pykafkad with stock Kafka clients and tools."""
