"""What crosses the runtime's connections (runtime/wire.py): plain data only. Nothing a peer sends
is unpickled: a pickle is refused, and so are arrays of objects, unknown result classes and
shared-memory paths outside /dev/shm."""

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest

from ooc_graph.algorithms._result import BFSResult
from ooc_graph.runtime import segments, wire


class Marker:
    """Unpickled, it would create a file: proof that a peer made this process run code."""

    path = None

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


def test_no_runtime_module_unpickles_anything():
    """Peers' messages (summaries, NCCL's unique id and generations, replies, starts) are plain
    data: no module of the runtime imports pickle."""
    folder = Path(wire.__file__).parent
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) else []
            assert not any(n and n.split(".")[0] in ("pickle", "cloudpickle", "dill") for n in names), path.name


def test_plain_data_round_trips_and_refuses_the_rest(tmp_path):
    r = BFSResult("bfs", {"source": 0}, 3, True, 0.5, "cpu", {"per_pass": [{"arcs": np.int64(7)}], "t": (1, 2.5)},
                  depth=np.arange(5), parent=np.full(5, -1, np.int32))
    back = wire.loads(wire.dumps({"result": r, "a": np.zeros((2, 3), np.float32), "t": (1, None, b"x")}))
    assert type(back["result"]) is BFSResult and back["result"].stats == r.stats
    np.testing.assert_array_equal(back["result"].parent, r.parent)
    assert back["result"].parent.dtype == np.int32 and back["result"].parent.flags.writeable
    assert back["a"].shape == (2, 3) and back["t"] == (1, None, b"x")
    shared = segments.SharedArray(str(segments.SHARED_DIR / f"{segments.PREFIX}-1-x-job-0"), "<f8", (3,))
    assert wire.loads(wire.dumps(shared)) == shared
    with pytest.raises(TypeError):
        wire.dumps(np.array([object()]))  # not numeric
    with pytest.raises(TypeError):
        wire.dumps({1, 2})
    marker = Marker()
    marker.path = str(tmp_path / "ran")
    for bad in (pickle.dumps(marker), wire.dumps(segments.SharedArray("/etc/passwd", "<f8", (3,))),
                b"\xc7\x05\x63hello"):
        with pytest.raises(wire.ProtocolError):
            wire.loads(bad)
    assert not Path(marker.path).exists()
    evil = wire.dumps(BFSResult("bfs", {}, 0, True, 0, "cpu")).replace(b"BFSResult", b"CFSResult")
    with pytest.raises(wire.ProtocolError, match="CFSResult"):
        wire.loads(evil)
    uid = tuple(range(-128, 0))
    assert wire.unpack_unique_id(wire.pack_unique_id(uid)) == uid
    with pytest.raises(wire.ProtocolError):
        wire.unpack_unique_id(wire.dumps(list(range(5))))


def test_an_nccl_unique_id_reaches_the_other_ranks_in_the_form_cupy_takes():
    """CuPy 13's get_unique_id gives a tuple of 128 C chars (signed here) and its NcclCommunicator
    takes that tuple; CuPy 14 gives and takes bytes (a tuple there is a TypeError: "commId ...
    expected bytes, got tuple", which failed every two-GPU job). Either id survives the mesh, and
    unique_id_bytes gives CuPy 14's bytes back exactly."""
    new = bytes(range(128))
    got = wire.unpack_unique_id(wire.pack_unique_id(new))
    assert wire.unique_id_bytes(got) == new
    old = tuple(range(-128, 0))
    assert wire.unpack_unique_id(wire.pack_unique_id(old)) == old
    assert wire.unique_id_bytes(old) == bytes(range(128, 256))
