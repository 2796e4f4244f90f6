"""Where a ZooKeeper commit is cut so that each request stays under ZooKeeper's 1 MB default."""

from pykafkad.metadata.store import Create, Delete, SetData
from pykafkad.metadata.zookeeper_store import MAX_COMMIT_BYTES, ZooKeeperMetadataStore


def _store(connect: str) -> ZooKeeperMetadataStore:
    return ZooKeeperMetadataStore(connect, 18000)


def test_a_small_commit_is_one_request_and_order_is_kept() -> None:
    ops = [Create("/a", b"x"), SetData("/a", b"y"), Delete("/a")]
    assert _store("127.0.0.1:2181").commits_for(ops) == [ops]


def test_a_large_commit_is_cut_in_order_and_every_request_stays_under_the_limit() -> None:
    data = b"d" * 400
    ops = [Create(f"/brokers/topics/t/partitions/{i}/state", data) for i in range(5000)]
    commits = _store("127.0.0.1:2181/a-chroot").commits_for(ops)
    assert len(commits) > 1
    assert [op for c in commits for op in c] == ops
    for commit in commits:
        # What ZooKeeper reads: each op's path under the chroot, its data and its header and ACL.
        assert sum(56 + len("/a-chroot") + len(op.path) + len(op.data) for op in commit) < 1024 * 1024
        assert sum(64 + len("/a-chroot") + len(op.path) + len(op.data) for op in commit) <= MAX_COMMIT_BYTES


def test_an_op_larger_than_the_limit_still_goes_alone() -> None:
    big = Create("/big", b"b" * (MAX_COMMIT_BYTES + 1))
    small = Create("/small", b"")
    assert _store("127.0.0.1:2181").commits_for([small, big, small]) == [[small], [big], [small]]
