"""The history checker finds each anomaly it names, on small histories written by hand, and none in a
clean one.  (The fault schedule test runs it on real histories; this shows it is not blind.)"""

from __future__ import annotations

from typing import Any

from cluster_tests.faults import checker
from cluster_tests.faults.schedule import CLUSTER_KINDS, cluster_schedule, member_schedule

PARTS = {"queue": 2, "ctp-in": 2}


def ev(e: str, c: str, ms: int = 0, **fields: Any) -> dict[str, Any]:
    return {"e": e, "c": c, "ms": ms, **fields}


def empty_logs() -> dict[str, list[checker.Read]]:
    return {"queue": [], "txn-a": [], "txn-b": [], "ctp-in": [], "ctp-out": []}


def queue(events: list[dict[str, Any]], log: list[checker.Read]) -> dict[str, int]:
    out = checker.Anomalies()
    logs = empty_logs()
    logs["queue"] = log
    checker.check_queue(events, logs, out)
    return out.counts()


def test_a_clean_queue_history_has_no_anomaly() -> None:
    events = [ev("ack", "p", v="p-0", t="queue", p=0, o=0), ev("ack", "p", v="p-1", t="queue", p=0, o=1),
              ev("read", "c1", v="p-0", t="queue", p=0, o=0, member="m1", gen=1),
              ev("read", "c2", v="p-0", t="queue", p=0, o=0, member="m2", gen=2),
              ev("committed", "monitor", 1, group="g", offsets={"0": 1}),
              ev("committed", "monitor", 2, group="g", offsets={"0": 2})]
    assert queue(events, [("p-0", 0, 0), ("p-1", 0, 1), ("p-2", 1, 0)]) == {}


def test_queue_anomalies_are_found() -> None:
    events = [ev("ack", "p", v="p-0", t="queue", p=0, o=0), ev("ack", "p", v="p-1", t="queue", p=0, o=1),
              ev("ack", "p", v="p-2", t="queue", p=0, o=2),
              ev("read", "c1", v="p-1", t="queue", p=0, o=1, member="m1", gen=3),
              ev("read", "c2", v="p-1", t="queue", p=0, o=1, member="m2", gen=3),
              ev("committed", "monitor", 1, group="g", offsets={"0": 5}),
              ev("committed", "monitor", 2, group="g", offsets={"0": 4})]
    found = queue(events, [("p-1", 0, 0), ("p-0", 0, 1), ("p-0", 0, 2)])
    assert found == {"double-read": 1, "duplicate": 1, "lost-write": 1, "offset-backwards": 1, "reordered": 1}


def transactions(events: list[dict[str, Any]], **logs: list[checker.Read]) -> dict[str, int]:
    out = checker.Anomalies()
    checker.check_transactions(events, {**empty_logs(), **{k.replace("_", "-"): v for k, v in logs.items()}}, out)
    return out.counts()


def txn(tid: str, outcome: str, *values: tuple[str, str, int]) -> dict[str, Any]:
    return ev("txn", tid.rsplit("-", 1)[0], id=tid, outcome=outcome, values=[list(v) for v in values])


def test_a_clean_transaction_history_has_no_anomaly() -> None:
    events = [txn("t-0", "committed", ("t-0-0", "txn-a", 0), ("t-0-1", "txn-b", 1)),
              txn("t-1", "aborted", ("t-1-0", "txn-a", 0)),
              txn("t-2", "committed", ("t-2-0", "txn-a", 0))]
    assert transactions(events, txn_a=[("t-0-0", 0, 0), ("t-2-0", 0, 3)], txn_b=[("t-0-1", 1, 0)],
                        ctp_in=[("x-0", 0, 0)], ctp_out=[("x-0", 1, 0)]) == {}


def test_transaction_anomalies_are_found() -> None:
    events = [txn("t-0", "committed", ("t-0-0", "txn-a", 0), ("t-0-1", "txn-b", 1)),
              txn("t-1", "aborted", ("t-1-0", "txn-a", 0)),
              txn("t-2", "committed", ("t-2-0", "txn-b", 0)),
              txn("t-3", "committed", ("t-3-0", "txn-a", 1)),
              txn("t-4", "committed", ("t-4-0", "txn-a", 1)),
              ev("read", "r", v="t-1-0", t="txn-a", p=0, o=1)]
    found = transactions(
        events,
        txn_a=[("t-0-0", 0, 0), ("t-4-0", 1, 0), ("t-3-0", 1, 1)],   # t-0 torn; t-4 before t-3
        txn_b=[],                                                     # t-2 lost
        ctp_in=[("x-0", 0, 0), ("x-1", 0, 1)], ctp_out=[("x-0", 0, 0), ("x-0", 0, 1)])
    assert found == {"aborted-read": 1, "ctp-duplicate": 1, "ctp-lost": 1, "lost-transaction": 1,
                     "torn-transaction": 1, "txn-order": 1}


def groups(events: list[dict[str, Any]], healed_ms: int = 100) -> dict[str, int]:
    out = checker.Anomalies()
    checker.check_groups(events, PARTS, healed_ms, 10, 10, out)
    return out.counts()


def assigned(c: str, ms: int, gen: int, *parts: int) -> dict[str, Any]:
    return ev("assigned", c, ms, member=f"{c}-id", gen=gen, parts=list(parts))


def test_groups_that_converge_have_no_anomaly() -> None:
    events = [assigned("jc1", 1, 1, 0, 1), ev("client-crash", "jc1", 50), assigned("jc2", 105, 2, 0, 1),
              assigned("jx1", 1, 1, 0), assigned("jx2", 1, 1, 1)]
    assert groups(events) == {}


def test_group_anomalies_are_found() -> None:
    events = [assigned("jc1", 1, 1, 0, 1), assigned("jc2", 2, 1, 1),            # double owner
              ev("client-crash", "jc1", 50), assigned("jc2", 150, 2, 0, 1),     # owned 50 ms after the heal
              assigned("jx1", 1, 1, 0)]                                         # partition 1 never owned
    assert groups(events) == {"double-owner": 1, "no-convergence": 1, "unowned": 1}


def test_a_seed_reproduces_its_schedule_and_a_short_one_has_every_kind() -> None:
    first = cluster_schedule(7, 150, zookeeper=True, session_timeout_s=6)
    assert first == cluster_schedule(7, 150, zookeeper=True, session_timeout_s=6)
    assert first != cluster_schedule(8, 150, zookeeper=True, session_timeout_s=6)
    assert {s.kind for s in first} == set(CLUSTER_KINDS)
    kraft = cluster_schedule(7, 150, zookeeper=False, session_timeout_s=6)
    assert not {"cut-zookeeper", "expire-session"} & {s.kind for s in kraft}
    assert "zookeeper" not in {s.target for s in kraft}
    members = member_schedule(7, 150, ["a", "b"])
    assert {s.kind for s in members} == {"crash-member", "stop-member"}
