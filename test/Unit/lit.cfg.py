# -*- Python -*-
# lit configuration of the GoogleTest binaries (run as part of check-gnn).

import os

import lit.formats

config.name = "GNN-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.gnn_obj_root, "test", "Unit")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
