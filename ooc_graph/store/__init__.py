"""The HDF5 graph store (layout: partitioning/FORMAT.md)."""

from .graph import Graph, open_graph

__all__ = ["Graph", "open_graph"]
