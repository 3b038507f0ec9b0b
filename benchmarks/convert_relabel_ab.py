"""Converting raw int32 pairs without ``num_vertices`` (the ids are relabelled through the table of
ids seen), with the compiled id pass (extremes and marks on numba's threads) and with NumPy's,
alternating, twice; prints each conversion's seconds and main-thread stages (run on the GPU machine):

    python3 benchmarks/convert_speed.py --scale 25 --skip text --work /tmp/cs --keep --name tmp
    python3 benchmarks/convert_relabel_ab.py /tmp/cs/rmat25.bin32
"""

import sys

import numpy as np

if __name__ == "__main__":
    import ooc_graph
    from ooc_graph import config

    path = sys.argv[1]
    # compile the kernels first (numba caches them), as every later conversion on the machine finds them
    ooc_graph.convert(np.array([[0, 5], [5, 9]] * 40000), "/tmp/warm.h5", progress=False, overwrite=True).close()
    for rep in range(2):
        for name, least in (("numpy", 1 << 60), ("compiled", 1 << 16)):
            config.update({"ingest.id_kernel_min_edges": least})
            G = ooc_graph.convert(path, f"/tmp/ab-{name}.h5", progress=False, overwrite=True, memory="64GB")
            st = G.built_by["stages"]
            print(name, "total", round(G.built_by["seconds"], 2), "add", round(st["add"], 3),
                  {k: round(v, 2) for k, v in st.items() if k in ("parse", "ids", "degrees", "scatter", "wait")},
                  flush=True)
            G.close()
