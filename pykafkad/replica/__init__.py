"""Partition replicas on this broker and the replica manager that serves them (Kafka's ReplicaManager)."""
