"""The controller: topic creation, deletion and partition changes, written through the cluster metadata."""

from pykafkad.controller.controller import Controller

__all__ = ["Controller"]
