"""The fault injector: ZooKeeper and three brokers in network namespaces, real clients (librdkafka and the
Java clients) running a queue, transactions and consumer groups, a seeded schedule of faults (kill -9,
SIGSTOP, partitions and one-way loss in the kernel, a slow link, ZooKeeper session expiry, a full
disk, group members crashing), and a checker of the whole history.  ``python -m cluster_tests.faults``
runs it; ``test_fault_schedule.py`` runs a short fixed-seed schedule in ``make test``; ``make faults``
runs a long one and writes ``docs/faults.md``.
"""
