"""Share groups on the partition leader (KIP-932): share-partitions, share sessions, and the manager
that serves ShareFetch and ShareAcknowledge from them."""
