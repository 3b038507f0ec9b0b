"""``ooc-graph convert FILE`` with default options, timed for this tree and for an earlier one.

    python benchmarks/convert_before_after.py --before SITE [--repeat 2] FILE...

SITE is an install of the earlier commit (``pip install --no-deps --target SITE <its tree>``);
each file is converted by both, alternately, in subprocesses, and the wall seconds and the rate the
build records (input edges/s) go to benchmarks/results/cpu-convert-before-after.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu import record  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="edge files to convert")
    ap.add_argument("--before", required=True, help="site folder of the earlier commit")
    ap.add_argument("--repeat", type=int, default=2, help="rounds (default 2)")
    ap.add_argument("--name", default="cpu-convert-before-after", help="result name")
    a = ap.parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "g.h5"
        for _ in range(a.repeat):
            for code, site in (("before", a.before), ("after", None)):
                for f in a.files:
                    out.unlink(missing_ok=True)  # (an earlier commit may have no --overwrite)
                    env = dict(os.environ, **({"PYTHONPATH": site} if site else {}))
                    t = time.perf_counter()
                    r = subprocess.run([sys.executable, "-m", "ooc_graph.cli", "convert", str(Path(f).resolve()),
                                        str(out), "--quiet"], env=env, capture_output=True, text=True, cwd=work)
                    runs.append({"code": code, "input": Path(f).name, "wall_seconds": round(time.perf_counter() - t, 2),
                                 "exit_status": r.returncode,
                                 "printed": (r.stdout.strip().splitlines() or [r.stderr.strip()])[-1][:160]})
                    print(runs[-1], flush=True)
    record(a.name, {"load_average": os.getloadavg(), "runs": runs})


if __name__ == "__main__":
    main()
