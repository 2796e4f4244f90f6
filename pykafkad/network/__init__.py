"""The network layer: the Trio server (listeners, start-up order, shutdown) and one connection task per client."""
