"""Command line: ``ooc-graph info | convert | generate | run <algorithm> | demo``."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time

import numpy as np

from . import __version__
from .algorithms import ALGORITHMS
from .engine import DEVICES
from .errors import OocGraphError
from .generate import GENERATORS
from .ingest.formats import READERS


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "y"):
        return True
    if text.lower() in ("0", "false", "no", "n"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false (got {text!r})")


def _common_build(p):
    p.add_argument("--memory", help="host memory budget, e.g. 2GB (default: a quarter of RAM)")
    p.add_argument("--interval-size", type=int, help="vertices per interval (default 65536)")
    p.add_argument("--chunk-arcs", type=int, help="arcs per transfer chunk (default 4194304)")
    p.add_argument("--weight-dtype", choices=("float32", "float64"), default="float32")
    p.add_argument("--workers", type=int, help="threads sorting (and generating) at once (default: cores, max 8)")
    p.add_argument("--augment", action="store_true",
                   help="also store the CEL augmentation for asynchronous execution (more disk)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ooc-graph", description="Out-of-core graph processing.")
    ap.add_argument("--version", action="version", version=f"ooc-graph {__version__}")
    ap.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("info", help="describe a graph store")
    p.add_argument("store")
    p.add_argument("--json", action="store_true", help="print the attributes as JSON")

    p = sub.add_parser("convert", help="convert an edge file into a graph store")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--format", choices=sorted(READERS), help="input format (default: from the suffix)")
    p.add_argument("--directed", type=_bool, help="true/false (default: what the format says, else true)")
    p.add_argument("--weighted", type=_bool, help="keep weights (default: if the input has them)")
    p.add_argument("--drop-self-loops", action="store_true")
    p.add_argument("--keep-duplicates", action="store_true", help="do not merge repeated arcs")
    p.add_argument("--relabel", type=_bool, help="map ids to 0..n-1 (default: when they are not already)")
    p.add_argument("--num-vertices", type=int)
    p.add_argument("--delimiter", help="column separator for csv (default ',') or text")
    _common_build(p)

    p = sub.add_parser("generate", help="write a synthetic graph into a store")
    p.add_argument("kind", choices=sorted(GENERATORS))
    p.add_argument("output")
    p.add_argument("--scale", type=int, default=16, help="rmat/urand: 2**scale vertices")
    p.add_argument("--edge-factor", type=int, default=16, help="rmat/urand: edges per vertex")
    p.add_argument("--rows", type=int, default=256, help="grid rows")
    p.add_argument("--cols", type=int, default=256, help="grid columns")
    p.add_argument("--directed", action="store_true", help="rmat/urand: keep edges directed")
    p.add_argument("--weighted", action="store_true", help="random weights in (0, 1]")
    p.add_argument("--seed", type=int, default=0)
    _common_build(p)

    p = sub.add_parser("run", help="run an algorithm on a store")
    p.add_argument("algorithm", choices=sorted(ALGORITHMS))
    p.add_argument("store")
    _run_options(p)
    p.add_argument("--source", type=int, default=None, help="bfs/sssp: source vertex (original id)")
    p.add_argument("--alpha", type=float, default=0.85)
    p.add_argument("--tol", type=float, default=1e-6)
    p.add_argument("--max-iter", type=int, default=100)
    p.add_argument("--mode", choices=("networkx", "graphalytics"), default="networkx")
    p.add_argument("--execution", choices=("auto", "sync", "async"), default="auto",
                   help="bfs/sssp: iterate loaded chunks to local convergence (async) or not")
    p.add_argument("--result-name", help="name under results/ (default: the algorithm's)")
    p.add_argument("--profile", metavar="PNG", help="write per-pass timing and convergence to this PNG")
    p.add_argument("--no-store", action="store_true", help="do not keep the result in the store")

    p = sub.add_parser("demo", help="generate a graph into a temporary store and run every algorithm")
    p.add_argument("--scale", type=int, default=16)
    p.add_argument("--edge-factor", type=int, default=16)
    _run_options(p)
    return ap


def _run_options(p):
    p.add_argument("--device", choices=DEVICES, default="auto")
    p.add_argument("--memory", help="host memory budget, e.g. 2GB")
    p.add_argument("--device-memory", help="GPU memory budget, e.g. 20GB (default: 80%% of free memory)")
    p.add_argument("--out", help="also write the result arrays to this .npz file")


def _build_opts(a):
    return dict(memory=a.memory, interval_size=a.interval_size, chunk_arcs=a.chunk_arcs,
                weight_dtype=a.weight_dtype, workers=a.workers, augment=a.augment, progress=not a.quiet)


def _save_npz(result, path):
    """Arrays to ``path`` via a temporary name, renamed on success."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, suffix=".npz.partial")
    os.close(fd)
    try:
        with open(tmp, "wb") as f:
            np.savez(f, vertices=result.vertices, **result.arrays())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _run(a, G):
    fn = ALGORITHMS[a.algorithm]
    kw = dict(memory=a.memory, device=a.device, device_memory=a.device_memory, profile=bool(a.profile))
    if a.algorithm == "pagerank":
        kw.update(alpha=a.alpha, tol=a.tol, max_iter=a.max_iter, mode=a.mode)
    if a.algorithm in ("bfs", "sssp"):
        kw["execution"] = a.execution
        kw["source"] = a.source if a.source is not None else (int(G.labels[0]) if G.labels is not None else 0)
    r = fn(G, **kw)
    if not a.no_store:
        r.save(a.result_name)
    if a.out:
        _save_npz(r, a.out)
    if a.profile:
        from .profile import plot_profile
        plot_profile(r, a.profile)
    return r


def _info(G, as_json):
    if as_json:
        print(json.dumps(G.attrs | {"built_by": G.built_by, "results": G.results()}, indent=2, default=str))
        return
    print(repr(G))
    a = G.attrs
    print(f"  edges {G.num_edges:,}  self-loops {a['self_loops']:,}  ids {a['id_dtype']}  "
          f"local ids {a['local_id_dtype']}  labels {'stored' if G.labels is not None else 'identity'}")
    print(f"  intervals {a['num_intervals']:,} x {a['interval_size']:,} vertices  blocks {a['num_blocks']:,}  "
          f"chunks {G.num_chunks:,} x {G.chunk_arcs:,} arcs  {G.cel_nbytes_per_arc()} bytes/arc")
    if G.weighted:
        print(f"  weights {a['weight_dtype']} in [{a['min_weight']:g}, {a['max_weight']:g}]")
    print(f"  built by {G.built_by.get('tool')} from {G.built_by.get('source')} "
          f"({G.built_by.get('input_edges_per_second', 0):,} input edges/s)")
    for name in G.results():
        r = G.load_result(name)["attrs"]
        print(f"  result {name}: {r.get('algorithm')} {r.get('iterations')} iterations, "
              f"{float(r.get('seconds', 0)):.3f} s, {r.get('timestamp')}")


def main(argv=None) -> int:
    a = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if a.verbose else logging.WARNING, format="%(name)s: %(message)s")
    from . import convert, open as open_graph
    try:
        if a.command == "info":
            with open_graph(a.store) as G:
                _info(G, a.json)
        elif a.command == "convert":
            t = time.perf_counter()
            G = convert(a.input, a.output, format=a.format, directed=a.directed, weighted=a.weighted,
                        drop_self_loops=a.drop_self_loops, dedupe=not a.keep_duplicates, relabel=a.relabel,
                        num_vertices=a.num_vertices, delimiter=a.delimiter, **_build_opts(a))
            s = time.perf_counter() - t
            edges = G.built_by.get("input_edges", 0)
            print(f"{G!r}\nconverted {edges:,} input edges in {s:.2f} s ({edges / max(s, 1e-9):,.0f} edges/s)")
            G.close()
        elif a.command == "generate":
            fn = GENERATORS[a.kind]
            if a.kind == "grid":
                G = fn(a.output, a.rows, a.cols, seed=a.seed, weighted=a.weighted, **_build_opts(a))
            else:
                G = fn(a.output, a.scale, a.edge_factor, seed=a.seed, directed=a.directed,
                       weighted=a.weighted, **_build_opts(a))
            print(repr(G))
            G.close()
        elif a.command == "run":
            with open_graph(a.store) as G:
                print(_run(a, G).summary())
        elif a.command == "demo":
            return _demo(a)
    except OocGraphError as err:
        print(f"ooc-graph: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ooc-graph: interrupted", file=sys.stderr)
        return 130
    return 0


def _demo(a) -> int:
    from . import bfs, generate, pagerank, sssp, wcc
    from .engine import get_backend
    device = get_backend(a.device).name
    with tempfile.TemporaryDirectory(prefix="ooc-graph-demo-") as d:
        path = os.path.join(d, "rmat.h5")
        t = time.perf_counter()
        G = generate.rmat(path, a.scale, a.edge_factor, seed=1, weighted=True, memory=a.memory)
        print(f"generated {G!r} in {time.perf_counter() - t:.2f} s; device: {device}")
        src = int(np.argmax(G.out_degree))
        kw = dict(memory=a.memory, device=a.device, device_memory=a.device_memory)
        pr = pagerank(G, **kw)
        for r in (pr, bfs(G, src, **kw), sssp(G, src, **kw), wcc(G, **kw)):
            print(r.summary())
        top = np.argsort(pr.values)[::-1][:5]
        print("top PageRank vertices:", ", ".join(f"{v} ({pr.values[v]:.2e})" for v in top))
        G.close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
