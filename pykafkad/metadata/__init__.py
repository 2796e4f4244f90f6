"""The cluster metadata: brokers, topics, partition states and configs, and where they are stored."""
