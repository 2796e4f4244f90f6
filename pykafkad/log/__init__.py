"""Partition logs on this broker's disks: the log manager, periodic housekeeping, and the log-dir lock."""
