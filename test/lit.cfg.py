# -*- Python -*-
# lit configuration of the MegaGraph test suite.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "MegaGraph"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "Inputs", "unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.megagraph_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%examples", os.path.join(config.megagraph_src_root, "examples")))
config.substitutions.append(("%python", config.python_executable))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.megagraph_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["megagraph-opt", "megagraph-compile", "megagraph-profile"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.megagraph_tools_dir, append_path=True)

# CUDA: `cuda-runtime` when the CUDA runtime was built (--target cuda links),
# `cuda-gpu` when a GPU is usable here (tests that run on it; without one
# they show as UNSUPPORTED).
if config.megagraph_cuda.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("cuda-runtime")
    # `cuda-nccl`: the NCCL backend too (multi-GPU --target cuda programs).
    if config.megagraph_nccl.upper() in ("ON", "1", "TRUE", "YES"):
        config.available_features.add("cuda-nccl")
_smi = shutil.which("nvidia-smi")
if _smi:
    _out = subprocess.run([_smi, "-L"], capture_output=True, text=True)
    if _out.returncode == 0 and "GPU" in _out.stdout:
        config.available_features.add("cuda-gpu")

# Launching as on a cluster (test/E2E/launch_*.test): two network
# namespaces as two hosts (`netns`: root, ip, unshare) and a one-node Slurm
# cluster (`slurm`: root, slurmctld, slurmd, srun; Debian's slurm-wlm).
# scripts/setup.sh installs them and CI runs as root: under CI the tests
# always run, so a missing tool fails them instead of leaving them
# UNSUPPORTED.
_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
_root = hasattr(os, "geteuid") and os.geteuid() == 0
if _ci or (_root and shutil.which("ip") and shutil.which("unshare")):
    config.available_features.add("netns")
if _ci or (_root and all(shutil.which(t) for t in
                         ("slurmctld", "slurmd", "srun", "sinfo"))):
    config.available_features.add("slurm")
