"""The history checker: reads a run's history and the final contents of its topics and names every
anomaly, by type, with the record or transaction involved.

Queue (``queue``):
  lost-write          an acknowledged value is not in the log
  duplicate           a value is in the log more than once (acknowledged or not)
  reordered           one producer's values out of order within a partition
  offset-backwards    a group's committed offset for a partition went down
  double-read         two members of one generation read the same value
Transactions (``txn-a``, ``txn-b``, ``ctp-in`` -> ``ctp-out``):
  aborted-read        a read_committed read returned a record of an aborted transaction
  lost-transaction    a committed transaction's records are all missing
  torn-transaction    some but not all of a transaction's records are visible
  txn-order           one producer's transactions out of order within a partition
  ctp-lost / ctp-duplicate
                      consume-transform-produce lost or doubled an input record
Groups:
  double-owner        two members own a partition in the same generation
  no-convergence      the group's last generation does not cover every partition
  unowned             partitions unowned longer than the session timeout (plus the rebalance)
                      after the last fault healed
The post-heal checks of the harness (leaders and ISR, coordinators, stuck transactions) add their
own anomalies before this runs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from cluster_tests.faults.workloads import CTP_GROUP, QUEUE_GROUP_JAVA

Read = tuple[str, int, int]  # value, partition, offset
MAX_EXAMPLES = 5


class Anomalies:
    def __init__(self) -> None:
        self.by_type: dict[str, list[str]] = defaultdict(list)

    def add(self, kind: str, detail: str) -> None:
        self.by_type[kind].append(detail)

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in sorted(self.by_type.items())}

    def examples(self) -> dict[str, list[str]]:
        return {k: v[:MAX_EXAMPLES] for k, v in sorted(self.by_type.items())}

    def __bool__(self) -> bool:
        return bool(self.by_type)


def _producer_seq(value: str) -> tuple[str, int]:
    name, _, seq = value.rpartition("-")
    return name, int(seq)


def check_queue(events: list[dict[str, Any]], log: dict[str, list[Read]], out: Anomalies) -> dict[str, int]:
    acked = {e["v"]: e for e in events if e["e"] == "ack" and e.get("t") == "queue"}
    records = log["queue"]
    seen = Counter(v for v, _, _ in records)
    for v, n in seen.items():
        if n > 1:
            out.add("duplicate", f"queue: {v} is in the log {n} times")
    for v, ack in acked.items():
        if v not in seen:
            out.add("lost-write", f"queue: {v} acknowledged at partition {ack['p']} offset {ack['o']}, not in the log")
    last: dict[tuple[str, int], tuple[int, int]] = {}
    for v, p, o in sorted(records, key=lambda r: (r[1], r[2])):
        name, seq = _producer_seq(v)
        prev = last.get((name, p))
        if prev is not None and seq < prev[0]:
            out.add("reordered", f"queue partition {p}: {v} at offset {o} after {name}-{prev[0]} at offset {prev[1]}")
        last[(name, p)] = (seq, o)
    high: dict[tuple[str, int], tuple[int, int]] = {}
    for e in events:
        if e["e"] != "committed":
            continue
        for part, offset in e["offsets"].items():
            key = (e["group"], int(part))
            prev = high.get(key)
            if prev is not None and offset < prev[0]:
                out.add("offset-backwards", f"group {e['group']} partition {part}: committed {offset} after "
                                            f"{prev[0]} (at {e['ms']} after {prev[1]})")
            if prev is None or offset >= prev[0]:
                high[key] = (offset, e["ms"])
    readers: dict[tuple[str, int], set[str]] = defaultdict(set)
    for e in events:
        if e["e"] == "read" and e.get("t") == "queue" and e.get("gen") is not None:
            readers[(e["v"], e["gen"])].add(e["c"])
    for (v, gen), members in readers.items():
        if len(members) > 1:
            out.add("double-read", f"queue: {v} read by {len(members)} members of generation {gen}")
    return {"acknowledged": len(acked), "in log": len(records),
            "read": sum(1 for e in events if e["e"] == "read" and e.get("t") == "queue"),
            "send errors": sum(1 for e in events if e["e"] == "send_error" and e.get("t", "queue") == "queue")}


def _txn_index(value: str) -> tuple[str, int]:
    # NAME-K-I: producer NAME, its K-th transaction, I-th record of it
    name, k, _ = value.rsplit("-", 2)
    return name, int(k)


def check_transactions(events: list[dict[str, Any]], log: dict[str, list[Read]], out: Anomalies) -> dict[str, int]:
    txns = [e for e in events if e["e"] == "txn" and e["values"]]
    outcome = {v[0]: t for t in txns for v in t["values"]}
    visible: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for topic in ("txn-a", "txn-b"):
        for v, p, o in log[topic]:
            visible[v].append((topic, p, o))
    for e in events:
        if e["e"] == "read" and e.get("t") in ("txn-a", "txn-b"):
            t = outcome.get(e["v"])
            if t is not None and t["outcome"] == "aborted":
                out.add("aborted-read", f"{e['c']} read {e['v']} of aborted transaction {t['id']} "
                                        f"({e['t']}-{e['p']} offset {e['o']})")
    for v, where in visible.items():
        t = outcome.get(v)
        if t is not None and t["outcome"] == "aborted":
            out.add("aborted-read", f"final read_committed read {v} of aborted transaction {t['id']} at {where[0]}")
        if len(where) > 1:
            out.add("duplicate", f"transactions: {v} is visible {len(where)} times")
    for t in txns:
        present = [v[0] for v in t["values"] if v[0] in visible]
        if t["outcome"] == "committed" and not present:
            out.add("lost-transaction", f"{t['id']} committed, none of its {len(t['values'])} records visible")
        elif 0 < len(present) < len(t["values"]):
            missing = [v[0] for v in t["values"] if v[0] not in visible]
            out.add("torn-transaction", f"{t['id']} ({t['outcome']}): visible {present}, missing {missing}")
    for topic in ("txn-a", "txn-b"):
        last: dict[tuple[str, int], tuple[int, int]] = {}
        for v, p, o in sorted(log[topic], key=lambda r: (r[1], r[2])):
            name, k = _txn_index(v)
            prev = last.get((name, p))
            if prev is not None and k < prev[0]:
                out.add("txn-order", f"{topic}-{p}: {v} at offset {o} after transaction {name}-{prev[0]} "
                                     f"at offset {prev[1]}")
            last[(name, p)] = (k, o)
    inputs = Counter(v for v, _, _ in log["ctp-in"])
    outputs = Counter(v for v, _, _ in log["ctp-out"])
    for v in inputs:
        if outputs[v] == 0:
            out.add("ctp-lost", f"ctp-in {v} never copied to ctp-out")
        elif outputs[v] > 1:
            out.add("ctp-duplicate", f"ctp-in {v} copied {outputs[v]} times")
    for v in outputs:
        if v not in inputs:
            out.add("ctp-duplicate", f"ctp-out {v} is not in ctp-in")
    by_outcome = Counter(t["outcome"] for t in txns)
    return {"committed": by_outcome["committed"], "aborted": by_outcome["aborted"],
            "unknown outcome": by_outcome["unknown"], "ctp input": len(log["ctp-in"]),
            "ctp output": len(log["ctp-out"])}


def check_groups(events: list[dict[str, Any]], partitions: dict[str, int], healed_ms: int, session_ms: int,
                 rebalance_ms: int, out: Anomalies) -> dict[str, int]:
    """``events`` end when the members are told to stop (the rebalances of the stop are not checked)."""
    groups = {QUEUE_GROUP_JAVA: (("jc1", "jc2", "jc3"), "queue", True),
              CTP_GROUP: (("jx1", "jx2"), "ctp-in", False)}
    summary = {}
    for group, (members, topic, eager) in groups.items():
        everything = set(range(partitions[topic]))
        owners: dict[int, dict[int, str]] = defaultdict(dict)
        # What each running member owns now: its last assignment since it (re)started.  An eager
        # member gives up everything when it rejoins; a cooperative one keeps what it is not told to
        # give back, and its next assignment event lists all it owns.
        current: dict[str, set[int]] = {}
        covered, at_heal_seen, converged_at = False, False, None
        for e in sorted((e for e in events if e["c"] in members), key=lambda e: e["ms"]):
            if e["ms"] >= healed_ms and not at_heal_seen:
                at_heal_seen, converged_at = True, (healed_ms if covered else None)
            if e["e"] in ("client-start", "client-crash", "client-stop", "lost") or (eager and e["e"] == "revoked"):
                current.pop(e["c"], None)
            elif e["e"] == "assigned":
                for p in e["parts"]:
                    # By client, not member id: a static member that restarts gets a new member id in
                    # the same generation, and takes over its own partitions.
                    other = owners[e["gen"]].get(p)
                    if other is not None and other != e["c"]:
                        out.add("double-owner", f"group {group} generation {e['gen']}: partition {p} owned by "
                                                f"{other} and {e['c']} ({e['member']})")
                    owners[e["gen"]][p] = e["c"]
                current[e["c"]] = set(e["parts"])
            else:
                continue
            covered = set().union(*current.values()) == everything if current else False
            if e["ms"] >= healed_ms:
                if not covered:
                    converged_at = None
                elif converged_at is None:
                    converged_at = e["ms"]
        if not at_heal_seen:
            converged_at = healed_ms if covered else None
        summary[f"{group} generations"] = len(owners)
        if converged_at is None:
            owned = set().union(*current.values()) if current else set()
            out.add("no-convergence", f"group {group}: when the members were stopped they owned {sorted(owned)} "
                                      f"of {sorted(everything)}")
        elif converged_at - healed_ms > session_ms + rebalance_ms:
            out.add("unowned", f"group {group}: every partition owned only {converged_at - healed_ms} ms after the "
                               f"last fault healed (session timeout {session_ms} ms + rebalance {rebalance_ms} ms)")
    return summary
