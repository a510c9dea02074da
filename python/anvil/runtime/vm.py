# The virtual machine from Python: VirtualMachine (TVM's relax.VirtualMachine API), Executable,
# ExecBuilder for writing VM programs by hand, and the results of time_evaluator and profile.
"""Run VM executables: ``anvil.runtime.VirtualMachine``, ``Executable`` and ``ExecBuilder``.

Differences from TVM worth knowing:

* Python ``int``, ``float`` and ``bool`` arguments reach the VM as scalars (TVM turns them into
  0-d tensors). Pass ``anvil.tensor(np.int32(3))`` when a kernel wants a tensor.
* Tuples returned by a VM function come back as Python lists.
* ``time_evaluator`` has no ``f_preproc``; ``profile`` is always available (no special
  ``profile=True`` VM) and reports per call site (see ``Report``).
"""
import json
import math
import statistics

from .. import _ffi
from .._device import cpu, device as _to_device
from .._ffi import Module, Object

_NAIVE, _POOLED = 1, 2  # TVM's allocator codes, accepted in memory_cfg
_ALLOCATOR_NAMES = {_NAIVE: "naive", _POOLED: "pooled", "naive": "naive", "pooled": "pooled"}


class Executable:
    """A VM program: functions, constants and code, plus the kernels it imports.

    Parameters
    ----------
    mod : Module or Executable
        A module of kind ``"vm.executable"``, or a loaded library whose import tree holds one.
    """

    def __init__(self, mod):
        if isinstance(mod, Executable):
            mod = mod.mod
        if not isinstance(mod, Module):
            raise TypeError(f"Executable: expected a runtime.Module, got {type(mod).__name__}")
        self.mod = _ffi._vm_find_executable(mod)

    def as_text(self):
        """The program listing: one line per instruction, then the constants."""
        return self.mod["as_text"]()

    def stats(self):
        """Counts of functions, instructions and constants."""
        return self.mod["stats"]()

    def list_functions(self):
        """The names of the VM functions."""
        return self.mod.list_functions()

    @property
    def imports(self):
        """The modules whose kernels the program calls."""
        return self.mod.imports

    def import_module(self, mod):
        """Add a kernel library (or any module) whose functions the program may call."""
        self.mod.import_module(mod)

    def save_to_bytes(self):
        """The versioned binary form of the program (not of its imports)."""
        return _ffi._vm_executable_save(self.mod)

    @staticmethod
    def load_from_bytes(data):
        """Rebuild an Executable from save_to_bytes() output; ValueError when it is corrupt."""
        return Executable(_ffi.get_global_func("module.loader.vm.executable")(bytes(data)))

    def export_library(self, file_name, **kwargs):
        """Pack the program and its imports into one shared library (see Module.export_library).

        ``anvil.runtime.load_module(file_name)`` gives back a module that VirtualMachine accepts.
        """
        self.mod.export_library(file_name, **kwargs)

    def __repr__(self):
        return f"<anvil.runtime.Executable {self.stats()}>"


def _memory_config(memory_cfg):
    """(default_kind, [(device_type, kind), ...]) from VirtualMachine's memory_cfg."""
    def kind_name(kind):
        if kind not in _ALLOCATOR_NAMES:
            raise ValueError(f"VirtualMachine: unknown allocator {kind!r} (expected 'naive' or 'pooled')")
        return _ALLOCATOR_NAMES[kind]

    if memory_cfg is None:
        return "pooled", []
    if isinstance(memory_cfg, (str, int)):
        return kind_name(memory_cfg), []
    if not isinstance(memory_cfg, dict):
        raise TypeError(f"VirtualMachine: memory_cfg must be None, a str or a dict, got {type(memory_cfg).__name__}")
    per_type = [(_to_device(dev).device_type, kind_name(kind)) for dev, kind in memory_cfg.items()]
    return "pooled", per_type


class VirtualMachine:
    """Runs an executable, as TVM's ``relax.VirtualMachine``.

    Parameters
    ----------
    rt_mod : Executable, Module or anvil.rpc.RemoteModule
        The program: an Executable, or a module holding one (what load_module returns), or a
        library loaded on an RPC server (``session.load_module("model.so")``): the VM then runs
        there, on `device` = ``session.cpu()``, and takes and returns RemoteTensors
        (``time_evaluator`` times on the server; ``profile`` is local only).
    device : Device, str or list of them
        Where the program runs; the host CPU is appended when the last device is not a CPU.
    memory_cfg : None, str or dict
        None: pooled allocators everywhere; ``"naive"`` or ``"pooled"``: that allocator on every
        device; a dict from device (``anvil.cpu(0)`` or ``"cpu"``) to allocator, pooled elsewhere.

    ``vm["main"](x, w)`` calls a function. Arguments convert as everywhere in anvil.runtime; note
    that Python scalars stay scalars (TVM makes 0-d tensors of them).
    """

    NAIVE_ALLOCATOR = _NAIVE
    POOLED_ALLOCATOR = _POOLED

    def __init__(self, rt_mod, device=None, memory_cfg=None):
        self._remote = _remote_module_type(rt_mod) is not None
        if self._remote:
            self.module = _remote_vm(rt_mod, device, memory_cfg)
            return
        mod = rt_mod.mod if isinstance(rt_mod, Executable) else rt_mod
        if not isinstance(mod, Module):
            raise TypeError(f"VirtualMachine: expected an Executable, a runtime.Module or an anvil.rpc.RemoteModule, "
                            f"got {type(rt_mod).__name__}")
        if device is None:
            devices = [cpu(0)]
        elif isinstance(device, (list, tuple)):
            devices = [_to_device(d) for d in device]
        else:
            devices = [_to_device(device)]
        default_kind, per_type = _memory_config(memory_cfg)
        self.module = _ffi._vm_create(mod, devices, default_kind, per_type)

    def __getitem__(self, name):
        """The VM function (or saved function, or method) `name` as a Function."""
        return self.module[name]

    def invoke_closure(self, closure, *args):
        """Call a closure (or function) value returned by the program."""
        return self.module["invoke_closure"](closure, *args)

    def save_function(self, func_name, saved_name, *args, include_return=True, **kwargs):
        """Bind arguments so that ``vm[saved_name]()`` calls `func_name` with them (for timing).

        Keyword arguments are matched to parameter names. `include_return` is accepted for TVM
        compatibility; the saved function always returns the result.
        """
        del include_return
        self.module["save_function"](func_name, saved_name, *self._bind(func_name, args, kwargs))

    def set_input(self, func_name, *args, **kwargs):
        """Store the inputs of `func_name` for invoke_stateful; keyword arguments by parameter name."""
        self.module["set_input"](func_name, *self._bind(func_name, args, kwargs))

    def invoke_stateful(self, func_name):
        """Run `func_name` on the inputs from set_input; the result is kept for get_outputs."""
        self.module["invoke_stateful"](func_name)

    def get_outputs(self, func_name):
        """The result of the last invoke_stateful(func_name) (tuples come back as lists)."""
        return self.module["get_output"](func_name)

    def get_output(self, func_name, *indices):
        """One item of the last result: ``get_output("main", 1, 0)`` is ``get_outputs("main")[1][0]``."""
        out = self.get_outputs(func_name)
        for depth, index in enumerate(indices):
            if not isinstance(out, list):
                raise IndexError(f"get_output: the output of {func_name!r} has no tuple at depth {depth}")
            if not -len(out) <= index < len(out):
                raise IndexError(f"get_output: index {index} is out of range for a tuple of {len(out)} items")
            out = out[index]
        return out

    def time_evaluator(self, func_name, dev, number=10, repeat=1, min_repeat_ms=0,
                       limit_zero_time_iterations=100, cooldown_interval_ms=0, repeats_to_cooldown=1,
                       cache_flush_bytes=0, f_preproc=""):
        """A callable that times `func_name` and returns a BenchmarkResult (TVM's algorithm).

        Time ``"invoke_stateful"`` (called with the function name) after set_input, or a name
        from save_function, to leave argument conversion out of the measurement.
        """
        if self._remote:  # timed on the server (runtime.RPCTimeEvaluator): no network in the numbers
            return self.module.time_evaluator(func_name, dev, number, repeat, min_repeat_ms,
                                              limit_zero_time_iterations, cooldown_interval_ms, repeats_to_cooldown,
                                              cache_flush_bytes, f_preproc)
        if f_preproc:
            raise NotImplementedError("time_evaluator: f_preproc is not supported")
        timer = self.module["time_evaluator"](func_name, _to_device(dev), number, repeat, min_repeat_ms,
                                              limit_zero_time_iterations, cooldown_interval_ms,
                                              repeats_to_cooldown, cache_flush_bytes)

        def evaluator(*args):
            return BenchmarkResult(timer(*args))

        return evaluator

    def profile(self, func_name, *args):
        """Run `func_name` once to warm up, then once instrumented; returns a Report.

        With no `args`, the inputs from set_input are used.
        """
        if self._remote:
            raise NotImplementedError("VirtualMachine.profile: not available on an RPC session yet; time the "
                                      "function with time_evaluator instead")
        return Report(self.module["profile"](func_name, *args))

    def _bind(self, func_name, args, kwargs):
        """Positional arguments for `func_name` from args plus keyword arguments by parameter name."""
        if not kwargs:
            return list(args)
        arity = self.module["get_function_arity"](func_name)
        try:
            names = [self.module["get_function_param_name"](func_name, i) for i in range(arity)]
        except IndexError:
            raise TypeError(f"{func_name!r} has no parameter names; pass its arguments by position") from None
        if len(args) > arity:
            raise TypeError(f"{func_name!r} takes {arity} arguments but {len(args)} were given")
        missing = object()
        full = list(args) + [missing] * (arity - len(args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"{func_name!r} has no parameter named {key!r} (parameters: {', '.join(names)})")
            index = names.index(key)
            if full[index] is not missing:
                raise TypeError(f"{func_name!r} got multiple values for parameter {key!r}")
            full[index] = value
        absent = [names[i] for i, value in enumerate(full) if value is missing]
        if absent:
            raise TypeError(f"{func_name!r} is missing arguments: {', '.join(absent)}")
        return full


def _remote_module_type(obj):
    """anvil.rpc.RemoteModule when `obj` is one (anvil.rpc imports this file, so look it up late)."""
    import sys

    rpc = sys.modules.get(__name__.rsplit(".", 2)[0] + ".rpc")
    remote = getattr(rpc, "RemoteModule", None)
    return remote if remote is not None and isinstance(obj, remote) else None


def _remote_vm(rexec, device, memory_cfg):
    """The VM module on the server, over a loaded executable (TVM: rexec["vm_load_executable"]())."""
    devices = device if isinstance(device, (list, tuple)) else [device]
    for dev in devices:
        session = getattr(dev, "rpc_session", None)
        if session is None:
            raise TypeError(f"VirtualMachine: a remote module runs on a device of its session (session.cpu()), "
                            f"not {dev!r}")
        if session is not rexec._session:
            raise ValueError("VirtualMachine: the device belongs to another RPC session than the module")
        if dev.device_type != cpu(0).device_type:
            raise NotImplementedError(f"VirtualMachine: remote execution runs on the server's CPU only for now, "
                                      f"got {dev!r}")
    if memory_cfg not in (None, "pooled", _POOLED):
        raise NotImplementedError("VirtualMachine: memory_cfg on an RPC session (the server uses pooled allocators)")
    return rexec["vm_load_executable"]()


class BenchmarkResult:
    """Seconds per call for each repeat of a time_evaluator run, with TVM's summary statistics."""

    def __init__(self, results):
        self.results = tuple(float(r) for r in results)
        self.mean = statistics.fmean(self.results) if self.results else math.nan
        self.median = statistics.median(self.results) if self.results else math.nan
        self.min = min(self.results, default=math.nan)
        self.max = max(self.results, default=math.nan)
        self.std = statistics.pstdev(self.results) if self.results else math.nan

    def __repr__(self):
        return (f"BenchmarkResult(min={self.min:.6g}, mean={self.mean:.6g}, median={self.median:.6g}, "
                f"max={self.max:.6g}, std={self.std:.6g}, results={len(self.results)})")

    def __str__(self):
        ms = [x * 1e3 for x in (self.mean, self.median, self.max, self.min, self.std)]
        return ("Execution time summary:\n"
                " mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)  \n"
                + "".join(f"{v:^12.4f} " for v in ms))


class Report:
    """The result of VirtualMachine.profile: one row per call site of a packed function.

    ``str(report)`` and ``table()`` give an aligned table; ``csv()``, ``json()`` and
    ``chrome_trace()`` (load it in chrome://tracing or ui.perfetto.dev) serve scripts.
    """

    def __init__(self, obj):
        if not isinstance(obj, Object):
            raise TypeError(f"Report: expected a vm.ProfileReport object, got {type(obj).__name__}")
        self._obj = obj

    def table(self):
        return _ffi.get_global_func("vm.profile_report.table")(self._obj)

    def csv(self):
        return _ffi.get_global_func("vm.profile_report.csv")(self._obj)

    def chrome_trace(self):
        return _ffi.get_global_func("vm.profile_report.chrome_trace")(self._obj)

    def json(self):
        return _ffi.get_global_func("vm.profile_report.json")(self._obj)

    @property
    def rows(self):
        """The rows as dicts (name, call_site, calls, total_us, mean_us, percent, device, argument_shapes)."""
        return json.loads(self.json())["rows"]

    def __str__(self):
        return self.table()

    def __repr__(self):
        return f"<anvil.runtime.vm.Report of {len(self.rows)} call sites>"


def _check_register(value, what):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what}: expected a register number (int), got {type(value).__name__}")
    return value


class ExecBuilder:
    """Writes VM programs by hand (the graph compiler uses the same C++ builder).

    Call arguments are ``(kind, value)`` tuples, most easily made by the helpers:

    ========================  ===============================================
    ``ExecBuilder.reg(3)``    register %3 (``("reg", 3)``)
    ``ExecBuilder.imm(5)``    the integer 5 (``("imm", 5)``)
    ``ExecBuilder.const(0)``  constant 0 from add_constant (``("const", 0)``)
    ``ExecBuilder.func("f")`` the function f as a value (``("func", "f")``)
    ``ExecBuilder.vm()``      the VM itself, for builtins (also the string ``"vm"``)
    ``ExecBuilder.void()``    null (also ``None``)
    ========================  ===============================================

    A bare int is refused (is it a register or a value?). Destinations and results are register
    numbers, or None to drop the result. Mistakes raise while building, not at run time::

        b = ExecBuilder()
        with b.function("main", ["x"]):
            b.emit_call("vm.builtin.add", [b.reg(0), b.imm(1)], dst=1)
            b.emit_ret(1)
        exe = b.get()
    """

    def __init__(self):
        self._b = _ffi._ExecBuilder()

    @staticmethod
    def reg(index):
        return ("reg", _check_register(index, "ExecBuilder.reg"))

    @staticmethod
    def imm(value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"ExecBuilder.imm: expected an int, got {type(value).__name__}")
        return ("imm", value)

    @staticmethod
    def const(index):
        return ("const", _check_register(index, "ExecBuilder.const"))

    @staticmethod
    def func(name):
        return ("func", name)

    @staticmethod
    def vm():
        return ("vm", 0)

    @staticmethod
    def void():
        return ("void", 0)

    def declare_function(self, name, param_names=()):
        """Declare a VM function ahead of its body (recursion, forward calls); returns its index."""
        return self._b.declare_function(name, list(param_names))

    def begin_function(self, name, param_names=()):
        """Start a function; parameters occupy registers 0..n-1. Returns its index."""
        return self._b.begin_function(name, list(param_names))

    def end_function(self):
        self._b.end_function()

    def function(self, name, param_names=()):
        """Context manager: begin_function on entry, end_function on a normal exit."""
        return _FunctionScope(self, name, param_names)

    def function_index(self, name):
        """Index of a function: a declared VM function, else a packed function entry."""
        return self._b.function_index(name)

    def emit_call(self, func, args=(), dst=None):
        """Emit ``dst = func(args...)``; `func` is a name or an index. Returns the instruction index."""
        index = func if isinstance(func, int) and not isinstance(func, bool) else self.function_index(func)
        return self._b.emit_call(index, [self._arg(a) for a in args], self._dst(dst, "emit_call: dst"))

    def emit_ret(self, result):
        """Return register `result` (None returns null)."""
        return self._b.emit_ret(self._dst(result, "emit_ret: result"))

    def emit_goto(self, pc_offset):
        """Jump by `pc_offset` instructions (relative, non-zero; patch later with patch_jump)."""
        return self._b.emit_goto(pc_offset)

    def emit_if(self, cond, false_offset):
        """If register `cond` is true continue, else jump by `false_offset` (> 1)."""
        return self._b.emit_if(self._dst(cond, "emit_if: cond"), false_offset)

    def patch_jump(self, instr_index, offset):
        """Set the offset of an earlier goto/if (forward jumps)."""
        self._b.patch_jump(instr_index, offset)

    def next_instr(self):
        """The index the next emitted instruction will get."""
        return self._b.next_instr()

    def add_constant(self, value):
        """Add a constant (tensor, numpy array, shape, str, int, float, bool, dtype, device); returns its index."""
        return self._b.add_constant(value)

    def get(self):
        """Verify the program and return it as an Executable; the builder is empty afterwards."""
        return Executable(self._b.get())

    def _dst(self, reg, what):
        if reg is None or reg == ("void", 0):  # None and ExecBuilder.void() both drop the result
            return None
        if isinstance(reg, tuple) and len(reg) == 2 and reg[0] == "reg":
            reg = reg[1]
        return _check_register(reg, what)

    def _arg(self, arg):
        if arg is None:
            return ("void", 0)
        if isinstance(arg, str) and arg == "vm":
            return ("vm", 0)
        if not isinstance(arg, tuple) or len(arg) != 2 or not isinstance(arg[0], str):
            raise TypeError(f"ExecBuilder: a call argument must be a (kind, value) tuple such as ExecBuilder.reg(0), "
                            f"ExecBuilder.imm(5) or 'vm', got {arg!r}")
        kind, value = arg
        if kind == "func" and isinstance(value, str):
            return ("func", self.function_index(value))
        if kind == "imm" and not (-(1 << 55) < value < (1 << 55)):
            return self._b.int_arg(value)  # too wide for an immediate: becomes a constant
        return (kind, value)


class _FunctionScope:
    def __init__(self, builder, name, param_names):
        self._builder, self._name, self._params = builder, name, param_names

    def __enter__(self):
        return self._builder.begin_function(self._name, self._params)

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self._builder.end_function()
        return False


__all__ = ["BenchmarkResult", "ExecBuilder", "Executable", "Report", "VirtualMachine"]
