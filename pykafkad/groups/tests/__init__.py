"""Unit tests of pykafkad.groups that need no broker process."""
