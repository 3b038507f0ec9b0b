"""Generating and converting an R-MAT, alternating the store writes of before and now:

- before: the temporary store was a ``mkstemp`` placeholder that h5py's ``"w"`` truncated, and the
  generator's steps were copied into the builder's in-memory input;
- now: the store is created by HDF5 with O_EXCL (``store.writer.create_h5``) and the steps are
  handed over as owned arrays (``GraphBuilder.add(owned=True)``).

Each build writes a new file (none is overwritten, so no rename replaces an older store), and the
closing of the store (``h5py.File.close``, outside the build's stages) is timed on its own. Wall
seconds, arcs/s and the main-thread stages of every run go to
``benchmarks/results/convert-write-ab-<name>.json``:

    python3 benchmarks/convert_write_ab.py --scale 25 --name h200-scale25     # on the GPU machine
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu import record  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=22)
    ap.add_argument("--rounds", type=int, default=2, help="before/now pairs (default 2)")
    ap.add_argument("--memory", help="conversion memory budget (default: a quarter of RAM)")
    ap.add_argument("--work", default=None, help="folder for the stores (default: a temporary one)")
    ap.add_argument("--name", default=None)
    a = ap.parse_args(argv)

    import h5py
    import ooc_graph
    from ooc_graph.ingest.builder import GraphBuilder
    from ooc_graph.store import writer

    work = Path(a.work or tempfile.mkdtemp(prefix="ooc-write-ab-"))
    work.mkdir(parents=True, exist_ok=True)
    real_create, real_add, real_close = writer.create_h5, GraphBuilder.add, h5py.File.close
    closes = []

    def truncating_create(path):  # before: an empty placeholder, then h5py's "w" (O_TRUNC)
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        return h5py.File(path, "w")

    def copying_add(self, src, dst, weight=None, *, locate=None, owned=False):
        return real_add(self, src, dst, weight, locate=locate, owned=False)

    def timed_close(self):
        writing = self.id.valid and self.mode == "r+"
        t = time.perf_counter()
        real_close(self)
        if writing:
            closes.append(time.perf_counter() - t)

    h5py.File.close = timed_close
    # Load numba's and CuPy's kernels once, so neither variant pays for it.
    ooc_graph.generate.rmat(work / "warm.h5", 21, 16, seed=2, directed=True, progress=False, memory=a.memory).close()
    (work / "warm.h5").unlink()
    runs = []
    for rnd in range(a.rounds):
        for variant in ("before", "now"):
            writer.create_h5 = truncating_create if variant == "before" else real_create
            GraphBuilder.add = copying_add if variant == "before" else real_add
            closes.clear()
            out = work / f"ab-{variant}-{rnd}.h5"
            t = time.perf_counter()
            G = ooc_graph.generate.rmat(out, a.scale, 16, seed=1, directed=True, progress=False, memory=a.memory)
            wall = time.perf_counter() - t
            st = G.built_by["stages"]
            runs.append({"variant": variant, "round": rnd, "seconds": round(wall, 3),
                         "arcs_per_second": round(G.num_arcs / wall), "store_close_seconds": round(sum(closes), 3),
                         "stages": st})
            print(variant, "wall %.2f s" % wall, "%.1fM arcs/s" % (G.num_arcs / wall / 1e6),
                  "close %.2f s" % sum(closes), {k: v for k, v in st.items() if not k.startswith("buckets")},
                  flush=True)
            G.close()
            out.unlink()
    writer.create_h5, GraphBuilder.add, h5py.File.close = real_create, real_add, real_close
    record(f"convert-write-ab-{a.name or f'scale{a.scale}'}", {"scale": a.scale, "memory": a.memory,
                                                               "cpus": os.cpu_count(), "runs": runs})


if __name__ == "__main__":
    main()
