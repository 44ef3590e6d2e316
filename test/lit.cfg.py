# -*- Python -*-
# lit configuration of the gnn test suite.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "GNN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gnn_obj_root, "test")
config.excludes = ["Inputs", "datasets", "CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%gnn_src_root", config.gnn_src_root))
config.substitutions.append(("%examples", os.path.join(config.gnn_src_root, "examples")))
config.substitutions.append(("%PYTHON", config.gnn_python))
config.substitutions.append(("%gnn_bin", os.path.join(config.gnn_obj_root, "bin")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# The build's tools come first on PATH, then LLVM's (FileCheck, not, count).
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", os.path.join(config.gnn_obj_root, "bin"),
                             append_path=True)
llvm_config.with_environment("PYTHONPATH",
                             os.path.join(config.gnn_src_root, "python"),
                             append_path=True)
llvm_config.add_tool_substitutions(
    ["gnn-opt", "gnn-compile"], [os.path.join(config.gnn_obj_root, "bin")])

# The CUDA device was built (the gnnrt_cuda target exists).
if config.gnn_cuda_built:
    config.available_features.add("cuda")
# The MPI communicator was built and mpirun found (%mpirun: as many ranks as
# asked for on however many cores, also as root). Each test's mpirun keeps its
# session directory under its own %t.ompi: Open MPI 4 removes the shared
# /tmp/ompi.<host>.<uid> when its job ends, and an mpirun of the other lit
# worker creating its own directory in there at that moment fails
# ("orte_session_dir failed"). The test-specific %t is substituted after this.
if config.gnn_mpirun:
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", config.gnn_mpirun + " --allow-run-as-root --oversubscribe"
         " --mca orte_tmpdir_base %t.ompi"))
config.substitutions.append(("%gnn_unit", os.path.join(config.gnn_obj_root, "test", "Unit")))
# The NVIDIA driver's library loads (compiled CUDA programs can start).
import ctypes
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
# The CUDA toolkit's PTX assembler was found (%ptxas).
if config.gnn_ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.gnn_ptxas))
