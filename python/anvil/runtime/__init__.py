# anvil.runtime: modules (load_module, export_library), params, runtime objects, threads and memory.
"""The Anvil runtime: modules, parameters and runtime queries.

Values crossing into C++ convert as follows: None, bool, int, float, str, bytes stay themselves;
Device, Tensor, Function and Module pass as they are; lists and tuples become arrays (returned as
lists); ShapeTuple becomes a shape (returned as ShapeTuple, a tuple); numpy arrays are passed
without a copy as CPU tensors sharing the array's memory (read-only arrays are copied); other
objects with ``__dlpack__`` are imported without a copy; other callables become Functions. Data
types come back as strings such as ``"float32"``.

``anvil.runtime.tensor``, ``empty``, ``from_dlpack``, ``device``, ``cpu`` and ``cuda`` are the
functions of the same names in ``anvil`` (TVM 0.27's ``tvm.runtime`` has them too); the package's
``__init__`` sets them here.
"""
from .._ffi import Device, Function, Module, Object, Tensor
from .memory import allocator_bytes_held, num_threads, release_unused
from .module import c_source_module, load_module
from .params import load_params, params_module, save_params
from .shape import ShapeTuple
from .vm import BenchmarkResult, ExecBuilder, Executable, Report, VirtualMachine

__all__ = [
    "BenchmarkResult",
    "Device",
    "ExecBuilder",
    "Executable",
    "Function",
    "Module",
    "Object",
    "Report",
    "ShapeTuple",
    "Tensor",
    "VirtualMachine",
    "allocator_bytes_held",
    "c_source_module",
    "load_module",
    "load_params",
    "num_threads",
    "params_module",
    "release_unused",
    "save_params",
]
