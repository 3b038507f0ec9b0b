"""networkx's ``networkx.backend_info`` entry point for ooc_graph, kept outside the package so
that importing networkx does not import ooc_graph (HDF5, the engine: about half a second).

The function names are those registered in :mod:`ooc_graph.nx_backend.functions` (by its modules
traversal, weighted, components, ...); a test checks that the two lists agree.
"""

FUNCTIONS = (
    # traversal and unweighted shortest paths (ooc_graph/nx_backend/traversal.py)
    "bfs_edges", "bfs_tree", "bfs_predecessors", "bfs_successors", "bfs_layers",
    "descendants_at_distance", "descendants", "ancestors", "single_source_shortest_path_length",
    "single_target_shortest_path_length", "all_pairs_shortest_path_length", "single_source_shortest_path",
    "single_target_shortest_path", "all_pairs_shortest_path", "bidirectional_shortest_path", "has_path",
    "predecessor",
    # weighted shortest paths (weighted.py; shortest_path and its kin: generic.py)
    "multi_source_dijkstra_path_length", "multi_source_dijkstra", "multi_source_dijkstra_path",
    "single_source_dijkstra_path_length", "single_source_dijkstra", "single_source_dijkstra_path", "dijkstra_path",
    "dijkstra_path_length", "all_pairs_dijkstra", "all_pairs_dijkstra_path_length", "all_pairs_dijkstra_path",
    "dijkstra_predecessor_and_distance", "bidirectional_dijkstra", "single_source_bellman_ford_path_length",
    "single_source_bellman_ford", "single_source_bellman_ford_path", "bellman_ford_path", "bellman_ford_path_length",
    "bellman_ford_predecessor_and_distance", "all_pairs_bellman_ford_path_length", "all_pairs_bellman_ford_path",
    "is_negatively_weighted", "shortest_path", "shortest_path_length", "average_shortest_path_length",
    # components and trees (components.py)
    "connected_components", "number_connected_components", "is_connected", "node_connected_component",
    "weakly_connected_components", "number_weakly_connected_components", "is_weakly_connected",
    "strongly_connected_components", "number_strongly_connected_components", "is_strongly_connected",
    "attracting_components", "number_attracting_components", "is_attracting_component", "condensation", "is_tree",
    "is_forest", "is_arborescence", "is_branching",
    # directed acyclic graphs (dag.py)
    "topological_generations", "topological_sort", "is_directed_acyclic_graph", "dag_longest_path",
    "dag_longest_path_length",
    # link analysis and centrality (link_analysis.py, centrality.py)
    "pagerank", "hits", "katz_centrality", "eigenvector_centrality", "betweenness_centrality",
    "edge_betweenness_centrality",
    "degree_centrality", "in_degree_centrality", "out_degree_centrality",
    # clustering, communities, cores (cluster.py, community.py, cores.py)
    "triangles", "clustering", "average_clustering", "transitivity",
    "louvain_communities", "louvain_partitions", "modularity",
    "core_number", "k_core", "k_shell", "k_crust", "k_corona", "k_truss",
    # link prediction (link_prediction.py)
    "jaccard_coefficient", "preferential_attachment", "resource_allocation_index", "adamic_adar_index",
    # structure (structure.py)
    "isolates", "is_isolate", "number_of_isolates", "number_of_selfloops", "is_empty", "overall_reciprocity",
    "reciprocity",
    # conversions and subgraphs (convert.py)
    "to_scipy_sparse_array", "to_dict_of_lists", "ego_graph", "relabel_nodes", "convert_node_labels_to_integers",
)

_SUMS = "Sums run in node order where networkx's run over a set of common neighbours: they may differ in the last bit."
_NOTES = {
    "resource_allocation_index": _SUMS,
    "adamic_adar_index": _SUMS,
    "betweenness_centrality": "Zero edge weights are left to networkx (its path counts over them depend on its visiting "
                              "order).",
    "louvain_communities": "Moves vertices in batches: the partition differs from networkx's for a seed, of equal "
                           "modularity on average.",
    "hits": "Power iteration (networkx's documented method) instead of ARPACK's svds; normalized=False is left to "
            "networkx.",
}


def get_info():
    """What networkx shows of this backend (docs) and its configuration
    (``nx.config.backends.ooc_graph``: ``device``, ``memory``, ``device_memory``, ``progress`` as
    the ooc_graph functions take them; ``progress`` False unless set: no bars in networkx calls)."""
    functions = {name: ({"additional_docs": _NOTES[name], "extra_docstring": _NOTES[name]} if name in _NOTES else {})
                 for name in FUNCTIONS}
    return {
        "backend_name": "ooc_graph",
        "project": "ooc-graph",
        "package": "ooc_graph",
        "short_summary": "Out-of-core, multi-GPU graph processing; networkx's own order for searches and paths.",
        "functions": functions,
        "default_config": {"device": "auto", "memory": None, "device_memory": None, "progress": False},
    }
