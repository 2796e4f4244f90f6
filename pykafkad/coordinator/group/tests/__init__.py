"""Unit tests of pykafkad.coordinator.group that need no broker process."""
