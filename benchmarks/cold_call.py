"""A cold process's call, as a newcomer meets it (issue 31): the CLI's wall time, a process's first
call against its warm one, the store read from the page cache and from the disk against a plain
read of the same bytes, and what ``import ooc_graph`` costs beside its own dependencies.

    python3 benchmarks/cold_call.py --scale 25 --device gpu --name h100      # the GPU machine
    python benchmarks/cold_call.py --scale 20 --device cpu --name 2core       # CPU

The store is ``ooc_graph.generate.rmat(path, SCALE, 16, seed=1, directed=True)`` (Graph500 R-MAT,
unweighted), built in ``--work`` unless there. Every timing runs in a fresh process:
  * ``cli``: wall seconds of ``ooc-graph run ALGORITHM STORE --device D --quiet`` (the default,
    which keeps the result in the store) and with ``--no-store``, the page cache warm; minimum of
    ``--repeat``;
  * ``cli_disk``: the same with the store's pages dropped first (``posix_fadvise(DONTNEED)`` on our
    own file, nothing else), beside ``plain_read_disk``: one sequential read of the whole file
    after the same drop, and ``h5py_read_*``: h5py reading the datasets the call reads;
  * ``in_process``: the first call of a process (import and open apart) and the median of warm
    calls after it, with the bytes the call read;
  * ``import``: ``import ooc_graph`` against importing the third-party modules it loads, and the
    same for what a PageRank call imports before it runs (``call``) and for every public name
    (``everything``: what the import loaded before its names were lazy);
  * ``first_call_profile`` (``--profile``): cProfile's top functions of a fresh process's first call.
Before timing, the bytecode of ours and of every third-party package the call imports is written,
as ``pip install`` writes it (``installed.py``). Writes
``results/cold-call-<name>.json`` with the command and the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from installed import write_bytecode

HERE = Path(__file__).resolve().parent
PY = sys.executable


def drop_pages(path: Path) -> None:
    """Evict our own file from the page cache (the kernel may keep pages it cannot drop)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def wall(cmd: list, env=None, cwd=None) -> tuple:
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    seconds = time.perf_counter() - t
    if proc.returncode:
        sys.exit(f"{' '.join(map(str, cmd))}{f' (in {cwd})' if cwd else ''} failed:\n{proc.stderr[-3000:]}")
    return seconds, proc.stdout


def plain_read(path: Path) -> dict:
    t = time.perf_counter()
    nbytes = 0
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(64 << 20)
        while n := f.readinto(buf):
            nbytes += n
    seconds = time.perf_counter() - t
    return {"seconds": seconds, "bytes": nbytes, "GB_s": nbytes / seconds / 1e9}


CHILD_IN_PROCESS = r"""
import json, sys, time, statistics
t = time.perf_counter(); import ooc_graph; imported = time.perf_counter() - t
G = ooc_graph.open(sys.argv[1]); call = getattr(ooc_graph, sys.argv[2])
t = time.perf_counter(); r = call(G, device=sys.argv[3]); first = time.perf_counter() - t
nbytes = int(r.bytes_read); warm = []
for _ in range(int(sys.argv[4])):
    t = time.perf_counter(); r = call(G, device=sys.argv[3]); warm.append(time.perf_counter() - t)
print(json.dumps({"import_s": imported, "first_s": first, "warm_median_s": statistics.median(warm),
                  "warm_s": warm, "first_bytes_read": nbytes, "iterations": int(r.iterations)}))
"""

CHILD_PROFILE = r"""
import cProfile, io, json, pstats, sys, time
import ooc_graph
G = ooc_graph.open(sys.argv[1]); call = getattr(ooc_graph, sys.argv[2])
prof = cProfile.Profile(); t = time.perf_counter()
prof.runcall(call, G, device=sys.argv[3]); first = time.perf_counter() - t
out = {"first_s": first}
for key in ("tottime", "cumulative"):
    text = io.StringIO(); pstats.Stats(prof, stream=text).sort_stats(key).print_stats(30)
    out[key] = text.getvalue().splitlines()[-40:]
print(json.dumps(out))
"""

CHILD_H5PY = r"""
import json, sys, time, h5py
names = json.loads(sys.argv[2]); t = time.perf_counter(); n = 0
with h5py.File(sys.argv[1], "r") as f:
    for name in names:
        n += f[name][...].nbytes
s = time.perf_counter() - t
print(json.dumps({"seconds": s, "bytes": n, "GB_s": n / s / 1e9, "datasets": names}))
"""

CHILD_IMPORTS = r"""
import sys, time
before = set(sys.modules); t = time.perf_counter(); exec(sys.argv[1]); s = time.perf_counter() - t
ours = {"ooc_graph", "kernels", "partitioning", "cython_runtime"}
tops = sorted(m for m in set(sys.modules) - before if m.split(".")[0] not in set(sys.stdlib_module_names) | ours
              and all(p.isidentifier() and not p.startswith("_") for p in m.split(".")))
print(s, ",".join(tops) or "-")
"""
# What is imported: the package alone (its names load on first use, PEP 562), what a PageRank call
# loads before it runs (the store and the algorithms; numba and scipy come with the call itself),
# and every public name (what ``import ooc_graph`` loaded before it was lazy).
IMPORTS = {"import": "import ooc_graph",
           "call": "import ooc_graph; ooc_graph.open, ooc_graph.pagerank",
           "everything": "import ooc_graph; [getattr(ooc_graph, name) for name in ooc_graph.__all__]"}


def read_datasets(path: Path, algorithm: str, device: str) -> list:
    """The store datasets a call reads: PageRank streams the CEL's local ids on a GPU and pulls over
    the whole in-CSR on the CPU (from 2 threads: config ``cpu.parallel_min_threads``; with one it
    streams the CEL too), the traversals read the out-CSR (and, directed, the in-CSR for bottom-up
    levels)."""
    import h5py
    with h5py.File(path, "r") as f:
        if algorithm == "pagerank" and device == "gpu":
            return ["cel/src", "cel/dst"]
        if algorithm == "pagerank":
            side = "in" if f.attrs["directed"] else "out"
            return [f"csr/{side}/indptr", f"csr/{side}/indices"]
        sides = ("out", "in") if f.attrs["directed"] else ("out",)
        return [f"csr/{side}/{part}" for side in sides for part in ("indptr", "indices")]


def imports(repeat: int) -> dict:
    """``import ooc_graph`` against importing the third-party modules it loads (minimum seconds
    of ``repeat`` fresh processes each, the two kinds alternated so that a shared machine's load
    falls on both alike; no ratio where it loads none), and the same for each of :data:`IMPORTS`
    under its name."""
    out = {}
    for what, code in IMPORTS.items():
        deps = wall([PY, "-c", CHILD_IMPORTS, code])[1].split()[1]
        deps = [] if deps == "-" else deps.split(",")
        ours, theirs = [], []
        for _ in range(repeat):
            ours.append(float(wall([PY, "-c", CHILD_IMPORTS, code])[1].split()[0]))
            if deps:
                theirs.append(float(wall([PY, "-c", CHILD_IMPORTS, f"import {', '.join(deps)}"])[1].split()[0]))
        out[what] = {"ooc_graph_s": min(ours), "dependencies_s": min(theirs) if deps else 0.0,
                     "ratio": min(ours) / min(theirs) if deps else None,
                     "dependencies": sorted({d.split(".")[0] for d in deps})}
    return out["import"] | {"call": out["call"], "everything": out["everything"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, default=25)
    p.add_argument("--algorithm", default="pagerank")
    p.add_argument("--device", default="gpu", choices=("cpu", "gpu"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--work", default="/tmp/ooc-cold")
    p.add_argument("--name", default="gpu")
    p.add_argument("--out", default=str(HERE / "results"))
    p.add_argument("--profile", action="store_true", help="also cProfile a fresh process's first call")
    a = p.parse_args()
    import ooc_graph
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    store = work / f"rmat{a.scale}.h5"
    if not store.exists():
        ooc_graph.generate.rmat(store, a.scale, 16, seed=1, directed=True, progress=False)
    rec = {"command": " ".join(["python3", "benchmarks/cold_call.py"] + sys.argv[1:]),
           "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "store_bytes": store.stat().st_size,
           "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}}
    with ooc_graph.open(store) as G:
        rec["graph"] = {"scale": a.scale, "vertices": G.num_vertices, "arcs": G.num_arcs}
    cli = ["ooc-graph", "run", a.algorithm, str(store), "--device", a.device, "--quiet"]
    # the call run once (the page cache warm, numba's cache written), then the bytecode written
    rec["bytecode"] = write_bytecode("from ooc_graph.cli import main; main(sys.argv[1:])", *cli[1:], "--no-store")
    rec["cli"] = {"store_s": min(wall(cli)[0] for _ in range(a.repeat)),
                  "no_store_s": min(wall(cli + ["--no-store"])[0] for _ in range(a.repeat)),
                  "summary": wall(cli + ["--no-store"])[1].strip().splitlines()[-1]}
    names = json.dumps(read_datasets(store, a.algorithm, a.device))
    rec["h5py_read_cached"] = json.loads(wall([PY, "-c", CHILD_H5PY, str(store), names])[1])
    rec["in_process"] = json.loads(wall([PY, "-c", CHILD_IN_PROCESS, str(store), a.algorithm, a.device,
                                         str(a.repeat)])[1])
    drop_pages(store)
    rec["plain_read_disk"] = plain_read(store)
    drop_pages(store)
    rec["h5py_read_disk"] = json.loads(wall([PY, "-c", CHILD_H5PY, str(store), names])[1])
    drop_pages(store)
    seconds, out = wall(cli + ["--no-store"])
    rec["cli_disk"] = {"no_store_s": seconds, "summary": out.strip().splitlines()[-1]}
    drop_pages(store)
    rec["in_process_disk"] = json.loads(wall([PY, "-c", CHILD_IN_PROCESS, str(store), a.algorithm, a.device,
                                              "1"])[1])
    rec["import"] = imports(max(a.repeat, 5))
    if a.profile:  # where a first call's time goes (page cache warm), for whoever works on it next
        rec["first_call_profile"] = json.loads(wall([PY, "-c", CHILD_PROFILE, str(store), a.algorithm, a.device])[1])
    text = json.dumps(rec, indent=2)
    print(text)
    out = Path(a.out) / f"cold-call-{a.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")


if __name__ == "__main__":
    main()
