"""Memory budgets: the default comes from the memory this process may use, a container's limit
included."""

from ooc_graph import _memory


def _tree(tmp_path, proc: str, limits: dict):
    (tmp_path / "cgroup").write_text(proc)
    for rel, value in limits.items():
        f = tmp_path / "fs" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(value + "\n")
    return str(tmp_path / "cgroup"), str(tmp_path / "fs")


def test_cgroup_v2_limit_of_the_group_or_above(tmp_path):
    proc, root = _tree(tmp_path, "0::/user.slice/job-7\n", {"user.slice/job-7/memory.max": "max",
                                                            "user.slice/memory.max": str(2 << 30),
                                                            "memory.max": str(8 << 30)})
    assert _memory.cgroup_limit(proc, root) == 2 << 30


def test_cgroup_v1_limit_where_the_group_is_not_mounted(tmp_path):
    """Inside a container /proc names the host's group; the mount's root is the container's."""
    proc, root = _tree(tmp_path, "9:pids:/\n4:memory:/docker/abc\n0::/\n",
                       {"memory/memory.limit_in_bytes": str(1 << 30)})
    assert _memory.cgroup_limit(proc, root) == 1 << 30


def test_no_limit(tmp_path):
    proc, root = _tree(tmp_path, "4:memory:/\n0::/\n", {"memory/memory.limit_in_bytes": "9223372036854771712",
                                                         "memory.max": "max"})
    assert _memory.cgroup_limit(proc, root) is None
    assert _memory.cgroup_limit(str(tmp_path / "absent"), root) is None
    assert _memory.cgroup_limit(proc, str(tmp_path / "nothing")) is None


def test_the_default_budget_honours_the_limit(monkeypatch):
    """RAM detection ignored a container's limit: a quarter of the host's RAM could be more than
    the container may use at all."""
    assert _memory.usable_memory() <= _memory.physical_memory()
    monkeypatch.setattr(_memory, "cgroup_limit", lambda: 1 << 30)
    assert _memory.default_budget() == 1 << 28 and _memory.budget(None) == 1 << 28
    monkeypatch.setattr(_memory, "cgroup_limit", lambda: None)
    assert _memory.default_budget() == _memory.physical_memory() // 4
