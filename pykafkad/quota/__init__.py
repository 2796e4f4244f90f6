"""Client quotas, as Kafka has them: produce and fetch byte rates and request time per user and
client id, kept in the metadata store at Kafka's ZooKeeper paths and enforced per connection by
throttling (``throttle_time_ms``) and muting (KIP-219)."""
