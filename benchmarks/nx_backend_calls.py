"""Per-call time of networkx calls served by the ooc_graph backend on tiny graphs, each call
converting the graph anew (as networkx does with ``cache_converted_graphs`` off, and always in
its backend-testing mode): the conversion and the store it builds dominate such calls.

    python benchmarks/nx_backend_calls.py

Prints the median of 5 runs of 20 calls, in milliseconds; nothing is asserted.
"""

import statistics
import time

import networkx as nx

B = {"backend": "ooc_graph"}

if __name__ == "__main__":
    K = nx.karate_club_graph()
    P = nx.path_graph(10)
    D = nx.gnp_random_graph(20, 0.2, seed=1, directed=True)
    calls = {
        "pagerank(karate_club_graph())": lambda: nx.pagerank(K, **B),
        "has_path(path_graph(10), 0, 9)": lambda: nx.has_path(P, 0, 9, **B),
        "single_source_shortest_path_length(path_graph(10), 0)":
            lambda: nx.single_source_shortest_path_length(P, 0, **B),
        "single_source_dijkstra_path_length(gnp_random_graph(20, 0.2, directed), 0)":
            lambda: nx.single_source_dijkstra_path_length(D, 0, **B),
        "connected_components(karate_club_graph())": lambda: list(nx.connected_components(K, **B)),
    }
    nx.config.cache_converted_graphs = False
    for name, call in calls.items():
        call()  # compiles what the first call compiles
        runs = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(20):
                call()
            runs.append(1e3 * (time.perf_counter() - t) / 20)
        print(f"{name:75s} {statistics.median(runs):6.2f} ms", flush=True)
