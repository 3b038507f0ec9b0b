"""networkx tests that this backend is known not to pass in networkx's backend-testing mode, each
with its reason (``docs/networkx-backend.md`` lists them)."""

from __future__ import annotations

_LOUVAIN = ("compares with the exact partition networkx's sequential Louvain finds for one seed; ooc_graph "
            "visits the vertices in another order (on a GPU, moves them in batches) and finds another "
            "partition (its modularity is checked in tests/test_louvain.py)")
_SNAPSHOT = ("changes the graph while iterating over the answer and expects networkx's RuntimeError; a converted graph "
             "is a snapshot, which such changes do not reach")
KNOWN_FAILURES: dict = {
    ("tests/test_dag.py", "TestDAG::test_topological_sort6"): _SNAPSHOT,
    # (module path tail, test name or "Class::test") -> reason
    ("community/tests/test_louvain.py", "test_karate_club_partition"): _LOUVAIN,
    ("community/tests/test_louvain.py", "test_undirected_selfloops"): _LOUVAIN,
    ("community/tests/test_louvain.py", "test_none_weight_param"): _LOUVAIN,
    ("community/tests/test_louvain.py", "test_multigraph"): _LOUVAIN,
}


def mark_known_failures(items) -> None:
    import pytest
    for item in items:
        path = str(item.fspath)
        for (module, test), reason in KNOWN_FAILURES.items():
            if path.endswith(module) and (item.name == test or item.nodeid.endswith(test)):
                item.add_marker(pytest.mark.xfail(reason=reason, strict=False))
