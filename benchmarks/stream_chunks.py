"""Streamed PageRank against the size of what the GPU engine streams at a time (run on the GPU
machine): R-MAT stores with 4 Mi-arc chunks (the default) and 16 Mi-arc chunks, and the engine taking
up to config ``stream.stream_chunk_arcs`` arcs at a time (whole store chunks) or only one store chunk.

    python3 benchmarks/stream_chunks.py --scale 25 --out $OUT

Each setting is ``whole_call.py``'s streamed PageRank (device budget = the vertex state plus 25% of
the decoded arcs, 10 iterations, the host cache filled first), as % of the pinned copy ceiling
measured in the same run; settings alternate, ``--rounds`` times. Writes
``stream-chunks-rmat<scale>.json``; nothing is asserted.
"""

import argparse
import json
import sys
import time
from pathlib import Path

import ooc_graph
from ooc_graph import config

sys.path.insert(0, str(Path(__file__).parent))
import whole_call  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=25)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default="/tmp/ooc-stream-chunks")
    ap.add_argument("--out", default=str(Path(__file__).with_name("results")))
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    pinned = whole_call.ceiling()
    stores = {c: ooc_graph.generate.rmat(work / f"rmat{a.scale}-{c}.h5", a.scale, 16, seed=1, directed=True,
                                         drop_self_loops=True, chunk_arcs=c, overwrite=True, progress=False)
              for c in (1 << 22, 1 << 24)}
    default = config.get().stream.stream_chunk_arcs
    settings = {"store chunks 4 Mi arcs, engine up to 16 Mi at a time (default)": (1 << 22, default),
                "store chunks 4 Mi arcs, engine one store chunk at a time (before)": (1 << 22, 1 << 22),
                "store chunks 16 Mi arcs": (1 << 24, default)}
    percent = {k: [] for k in settings}
    for _ in range(a.rounds):
        for label, (chunk, at_a_time) in settings.items():
            config.update({"stream.stream_chunk_arcs": at_a_time})
            G = stores[chunk]
            r = whole_call.streamed(G, pinned)
            G.release()
            percent[label].append(round(100 * r["fraction_of_pinned"], 1))
            print(f"  {label}: {percent[label][-1]}%", flush=True)
    config.update({"stream.stream_chunk_arcs": default})
    out = {"command": "python3 benchmarks/stream_chunks.py " + " ".join(sys.argv[1:]),
           "date": time.strftime("%Y-%m-%d %H:%M:%S"), "scale": a.scale, "arcs": stores[1 << 22].num_arcs,
           "pinned_GBps": pinned, "percent_of_pinned": percent}
    path = Path(a.out) / f"stream-chunks-rmat{a.scale}.json"
    path.write_text(json.dumps(out, indent=1))
    print(json.dumps(percent), "->", path)


if __name__ == "__main__":
    main()
