"""Cold calls of this checkout against an earlier one, in fresh processes taking turns (issue 31):
a change to a cold call's start is a tenth of a second, and lent hosts differ by more than that
from one to the next, so both trees run on the same host, one after the other, round after round.

    python3 benchmarks/cli_alternation.py /tmp/rmat25.h5 --baseline /tmp/base --rounds 9 --name h100

``--baseline DIR`` is a copy of an earlier commit's ``ooc_graph``, ``kernels`` and ``partitioning``
whose ``ooc_graph/kernels`` and ``ooc_graph/partitioning`` link to its own folders (as
``git archive COMMIT ooc_graph kernels partitioning`` unpacked, plus the two links). Each round
runs, in a turning order:
  * ``script``: the installed console script, ``ooc-graph run ALGORITHM STORE --device D --quiet
    --no-store``;
  * ``new``: ``python -m ooc_graph.cli`` with the same arguments from this checkout's root;
  * ``base``: the same from the baseline's folder (``-m`` puts the working directory first on
    ``sys.path``, so each tree runs its own code);
then ``first``: a fresh process's first call of the algorithm (import and open not counted) for
``new`` and ``base``. Writes ``results/cli-alternation-<name>.json``: every time, min and median,
the command and the machine. The third-party bytecode is as installed (``installed.py`` writes it
where it is missing).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path

from cold_call import wall
from installed import write_bytecode

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

_FIRST = r"""
import sys, time, ooc_graph
G = ooc_graph.open(sys.argv[1])
call = getattr(ooc_graph, sys.argv[2])
t = time.perf_counter()
call(G, device=sys.argv[3])
print(time.perf_counter() - t)
"""


def _timed(kind: str, cmd, cwd, env) -> float:
    """Wall seconds of a CLI run; the call's own seconds (printed) of a ``first`` run."""
    seconds, out = wall(cmd, env, cwd)
    return seconds if kind == "cli" else float(out.split()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("store")
    p.add_argument("--baseline", required=True)
    p.add_argument("--algorithm", default="pagerank")
    p.add_argument("--device", default="gpu", choices=("cpu", "gpu"))
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--name", default="gpu")
    p.add_argument("--out", default=str(HERE / "results"))
    a = p.parse_args()
    store, base = str(Path(a.store).resolve()), str(Path(a.baseline).resolve())
    args = ["run", a.algorithm, store, "--device", a.device, "--quiet", "--no-store"]
    plain, based = dict(os.environ), dict(os.environ, PYTHONPATH=base)
    script = shutil.which("ooc-graph")
    cli = {"new": ([sys.executable, "-m", "ooc_graph.cli", *args], ROOT, plain),
           "base": ([sys.executable, "-m", "ooc_graph.cli", *args], base, based)}
    if script:
        cli["script"] = ([script, *args], "/", plain)
    first = {"new": ([sys.executable, "-c", _FIRST, store, a.algorithm, a.device], ROOT, plain),
             "base": ([sys.executable, "-c", _FIRST, store, a.algorithm, a.device], base, based)}
    bytecode = write_bytecode("from ooc_graph.cli import main; main(sys.argv[1:])", *args, extra=[base])
    for cmd, cwd, env in (*cli.values(), *first.values()):  # caches (pages, kernels) warm for both trees
        wall(cmd, env, cwd)
    times = {f"cli {k}": [] for k in cli} | {f"first {k}": [] for k in first}
    for r in range(a.rounds):
        for kind, runs in (("cli", cli), ("first", first)):
            names = list(runs)
            for k in names[r % len(names):] + names[:r % len(names)]:
                times[f"{kind} {k}"].append(_timed(kind, *runs[k]))
    summary = {k: {"min": min(v), "median": statistics.median(v)} for k, v in times.items()}
    rec = {"command": " ".join(["python3", "benchmarks/cli_alternation.py"] + sys.argv[1:]),
           "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
           "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
           "bytecode": bytecode, "summary": summary, "seconds": times}
    out = Path(a.out) / f"cli-alternation-{a.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rec, indent=1) + "\n")
    for k, v in summary.items():
        print(f"{k:12s} min {v['min']:.3f} median {v['median']:.3f} s")
    print("written", out)


if __name__ == "__main__":
    main()
