"""Shared by ``twitter.py`` and ``friendster.py``: convert a real graph (or generate an R-MAT with
its vertex and edge counts), then run PageRank, BFS and WCC on one GPU and on all of them,
reporting seconds and edges per second for every stage."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

import ooc_graph


def parser(description: str, scale: int, edge_factor: int, directed: bool) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--input", help="the real edge file (any format ooc-graph convert reads); "
                                    "without it an R-MAT of the same size is generated")
    ap.add_argument("--store", help="where to keep the graph store (default: a temporary folder, deleted)")
    ap.add_argument("--scale", type=int, default=scale, help=f"R-MAT scale (default {scale})")
    ap.add_argument("--edge-factor", type=int, default=edge_factor, help=f"R-MAT edge factor (default {edge_factor})")
    ap.add_argument("--directed", action=argparse.BooleanOptionalAction, default=directed,
                    help=f"directed graph (default {'yes' if directed else 'no: edges are symmetrised'})")
    ap.add_argument("--gpus", default="all", help="GPUs for the multi-GPU runs: all, or ids like 0,1")
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"),
                    help="cpu: run on CPU workers instead (no GPU needed)")
    ap.add_argument("--workers", type=int, default=2, help="with --device cpu: CPU worker processes")
    ap.add_argument("--memory", help="host budget per worker, e.g. 64GB (default: a quarter of RAM)")
    ap.add_argument("--device-memory", help="GPU budget per GPU (default: 80%% of free memory)")
    ap.add_argument("--build-workers", type=int, default=os.cpu_count(), help="threads converting")
    ap.add_argument("--warm", type=int, default=0,
                    help="after each first call, this many warm calls (their median is reported too)")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    return ap


def _stage(rows, name, seconds, edges):
    """One stage's figures: edges are the input edges of a conversion, the arcs an algorithm
    processed (every pass counted) for a run."""
    rows.append({"stage": name, "seconds": seconds, "edges": int(edges),
                 "edges_per_second": edges / seconds if seconds else None})
    print(f"{name:<34s} {seconds:9.2f} s  {edges / max(seconds, 1e-9) / 1e6:10.1f} M edges/s", flush=True)


def run(a) -> list:
    """Every stage of the job; returns the figures."""
    rows = []
    folder = None if a.store else tempfile.TemporaryDirectory(prefix="ooc-graph-large-")
    store = Path(a.store) if a.store else Path(folder.name) / "graph.h5"
    try:
        t = time.perf_counter()
        built = bool(a.input) or not store.exists()
        if a.input:
            G = ooc_graph.convert(a.input, store, directed=a.directed, memory=a.memory, workers=a.build_workers)
        elif store.exists():
            G = ooc_graph.open(store)
        else:
            G = ooc_graph.generate.rmat(store, a.scale, a.edge_factor, seed=1, directed=a.directed, memory=a.memory,
                                        workers=a.build_workers)
        print(repr(G), flush=True)
        if built:
            _stage(rows, "convert" if a.input else "generate + convert", time.perf_counter() - t,
                   G.built_by.get("input_edges", G.num_edges))
        source = int(G.vertices[int(np.argmax(G.out_degree))])
        gpu = a.device != "cpu" and ooc_graph.engine.gpu_available()
        configs = [("1 GPU" if gpu else "1 process", {})]
        if gpu:
            configs.append((f"GPUs {a.gpus}", {"gpus": a.gpus}))
        else:
            configs.append((f"{a.workers} CPU workers", {"workers": a.workers}))
        budgets = {"memory": a.memory} | ({"device_memory": a.device_memory} if gpu else {})
        for label, where in configs:
            if where:  # the cluster starts once, before the first call that needs it
                from ooc_graph.runtime import cluster
                t = time.perf_counter()
                cluster.local_gpu_client(a.gpus) if gpu else cluster.local_cpu_client(a.workers)
                rows.append({"stage": f"start cluster ({label})", "seconds": time.perf_counter() - t})
                print(f"{rows[-1]['stage']:<34s} {rows[-1]['seconds']:9.2f} s", flush=True)
            for algo, kw in (("pagerank", {"tol": 1e-6}), ("bfs", {"source": source}), ("wcc", {})):
                G.release()  # every call reads the store: this process's engine and the workers' alike
                if where:
                    ooc_graph.runtime.release()
                call = partial(getattr(ooc_graph, algo), G, device="gpu" if gpu else "cpu", **budgets, **where, **kw)
                t = time.perf_counter()
                r = call()
                _stage(rows, f"{algo} ({label})", time.perf_counter() - t, r.stats["arcs_processed"])
                rows[-1]["iterations"] = r.iterations
                if a.warm > 0:  # the same call again, the graph now cached (a user's next call)
                    del r  # as a loop that drops each result before the next call
                    seconds = []
                    for _ in range(a.warm):
                        t = time.perf_counter()
                        r = call()
                        seconds.append(time.perf_counter() - t)
                        del r
                    _stage(rows, f"{algo} ({label}, warm)", statistics.median(seconds),
                           rows[-1]["edges"])
                    rows[-1]["all_seconds"] = seconds
                if a.json:  # as it goes: a long job stopped midway keeps what it measured
                    Path(a.json).write_text(json.dumps(rows, indent=1))
        G.close()
    finally:
        if folder is not None:
            folder.cleanup()
        ooc_graph.runtime.shutdown()
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return rows
