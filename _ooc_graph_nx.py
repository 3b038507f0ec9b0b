"""networkx's ``networkx.backend_info`` entry point for ooc_graph, kept outside the package so
that importing networkx does not import ooc_graph (HDF5, the engine: about half a second).

The function names are those of :mod:`ooc_graph.nx_backend.functions` (and of its
:mod:`~ooc_graph.nx_backend.centrality`); a test checks that the two lists agree.
"""

FUNCTIONS = (
    # link analysis
    "pagerank",
    # traversal and shortest paths
    "single_source_shortest_path_length", "descendants", "has_path",
    "single_source_dijkstra_path_length", "dijkstra_path_length",
    "single_source_bellman_ford_path_length", "bellman_ford_path_length",
    # components
    "connected_components", "number_connected_components", "is_connected", "node_connected_component",
    "weakly_connected_components", "number_weakly_connected_components", "is_weakly_connected",
    "strongly_connected_components", "number_strongly_connected_components", "is_strongly_connected",
    # clustering and communities
    "triangles", "clustering", "average_clustering", "louvain_communities", "louvain_partitions",
    # centrality (ooc_graph/nx_backend/centrality.py)
    "hits", "katz_centrality", "eigenvector_centrality", "core_number", "betweenness_centrality",
)


def get_info():
    """What networkx shows of this backend (docs) and its configuration
    (``nx.config.backends.ooc_graph``: ``device``, ``memory``, ``device_memory``, ``progress`` as
    the ooc_graph functions take them; ``progress`` False unless set: no bars in networkx calls)."""
    return {
        "backend_name": "ooc_graph",
        "project": "ooc-graph",
        "package": "ooc_graph",
        "short_summary": "Out-of-core, multi-GPU graph processing: the graph goes into a temporary store.",
        "functions": {name: {} for name in FUNCTIONS},
        "default_config": {"device": "auto", "memory": None, "device_memory": None, "progress": False},
    }
