# -*- Python -*-
import os
import re
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "CACHET"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "lit.local.cfg", "check-help.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cachet_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%cachet_src_root", config.cachet_src_root))
config.substitutions.append(("%cachet_obj_root", config.cachet_obj_root))
config.substitutions.append(("%cachet_lib_dir", config.cachet_lib_dir))
config.substitutions.append(
    ("%mlir_runner_utils",
     os.path.join(config.llvm_lib_dir, "libmlir_runner_utils.so")))
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(config.llvm_lib_dir, "libmlir_c_runner_utils.so")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.cachet_tools_dir, config.llvm_tools_dir]
tools = [
    "cachet-opt",
    "cachet-capi-test",
    "cachet-run",
    "cachet-runner",
    "cachet-bench",
    "cachet-probe",
    "cachet-gen",
    "cachet-gguf",
    "cachet-generate",
    "cachet-generate-runner",
    ToolSubst("mlir-translate", os.path.join(config.llvm_tools_dir, "mlir-translate")),
    "cachet-runtime-test",
    "cachet-spirv-reflect",
    # Debian's own mlir-opt, to load the plugin.
    ToolSubst("mlir-opt", os.path.join(config.llvm_tools_dir, "mlir-opt")),
    ToolSubst("mlir-runner", os.path.join(config.llvm_tools_dir, "mlir-runner")),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# `cachet-quantize`: the dialect has cachet.quantize (cachet-gen's packed KV
# formats use it).
with open(os.path.join(config.cachet_src_root, "include", "cachet", "Dialect",
                       "CachetOps.td")) as ops:
    if 'Cachet_Op<"quantize"' in ops.read():
        config.available_features.add("cachet-quantize")

# `numpy`: the Python that runs the tests has numpy (bench/gguf_reader.py
# decodes tensors with it).
try:
    if subprocess.run([sys.executable, "-c", "import numpy"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                      timeout=120).returncode == 0:
        config.available_features.add("numpy")
except (OSError, subprocess.TimeoutExpired):
    pass

# `vulkan`: a Vulkan device (lavapipe counts) that libcachet_runtime can use.
# `vulkan-coop-matrix`: one on which the runtime enabled
# VK_KHR_cooperative_matrix (the H200 through NVIDIA's driver; not lavapipe).
runtime_test = os.path.join(config.cachet_tools_dir, "cachet-runtime-test")
try:
    probe = subprocess.run([runtime_test, "--probe"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=120, text=True)
    if probe.returncode == 0:
        config.available_features.add("vulkan")
        if "cooperative matrix: off" not in probe.stdout:
            config.available_features.add("vulkan-coop-matrix")
        # `vulkan-subgroup-N`: the device's (default) subgroup size.
        subgroup = re.search(r"subgroup (\d+)", probe.stdout)
        if subgroup:
            config.available_features.add("vulkan-subgroup-" + subgroup.group(1))
except (OSError, subprocess.TimeoutExpired):
    pass

# `cuda`, `hip`: a device of that backend (the H200 for `cuda`); without one
# the tests that need it are UNSUPPORTED and the no-device tests run.
for backend in ["cuda", "hip"]:
    try:
        probe = subprocess.run([runtime_test, "--backend=" + backend, "--probe"],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=120)
        if probe.returncode == 0:
            config.available_features.add(backend)
    except (OSError, subprocess.TimeoutExpired):
        pass

# `cuda-stub`: the CUDA toolkit's stub libcuda (every call fails with
# CUDA_ERROR_STUB_LIBRARY), for the driver-present-but-unusable path.
cuda_root = os.environ.get("CUDA_HOME", "/usr/local/cuda")
cuda_stub = os.path.join(cuda_root, "lib64", "stubs", "libcuda.so")
if os.path.exists(cuda_stub):
    config.available_features.add("cuda-stub")
    config.substitutions.append(("%cuda_stub", cuda_stub))

# `cuda-libdevice`: libdevice where cachet-compile looks for it when no
# CUDA_ROOT / CUDA_HOME / CUDA_PATH is set.
if os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"):
    config.available_features.add("cuda-libdevice")

# `ptxas`: the CUDA toolkit's PTX assembler, to validate embedded PTX.
ptxas = shutil.which("ptxas") or os.path.join(cuda_root, "bin", "ptxas")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    config.substitutions.append(("%cuda_root", cuda_root))
