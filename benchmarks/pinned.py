"""Page-locking cost: CuPy's pinned pool (``cudaHostAlloc``) against ``kernels/gpu_pinned.py``
(anonymous memory on transparent huge pages, registered with ``cudaHostRegister``), as a cold
call's first pass meets it: ``--blocks`` blocks of ``--mib`` MiB made one after another in a
fresh process (its CUDA context made first), then the copy engine's rate from them to the device,
then the same blocks taken again after they were dropped (the pool's reuse). Fresh processes
alternate between the two, ``--rounds`` each.

    python3 benchmarks/pinned.py --name h100      # on the GPU machine

Writes ``results/pinned-<name>.json`` with the command and the machine.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = r"""
import json, sys, time
import numpy as np, cupy as cp
way, blocks, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) << 20
cp.cuda.runtime.free(cp.cuda.runtime.malloc(1 << 20))  # the context, made before timing
if way == "cupy":
    def empty():
        return np.ndarray(size, np.uint8, buffer=cp.cuda.alloc_pinned_memory(size))
else:
    from ooc_graph.kernels import gpu_pinned
    def empty():
        return gpu_pinned.empty(size, np.uint8)
t = time.perf_counter()
held = [empty() for _ in range(blocks)]
made = time.perf_counter() - t
device, stream = cp.empty(size, np.uint8), cp.cuda.Stream(non_blocking=True)
for a in held:
    a[::4096] = 1
t = time.perf_counter()
for a in held:
    cp.cuda.runtime.memcpyAsync(device.data.ptr, a.ctypes.data, size, 1, stream.ptr)
stream.synchronize()
rate = blocks * size / (time.perf_counter() - t) / 1e9
del a, held
t = time.perf_counter()
again = [empty() for _ in range(blocks)]
reused = time.perf_counter() - t
print(json.dumps({"made_s": made, "h2d_GBs": rate, "taken_again_s": reused}))
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--blocks", type=int, default=4)
    p.add_argument("--mib", type=int, default=66)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--name", default="gpu")
    p.add_argument("--out", default=str(HERE / "results"))
    args = p.parse_args()
    runs = {"cupy": [], "registered": []}
    for r in range(args.rounds):
        for way in (("cupy", "registered") if r % 2 == 0 else ("registered", "cupy")):
            proc = subprocess.run([sys.executable, "-c", _CHILD, way, str(args.blocks), str(args.mib)],
                                  capture_output=True, text=True)
            if proc.returncode:
                sys.exit(proc.stderr[-3000:])
            runs[way].append(json.loads(proc.stdout))
    summary = {way: {key: {"min": min(x[key] for x in got), "median": statistics.median(x[key] for x in got)}
                     for key in got[0]} for way, got in runs.items()}
    import cupy as cp
    record = {"command": " ".join([Path(sys.executable).name] + sys.argv), "machine": platform.node(),
              "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cpus": platform.processor() or None,
              "blocks": args.blocks, "mib": args.mib, "summary": summary, "runs": runs}
    out = Path(args.out) / f"pinned-{args.name}.json"
    out.write_text(json.dumps(record, indent=1) + "\n")
    for way, keys in summary.items():
        print(way, {k: round(v["median"], 4) for k, v in keys.items()})
    print("written", out)


if __name__ == "__main__":
    main()
