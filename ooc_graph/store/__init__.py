"""The HDF5 graph store (layout: partitioning/FORMAT.md)."""

from .graph import Graph, as_graph, open_graph
from .results import SavedResult, read_result_file

__all__ = ["Graph", "as_graph", "open_graph", "SavedResult", "read_result_file"]
