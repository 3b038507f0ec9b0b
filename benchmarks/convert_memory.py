"""Peak resident memory and time of `ooc-graph convert` under memory budgets.

    python benchmarks/convert_memory.py --work /data/ooc-mem [--before SITE]

Generates (once) a 20,971,520-edge directed R-MAT as raw int32 pairs (scale 21, edge factor 10)
and a 10,485,760-line weighted text edge list (scale 20), then converts them in subprocesses
under several budgets and reads each one's peak RSS from ``os.wait4``. ``--before SITE`` runs
the same conversions with ``PYTHONPATH=SITE`` too (an install of an earlier commit, e.g.
``pip install --no-deps --target SITE <tree of that commit>``). Results go to
benchmarks/results/cpu-convert-memory.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu import record, write_rmat_binary  # noqa: E402

from ooc_graph._memory import parse_size  # noqa: E402

RUNS = [  # (input, budget or None for the default, extra options)
    ("rmat21.bin32", "128MB", []), ("rmat21.bin32", "256MB", []), ("rmat21.bin32", "512MB", []),
    ("rmat20.bin32", None, []), ("rmat20.bin32", "256MB", []),
    ("rmat20w.txt", "256MB", ["--undirected"]), ("rmat20w.txt", "512MB", ["--undirected"]),
    ("rmat20w.txt", "256MB", ["--undirected", "--augment", "--weight-dtype", "float64"]),
]


def inputs(work: Path):
    if not (work / "rmat21.bin32").exists():
        write_rmat_binary(work / "rmat21.bin32", 21, 10, seed=1)
    if not (work / "rmat20.bin32").exists():
        write_rmat_binary(work / "rmat20.bin32", 20, 10, seed=2)
    if not (work / "rmat20w.txt").exists():
        pairs = np.fromfile(work / "rmat20.bin32", dtype="<i4").reshape(-1, 2)
        w = np.random.default_rng(0).integers(1, 1000, len(pairs)) / 8
        with open(work / "rmat20w.txt", "w") as f:
            for i in range(0, len(pairs), 1 << 20):
                s = slice(i, i + (1 << 20))
                np.savetxt(f, np.column_stack([pairs[s, 0], pairs[s, 1], w[s]]), fmt="%d %d %.3f")


_RUN = """
import os, subprocess, sys
proc = subprocess.Popen([sys.executable, *sys.argv[1:]], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(proc.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024)
"""


def convert(work: Path, name: str, memory, extra, site=None) -> dict:
    out = work / "out.h5"
    out.unlink(missing_ok=True)  # (the commit before has no --overwrite)
    cmd = [sys.executable, "-m", "ooc_graph.cli", "convert", str(work / name), str(out), "--quiet", *extra]
    cmd += ["--memory", memory] if memory else []
    env = dict(os.environ, **({"PYTHONPATH": site} if site else {}))
    t = time.perf_counter()
    # Through a small intermediate process: a child's peak RSS counts the pages of the process it
    # was forked from (this one, with NumPy and SciPy loaded).
    proc = subprocess.run([sys.executable, "-c", _RUN, *cmd[1:]], capture_output=True, text=True, env=env,
                          cwd=work)  # not the repository: `-m` would import from the working folder
    code, peak = map(int, proc.stdout.split())
    seconds = time.perf_counter() - t
    error = proc.stderr.strip()
    out.unlink(missing_ok=True)
    return {"input": name, "memory": memory, "options": extra, "seconds": round(seconds, 2),
            "peak_rss_mib": round(peak / 2**20), "peak_over_budget": round(peak / parse_size(memory), 2) if memory else None,
            "exit_status": code, "error": error[-300:] or None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/ooc-convert-memory")
    ap.add_argument("--before", help="site folder of an earlier commit, run too for comparison")
    ap.add_argument("--name", default="cpu-convert-memory", help="result name (benchmarks/results/NAME.json)")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    inputs(work)
    runs = []
    for name, memory, extra in RUNS:
        for label, site in (("before", a.before), ("after", None)):
            if label == "before" and not site:
                continue
            r = dict(convert(work, name, memory, extra, site), code=label)
            print(r, flush=True)
            runs.append(r)
    record(a.name, {"runs": runs})


if __name__ == "__main__":
    main()
