"""Datasets in gnnc's directory format (DESIGN.md): reading and validating
(`format`), building and converting (`convert`), generating (`generate`),
graph-tool files (`gt`), and the command line (`python -m gnnc.data`)."""

from .convert import (from_dgl, from_edges, from_networkx, from_pyg, from_scipy,
                      random_splits, read_edge_list)
from .format import Dataset, DatasetError, load, save, validate
from .generate import rmat, sbm

__all__ = ["Dataset", "DatasetError", "load", "save", "validate", "from_edges",
           "from_scipy", "from_networkx", "from_pyg", "from_dgl", "read_edge_list",
           "random_splits", "rmat", "sbm"]
