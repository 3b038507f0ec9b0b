"""Generating and converting an R-MAT with the builder's id checks in NumPy and in the compiled pass
(``cpu_ingest.id_range`` on numba's threads, beside the generator's draws on their own thread),
alternating, twice; prints each run's wall seconds and main-thread stages (run on the GPU machine):

    python3 benchmarks/convert_generated_ab.py 25
"""
import sys, time
if __name__ == "__main__":
    import ooc_graph
    from ooc_graph import config
    scale = int(sys.argv[1])
    ooc_graph.generate.rmat("/tmp/warm.h5", 21, 16, seed=2, directed=True, progress=False, overwrite=True).close()
    for rep in range(2):
        for name, least in (("numpy", 1 << 60), ("compiled", 1 << 16)):
            config.update({"ingest.id_kernel_min_edges": least})
            t = time.perf_counter()
            G = ooc_graph.generate.rmat(f"/tmp/ab-{name}.h5", scale, 16, seed=1, directed=True, progress=False,
                                        overwrite=True)
            wall = time.perf_counter() - t
            st = G.built_by["stages"]
            print(name, "wall", round(wall, 2), "arcs/s %.1fM" % (G.num_arcs / wall / 1e6),
                  {k: round(v, 2) for k, v in st.items() if isinstance(v, float)}, flush=True)
            G.close()
