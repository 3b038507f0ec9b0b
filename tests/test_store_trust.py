"""A crafted store must not make the library read outside it: HDF5 external storage, external and
soft links, virtual datasets, layouts and filters the format does not have are refused at open,
in one line naming the object (store/_structure.py)."""

import subprocess
import sys

import h5py
import numpy as np
import pytest

import ooc_graph
from ooc_graph.errors import StoreError

SECRET = b"TOPSECRET-password-1234567890abcdefghijklmnopqrstuvwxyz"


@pytest.fixture
def crafted(tmp_path):
    """A store with ids 10..14 (so ``vertex/labels`` exists), a secret file and another HDF5
    file holding the secret, for the crafting below."""
    secret = tmp_path / "secret.txt"
    secret.write_bytes(SECRET)
    with h5py.File(tmp_path / "other.h5", "w") as h5:
        h5["x"] = np.frombuffer(SECRET[:40], "<i8")
    path = tmp_path / "g.h5"
    ooc_graph.convert(np.array([[10, 11], [11, 12], [12, 13], [13, 14]]), path, directed=False,
                      progress=False).close()
    return path, secret, tmp_path / "other.h5"


def _external_storage(h5, secret, other):
    del h5["vertex/labels"]
    h5.create_dataset("vertex/labels", shape=(5,), dtype="<i8", external=[(str(secret), 0, 40)])


def _external_link(h5, secret, other):
    del h5["vertex/labels"]
    h5["vertex/labels"] = h5py.ExternalLink(str(other), "/x")


def _soft_link(h5, secret, other):
    del h5["vertex/labels"]
    h5["stash"] = h5py.ExternalLink(str(other), "/x")
    h5["vertex/labels"] = h5py.SoftLink("/stash")


def _soft_link_inside(h5, secret, other):  # a soft link the format does not have, even to itself
    labels = h5["vertex/labels"][()]
    del h5["vertex/labels"]
    h5.create_dataset("vertex/copy", data=labels, chunks=(5,), fletcher32=True)
    h5["vertex/labels"] = h5py.SoftLink("/vertex/copy")


def _virtual(h5, secret, other):
    del h5["vertex/labels"]
    layout = h5py.VirtualLayout(shape=(5,), dtype="<i8")
    layout[:] = h5py.VirtualSource(str(other), "x", shape=(5,))
    h5.create_virtual_dataset("vertex/labels", layout)


def _contiguous(h5, secret, other):
    labels = h5["vertex/labels"][()]
    del h5["vertex/labels"]
    h5.create_dataset("vertex/labels", data=labels)


def _compressed(h5, secret, other):
    labels = h5["vertex/labels"][()]
    del h5["vertex/labels"]
    h5.create_dataset("vertex/labels", data=labels, chunks=(5,), compression="gzip", fletcher32=True)


def _result_external(h5, secret, other):
    grp = h5.require_group("results").create_group("wcc")
    grp.create_dataset("labels", shape=(5,), dtype="<i8", external=[(str(secret), 0, 40)])


def _extra_external_link(h5, secret, other):  # an object no reader names
    h5["notes/more"] = h5py.ExternalLink(str(other), "/x")


def _sparse(h5, secret, other):  # declares far more than the file holds
    del h5["vertex/labels"]
    h5.create_dataset("vertex/labels", shape=(1 << 40,), dtype="<i8", chunks=(1 << 20,), fletcher32=True)


CRAFTED = [  # (what, how, words in the error)
    ("external storage", _external_storage, ["dataset vertex/labels", "external file", "secret.txt"]),
    ("external link", _external_link, ["vertex/labels", "external link", "other.h5"]),
    ("soft link to an external link", _soft_link, ["stash", "external link"]),
    ("soft link the format has not", _soft_link_inside, ["vertex/labels", "soft link to /vertex/copy"]),
    ("virtual dataset", _virtual, ["dataset vertex/labels", "virtual dataset"]),
    ("contiguous layout", _contiguous, ["dataset vertex/labels", "contiguous"]),
    ("gzip filter", _compressed, ["dataset vertex/labels", "filters"]),
    ("result in external storage", _result_external, ["dataset results/wcc/labels", "external file"]),
    ("extra external link", _extra_external_link, ["notes/more", "external link"]),
    ("dataset larger than the file", _sparse, ["dataset vertex/labels", "more bytes than the file"]),
]


@pytest.mark.parametrize("what,craft,words", CRAFTED, ids=[c[0] for c in CRAFTED])
def test_crafted_store_is_refused_at_open(crafted, what, craft, words):
    path, secret, other = crafted
    with h5py.File(path, "r+") as h5:
        craft(h5, secret, other)
    # Run where a crash would not take pytest down; before the check, wcc(G).to_dict() gave the
    # secret's bytes back as vertex ids.
    code = ("import ooc_graph, sys\n"
            "from ooc_graph.errors import StoreError\n"
            f"try:\n    G = ooc_graph.open({str(path)!r})\n    r = ooc_graph.wcc(G, device='cpu').to_dict()\n"
            "    print('READ', b''.join(int(k).to_bytes(8, 'little', signed=True) for k in r))\n"
            "except StoreError as err:\n    print('REFUSED', err)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "REFUSED" in out.stdout and SECRET[:9].decode() not in out.stdout, out.stdout
    message = out.stdout.strip().splitlines()
    assert len(message) == 1, message
    for word in words:
        assert word in message[0], (word, message[0])


def test_the_format_soft_links_are_accepted(tmp_path):
    """An undirected weighted store links csr/in/* and vertex/out_degree to their twins."""
    path = tmp_path / "u.h5"
    G = ooc_graph.convert((np.array([0, 1, 2]), np.array([1, 2, 0]), np.array([1.0, 2.0, 3.0])), path,
                          directed=False, progress=False)
    G.close()
    with h5py.File(path, "r") as h5:
        assert isinstance(h5.get("csr/in/weights", getlink=True), h5py.SoftLink)
    G = ooc_graph.open(path)
    assert ooc_graph.sssp(G, 0, device="cpu").distance.tolist() == [0.0, 1.0, 3.0]


def test_damaged_result_does_not_block_opening(tmp_path):
    """A result object HDF5 cannot open (a killed writer's) is left for reading it to report."""
    path = tmp_path / "g.h5"
    G = ooc_graph.convert(np.array([[0, 1], [1, 2]]), path, progress=False)
    ooc_graph.wcc(G, device="cpu", store=True)
    G.close()
    with h5py.File(path, "r") as h5:
        addr = h5py.h5o.get_info(h5["results/wcc"].id).addr
    raw = bytearray(path.read_bytes())
    raw[addr:addr + 64] = bytes(b ^ 0xFF for b in raw[addr:addr + 64])
    path.write_bytes(bytes(raw))
    G = ooc_graph.open(path)
    with pytest.raises(StoreError, match="damaged"):
        G.load_result("wcc")


def test_chunk_outside_the_file_is_not_read_directly(tmp_path):
    """The direct reader (store/direct.py) reads chunks by file offset: a chunk that HDF5's index
    places past the file's end (or at an address that is no offset) is never used; h5py reads
    such a dataset, and reports it."""
    from ooc_graph.store import direct

    path = tmp_path / "c.h5"
    with h5py.File(path, "w") as h5:
        h5.create_dataset("x", data=np.arange(1 << 12, dtype=np.int64), chunks=(1 << 10,), fletcher32=True)
    size = path.stat().st_size

    class Info:  # a chunk record as the chunk index of a crafted file could hold it
        def __init__(self, i, offset):
            self.chunk_offset, self.filter_mask, self.size, self.byte_offset = (i << 10,), 0, (1 << 13) + 4, offset

    class Crafted:  # the dataset, one chunk's address replaced
        def __init__(self, ds, address):
            self.ds, self.address = ds, address
            self.ndim, self.chunks, self.dtype, self.shape, self.name, self.file = \
                ds.ndim, ds.chunks, ds.dtype, ds.shape, ds.name, ds.file
            self.id = self

        def get_create_plist(self):
            return self.ds.id.get_create_plist()

        def chunk_iter(self, visit):
            def moved(info):
                i = info.chunk_offset[0] >> 10
                visit(Info(i, self.address) if i == 2 else info)
            self.ds.id.chunk_iter(moved)

    with h5py.File(path, "r") as h5:
        table = direct.ChunkTable(h5["x"])
        assert (table.offset + table.chunk * 8 + 4 <= size).all()
        for address in (size + 100, size - 10, 2 ** 64 - 1):
            with pytest.raises(direct.Unsupported):
                direct.ChunkTable(Crafted(h5["x"], address))
