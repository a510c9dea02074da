# anvil.lower and anvil.build (TVM's tvm.lower / tvm.build) and what built modules add to
# runtime.Module: get_source (inspect_source), time_evaluator, and running "c" modules (compiled on
# first call).
import itertools
import os
import tempfile
import threading

from . import _ffi
from ._device import device as _to_device
from ._ffi import Module
from .runtime.vm import BenchmarkResult
from .target import Target
from .te import Schedule
from .tir import PrimFunc

_te = _ffi.te
# TVM's name for Module.get_source (registered by the compiler: codegen/module_source.h).
_module_get_source = _ffi.get_global_func("runtime.ModuleGetSource")


def lower(inp, args=None, name="main", binds=None, simple_mode=False, dump_ir=False):
    """Lowers a schedule to a PrimFunc through the standard TIR passes; ``print()`` it to read it.

    Parameters
    ----------
    inp : te.Schedule
    args : list of te.Tensor and te.var
        The kernel's parameters in order: the inputs it reads, its outputs, and scalar
        variables (``alpha = te.var("alpha", dtype="float32")``), which are passed by value
        (``mod["main"](a, 2.5, b)``). Symbolic shape variables are bound from these tensors'
        shapes; one that is also listed (``[A, n, B]``) is a scalar parameter, and the tensors'
        shapes are checked against its value on each call (ValueError).
    name : str
        The function name (its symbol once built).
    simple_mode : bool
        Accepted for TVM compatibility; the text is always the plain form.
    dump_ir : bool
        Print the function after every pipeline stage to stderr (also: ``ANVIL_DUMP_IR=1``).

    Raises
    ------
    ValueError
        For an illegal schedule or arguments (a read placeholder missing from args, a variable
        the computation uses that is neither in args nor a shape variable of a tensor in args,
        an argument given twice, ...).
    TypeError
        For an argument that is neither a te.Tensor nor a te.var.
    """
    del simple_mode
    if binds:
        raise NotImplementedError("lower: binds is not supported")
    if isinstance(inp, PrimFunc):
        return inp
    if not isinstance(inp, Schedule):
        raise TypeError(f"lower: expected a te.Schedule, got {type(inp).__name__}")
    if args is None:
        raise TypeError("lower: args (the kernel's tensors and scalar vars) are required")
    return _te.lower(inp, list(args), name, bool(dump_ir))


def _target_text(target, target_host=None):
    """The canonical text of `target` (str, dict or Target; None = "llvm") with its host."""
    if target is None:
        target = "llvm"
    if target_host is None:
        return str(Target(target))
    return str(Target(target, host=target_host))


def build(inputs, args=None, target="llvm", target_host=None, name="main", binds=None, dump_ir=False):
    """Compiles kernels into a runtime module: ``mod[name](a, b, c)`` runs one.

    Parameters
    ----------
    inputs : te.Schedule, tir.PrimFunc, or a list of PrimFuncs
    args : list of te.Tensor and te.var
        With a schedule: the kernel's parameters in order (see :func:`lower`): tensors, and
        scalar variables called with Python ints / floats.
    target : str, dict or anvil.target.Target
        ``"llvm"`` (this CPU; options as ``"llvm -mcpu=... -fast-math"``) or ``"c"`` (C source
        compiled by the system C compiler when first called or exported), or a device target:
        ``"vulkan"`` (SPIR-V; loops bound to ``blockIdx``/``threadIdx``, see docs/vulkan.md).
        A device kind without a code generator yet (``cuda``, ``opencl``) raises
        NotImplementedError naming its kind.
    target_host : str, dict or anvil.target.Target
        The host target of a device target (TVM's argument); for ``llvm``/``c`` it must equal
        the target (or be None).
    name : str
        The kernel's name, with a schedule.

    Returns
    -------
    runtime.Module
        Kind ``"llvm"`` or ``"c"`` (for a device target, the host module, with the kernels in
        ``imported_modules``); also ``export_library``, ``get_source`` and
        ``time_evaluator``. Calls check the number, dtypes and shapes of their arguments
        (TypeError / ValueError), and the shapes against listed shape variables.
    """
    if binds:
        raise NotImplementedError("build: binds is not supported")
    text = _target_text(target, target_host)
    if isinstance(inputs, Schedule):
        if args is None:
            raise TypeError("build: args (the kernel's tensors) are required with a schedule")
        return _remember_c(_te.build_schedule(inputs, list(args), text, name, bool(dump_ir)))
    if isinstance(inputs, PrimFunc):
        inputs = [inputs]
    if isinstance(inputs, (list, tuple)) and inputs and all(isinstance(f, PrimFunc) for f in inputs):
        return _remember_c(_te.build_funcs(list(inputs), text, bool(dump_ir)))
    raise TypeError(f"build: expected a te.Schedule or PrimFuncs, got {type(inputs).__name__}")


# ---- runtime.Module additions --------------------------------------------------------------

# "c" modules cannot run in-process. Those that build() made are compiled (export_library) and
# loaded the first time one of their functions is asked for; hand-written C source modules
# (runtime.c_source_module) keep refusing (NotImplementedError). Keyed by the source text, so
# equal code is compiled once per process: source -> loaded library (None until compiled).
_built_c = {}
_built_c_lock = threading.Lock()
_temp_dir = None
_library_ids = itertools.count()


def _remember_c(mod):
    if mod.kind == "c":
        with _built_c_lock:
            _built_c.setdefault(_module_get_source(mod, "c"), None)
    return mod


def _runnable(mod):
    if mod.kind != "c":
        return mod
    source = _module_get_source(mod, "c")
    with _built_c_lock:
        if source not in _built_c:
            return mod
        lib = _built_c[source]
        if lib is None:
            global _temp_dir
            if _temp_dir is None:
                _temp_dir = tempfile.TemporaryDirectory(prefix="anvil-c-")
            path = os.path.join(_temp_dir.name, f"c_module_{next(_library_ids)}.so")
            mod.export_library(path)
            lib = _ffi.get_global_func("runtime.load_module")(path)
            _built_c[source] = lib
    return lib


_module_getitem = Module.__getitem__
_module_get_function = Module.get_function


def _getitem(self, name):
    return _module_getitem(_runnable(self), name)


def _get_function(self, name, query_imports=False):
    """The function `name` of this module; with ``query_imports=True`` also of its imports
    (depth-first). TVM's default: only the module itself (``mod[name]`` searches the imports too).
    Raises ValueError when no module defines it."""
    return _module_get_function(_runnable(self), name, query_imports)


def _get_source(self, fmt=""):
    """The module's code as text: LLVM modules ``"ll"`` (IR, the default) or ``"asm"``;
    C modules their C source. ``inspect_source`` is TVM 0.27's name for it."""
    return _module_get_source(self, fmt)


def _time_evaluator(self, func_name, dev, number=10, repeat=1, min_repeat_ms=0, cooldown_interval_ms=0,
                    repeats_to_cooldown=1, cache_flush_bytes=0, f_preproc=""):
    """A callable that times ``func_name`` (TVM's algorithm: a warm-up call, then `repeat`
    measurements of `number` calls each) and returns a BenchmarkResult (``.results`` in seconds
    per call, ``.mean``, ``.median``, ``.min``, ``.max``, ``.std``)."""
    if f_preproc:
        raise NotImplementedError("time_evaluator: f_preproc is not supported")
    make = _ffi.get_global_func("runtime.time_evaluator")
    timer = make(_runnable(self), func_name, _to_device(dev), number, repeat, min_repeat_ms, 100,
                 cooldown_interval_ms, repeats_to_cooldown, cache_flush_bytes)

    def evaluator(*args):
        return BenchmarkResult(timer(*args))

    return evaluator


Module.__getitem__ = _getitem
Module.get_function = _get_function
Module.get_source = _get_source
Module.inspect_source = _get_source
Module.time_evaluator = _time_evaluator

__all__ = ["build", "lower"]
