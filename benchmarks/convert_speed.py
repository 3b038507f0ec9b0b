"""Conversion speed, stage by stage: generate a Graph500 R-MAT into a store, then convert the same
arcs from raw int32 pairs and from a text edge list, and report input edges/s, arcs/s and the
seconds of every stage (``ooc_graph/ingest/stages.py``) as JSON.

    python benchmarks/convert_speed.py --scale 22                      # on the GPU machine
    python benchmarks/convert_speed.py --scale 26 --workers 32 --memory 200GB --skip text
    python benchmarks/convert_speed.py --scale 18 --device cpu --work /data/ooc-speed

R-MAT with the Graph500 parameters (a=0.57, b=0.19, c=0.19, edge factor 16, ids permuted) from
``ooc_graph.generate.rmat``; ``--directed`` (default) keeps arcs as drawn, ``--undirected``
symmetrises. The raw and text inputs hold the generated store's arcs (deduplicated, so they convert
to the same store); the text is written once per scale (pyarrow's CSV writer when installed, else
NumPy), for scales up to ``--text-scale`` (default 24). Results go to
``benchmarks/results/convert-speed-<name>.json`` with the command line and the machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu import record  # noqa: E402

import ooc_graph  # noqa: E402
from ooc_graph.ingest.sorting import gpu_available  # noqa: E402


def summary(G, seconds: float, label: str) -> dict:
    b = G.built_by
    stages = b.get("stages", {})
    arcs = G.num_arcs
    return {
        "input": label, "seconds": round(seconds, 3), "input_edges": b.get("input_edges"), "arcs": arcs,
        "input_edges_per_second": round(b.get("input_edges", 0) / seconds),
        "arcs_per_second": round(arcs / seconds), "workers": b.get("workers"),
        "stages": stages,
        "stage_arcs_per_second": {k: round(arcs / v) for k, v in stages.items()
                                  if not k.startswith("buckets_") and v > 0},
    }


def write_pairs(G, path: Path, text: bool, step: int = 1 << 24):
    """The store's out-arcs as raw int32 pairs or as 'u v' text lines."""
    indptr, indices = G.csr("out")[:2]
    indptr = np.asarray(indptr)
    with open(path, "wb") as f:
        for lo in range(0, G.num_vertices, max(1, step // max(1, G.num_arcs // max(G.num_vertices, 1)))):
            hi = min(G.num_vertices, lo + max(1, step // max(1, G.num_arcs // max(G.num_vertices, 1))))
            a, b = int(indptr[lo]), int(indptr[hi])
            src = np.repeat(np.arange(lo, hi, dtype=np.int64), np.diff(indptr[lo:hi + 1]))
            dst = np.asarray(indices[a:b], dtype=np.int64)
            pairs = np.column_stack([src, dst])
            if not text:
                pairs.astype("<i4").tofile(f)
            else:
                _write_text(f, pairs)


def _write_text(f, pairs):
    try:
        import pyarrow as pa
        import pyarrow.csv as pc
    except ImportError:
        np.savetxt(f, pairs, fmt="%d %d")
        return
    table = pa.table({"s": pairs[:, 0], "d": pairs[:, 1]})
    pc.write_csv(table, f, write_options=pc.WriteOptions(include_header=False, delimiter=" "))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--scale", type=int, default=20, help="2**scale vertices (default 20)")
    ap.add_argument("--edge-factor", type=int, default=16, help="edges per vertex (default 16, Graph500)")
    ap.add_argument("--directed", action=argparse.BooleanOptionalAction, default=True,
                    help="keep arcs as drawn (default) or symmetrise (--no-directed)")
    ap.add_argument("--memory", help="conversion memory budget, e.g. 64GB (default: a quarter of RAM)")
    ap.add_argument("--workers", type=int, help="threads generating and sorting (default: cores, max 16)")
    ap.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto", help="where buckets are sorted")
    ap.add_argument("--text-scale", type=int, default=24,
                    help="largest scale also converted from text (default 24: ~4.5 GB of text)")
    ap.add_argument("--skip", nargs="*", default=[], choices=("binary", "text"), help="inputs not to convert")
    ap.add_argument("--work", default=None, help="folder for the inputs and stores (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder's files")
    ap.add_argument("--name", help="result name (default: <gpu|cpu>-scale<N>)")
    a = ap.parse_args(argv)

    import tempfile
    work = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="ooc-convert-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    opts = dict(memory=a.memory, workers=a.workers, device=a.device, progress=False, overwrite=True)
    runs = []
    try:
        store = work / f"rmat{a.scale}.h5"
        t = time.perf_counter()
        G = ooc_graph.generate.rmat(store, a.scale, a.edge_factor, seed=1, directed=a.directed, **opts)
        runs.append(summary(G, time.perf_counter() - t, f"generate rmat scale {a.scale}"))
        print(runs[-1], flush=True)
        inputs = []
        if "binary" not in a.skip:
            inputs.append((work / f"rmat{a.scale}.bin32", False))
        if "text" not in a.skip and a.scale <= a.text_scale:
            inputs.append((work / f"rmat{a.scale}.txt", True))
        for path, text in inputs:
            if not path.exists():
                t = time.perf_counter()
                write_pairs(G, path, text)
                print(f"wrote {path} ({path.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - t:.1f} s",
                      flush=True)
        n = G.num_vertices
        G.close()
        if not a.keep:
            store.unlink()  # disk: the inputs and one output at a time
        for path, _ in inputs:
            t = time.perf_counter()
            with ooc_graph.convert(path, work / "out.h5", directed=a.directed, num_vertices=n, **opts) as H:
                runs.append(summary(H, time.perf_counter() - t, path.name))
            print(runs[-1], flush=True)
    finally:
        if not a.keep:
            for p in list(work.glob("rmat*")) + list(work.glob("out.h5")):
                p.unlink(missing_ok=True)
            if not a.work:
                shutil.rmtree(work, ignore_errors=True)
    name = a.name or f"{'gpu' if gpu_available() and a.device != 'cpu' else 'cpu'}-scale{a.scale}"
    record(f"convert-speed-{name}", {"scale": a.scale, "edge_factor": a.edge_factor, "directed": a.directed,
                                     "memory": a.memory, "device": a.device, "cpus": os.cpu_count(), "runs": runs})


if __name__ == "__main__":
    main()
