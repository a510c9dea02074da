# Anvil: a deep-learning compiler and runtime. This package re-exports the Python API: devices,
# tensors (numpy and DLPack interop), the global function registry, and `anvil.runtime`.
"""Anvil's Python API; names follow Apache TVM where TVM has one."""
import os as _os

# An installed package carries the kernel ABI header that export_library compiles against.
_include_dir = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "include")
if _os.path.isdir(_include_dir) and "ANVIL_INCLUDE_DIR" not in _os.environ:
    _os.environ["ANVIL_INCLUDE_DIR"] = _include_dir

from . import _ffi  # noqa: E402
from ._ffi import Device, Function, InternalError, Tensor  # noqa: E402
from ._device import cl, cpu, cuda, device, opencl, vulkan  # noqa: E402
from ._tensor import empty, from_dlpack, tensor  # noqa: E402
from ._registry import (  # noqa: E402
    get_global_func,
    list_global_func_names,
    register_func,
    register_global_func,
    remove_global_func,
)
from . import runtime  # noqa: E402
from . import rpc  # noqa: E402

# TVM 0.27 spells these tvm.runtime.tensor, tvm.runtime.empty, ...: the same functions (after
# anvil.rpc wrapped tensor/empty, so remote devices work there too).
runtime.tensor, runtime.empty, runtime.from_dlpack = tensor, empty, from_dlpack
runtime.device, runtime.cpu, runtime.cuda = device, cpu, cuda
from . import tir, te  # noqa: E402
from .build_module import build, lower  # noqa: E402
from . import frontend  # noqa: E402
from .frontend import IRModule  # noqa: E402
from .driver import compile  # noqa: E402,A001 (TVM's tvm.compile)

# The C++ classes print under the names users import them by.
for _cls in (Device, Function, InternalError, Tensor):
    _cls.__module__ = "anvil"
for _cls in (runtime.Module, runtime.Object):
    _cls.__module__ = "anvil.runtime"
del _cls

__version__ = _ffi.__version__  # CMakeLists.txt's project(VERSION), compiled in

__all__ = [
    "Device",
    "Function",
    "IRModule",
    "InternalError",
    "Tensor",
    "build",
    "cl",
    "compile",
    "cpu",
    "cuda",
    "device",
    "empty",
    "from_dlpack",
    "frontend",
    "get_global_func",
    "list_global_func_names",
    "lower",
    "opencl",
    "register_func",
    "register_global_func",
    "remove_global_func",
    "runtime",
    "te",
    "tensor",
    "tir",
    "vulkan",
]
