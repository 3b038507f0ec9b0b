"""The first CPU call of a fresh process with numba's on-disk cache empty (a fresh install, CI):
its seconds are compile time. For each of BFS, SSSP, WCC and PageRank (its whole pull too), on a
small weighted R-MAT (``rmat(path, 12, 16, seed=1, directed=True, weighted=True)``), a fresh
process per (algorithm, setting) after deleting ``kernels/__pycache__``'s ``*.nbi``/``*.nbc``:

  * ``1thread``, ``2threads``: NUMBA_NUM_THREADS 1 and 2, the defaults (below config
    ``cpu.parallel_min_threads``: the serial kernels run);
  * ``parallel``: NUMBA_NUM_THREADS=2 with every whole kernel and level forced onto the threads
    (``cpu.parallel_min_threads`` 1, ``cpu.whole_parallel_min_arcs`` 0, ``level_parallel_min_arcs``
    16, ``parallel_min_arcs`` 0), as tests/test_cpu_parallel.py forces them.

Also reports the numba dispatchers that compiled anything in the call (``--compiled``).
``--baseline DIR`` (a checkout of an earlier commit whose ``ooc_graph/kernels`` links to its
``kernels``, as for cpu_frontier.py) measures the same calls on that code, each right after this
tree's (its cache emptied too), so that both see the same load.

    python benchmarks/cold_compile.py --work /tmp/cold [--only sssp] [--repeat 1] [--baseline DIR]

Writes nothing; prints one JSON line per measurement and a table (the minimum of ``--repeat``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parent / "kernels"
SETTINGS = ("1thread", "2threads", "parallel")
ALGORITHMS = ("bfs", "sssp", "wcc", "pagerank", "pagerank-whole")

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import ooc_graph
from ooc_graph import config
algorithm, setting, path = sys.argv[1:4]
cpu = {}
if setting == "parallel":
    cpu = dict(parallel_min_threads=1, whole_parallel_min_arcs=0, level_parallel_min_arcs=16, parallel_min_arcs=0)
if algorithm == "pagerank-whole":
    cpu["whole_pull"] = True
config.update(cpu=cpu)
G = ooc_graph.open(path)
call = {"bfs": lambda: ooc_graph.bfs(G, 0, device="cpu"), "sssp": lambda: ooc_graph.sssp(G, 0, device="cpu"),
        "wcc": lambda: ooc_graph.wcc(G, device="cpu"),
        "pagerank": lambda: ooc_graph.pagerank(G, device="cpu", tol=1e-6, max_iter=20,
                                               raise_on_nonconvergence=False)}[algorithm.split("-")[0]]
t = time.perf_counter()
call()
first = time.perf_counter() - t
t = time.perf_counter()
call()
second = time.perf_counter() - t
compiled = []
import gc
from numba.core.dispatcher import Dispatcher
for obj in gc.get_objects():
    if isinstance(obj, Dispatcher) and obj.overloads and obj.py_func.__module__.startswith("ooc_graph.kernels"):
        compiled.append(obj.py_func.__module__.rsplit(".", 1)[-1] + "." + obj.py_func.__name__
                        + ("[par]" if obj.targetoptions.get("parallel") else ""))
print(json.dumps({"first_s": first, "second_s": second, "compiled": sorted(compiled)}))
"""


def clear_cache(kernels: Path) -> None:
    for p in kernels.rglob("*"):
        if p.suffix in (".nbi", ".nbc"):
            p.unlink()


def first_call(algorithm: str, setting: str, path: Path, tree: Path | None) -> dict:
    """The child's figures in a fresh process, numba's cache of the code it runs emptied first."""
    clear_cache(KERNELS if tree is None else tree / "kernels")
    env = dict(os.environ, NUMBA_NUM_THREADS="1" if setting == "1thread" else "2")
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    out = subprocess.run([sys.executable, "-c", CHILD, algorithm, setting, str(path)], env=env, capture_output=True,
                         text=True, cwd=HERE.parent if tree is None else "/")
    if out.returncode:
        sys.exit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/cold_compile")
    ap.add_argument("--only", nargs="*", default=list(ALGORITHMS))
    ap.add_argument("--settings", nargs="*", default=list(SETTINGS))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--compiled", action="store_true", help="list the dispatchers that compiled")
    ap.add_argument("--baseline", help="a checkout of an earlier commit to time the same calls on")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    path = work / "rmat12w.h5"
    if not path.exists():
        subprocess.run([sys.executable, "-c", "import sys, ooc_graph.generate as g; g.rmat(sys.argv[1], 12, 16, "
                        "seed=1, directed=True, weighted=True, progress=False)", str(path)], check=True)
    trees = {"this": None}
    if a.baseline:
        trees["baseline"] = Path(a.baseline).resolve()
    table = {}
    for algorithm in a.only:
        for setting in a.settings:
            for _ in range(a.repeat):
                for label, tree in trees.items():
                    r = first_call(algorithm, setting, path, tree)
                    key = (label, algorithm, setting)
                    table[key] = min(table.get(key, float("inf")), r["first_s"])
                    line = {"tree": label, "algorithm": algorithm, "setting": setting,
                            "first_s": round(r["first_s"], 2), "second_s": round(r["second_s"], 4)}
                    if a.compiled:
                        line["compiled"] = r["compiled"]
                    print(json.dumps(line), flush=True)
    print(f"{'first call, s':24}" + "".join(f"{s:>10}" for s in a.settings))
    for label in trees:
        for algorithm in a.only:
            print(f"{label + ' ' + algorithm:24}" + "".join(f"{table[label, algorithm, s]:10.2f}" for s in a.settings))


if __name__ == "__main__":
    main()
