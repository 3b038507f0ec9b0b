"""The HDF5 graph store (layout: partitioning/FORMAT.md)."""

from .graph import Graph, open_graph
from .results import SavedResult, read_result_file

__all__ = ["Graph", "open_graph", "SavedResult", "read_result_file"]
