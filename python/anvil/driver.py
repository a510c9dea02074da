# anvil.compile: a whole model (IRModule from anvil.frontend) -> a VM Executable whose kernels are
# imported into it, through the C++ pipeline (src/anvil/pipeline/compile.h). TVM 0.27's
# tvm.compile(mod, target) for Relax modules.
import os

from . import _ffi
from ._ffi import IRModule
from .runtime.vm import Executable
from .target import Target


def compile(mod, target="llvm", opt_level=2, dump_ir=None, progress=False):  # noqa: A001 (TVM's name)
    """Compile a model into an Executable: VM code for the graph plus its kernels.

    Parameters
    ----------
    mod : IRModule
        From ``anvil.frontend.from_onnx``.
    target : str, dict or anvil.target.Target
        ``"llvm"`` (this CPU; options as ``"llvm -mcpu=..."``). ``"c"`` is not yet supported
        by the operator library's schedules.
    opt_level : int
        0 to 3 (graph passes such as fusion and folding from 1; 2 is the default).
    dump_ir : str or os.PathLike, optional
        A directory that receives the graph IR after each stage (created when missing).
    progress : bool
        Print each stage (import, passes, kernels n/N, link) with its time to stderr.

    Returns
    -------
    anvil.runtime.Executable
        Run it with ``anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*inputs)``; write it
        to one shared library with ``exe.export_library("model.so")``.

    Raises
    ------
    NotImplementedError
        For an operator with no implementation for the target.
    ValueError
        For an opt_level outside 0..3 or an ill-formed module.
    """
    if not isinstance(mod, IRModule):
        raise TypeError(f"compile: expected an anvil.IRModule (from anvil.frontend.from_onnx), got "
                        f"{type(mod).__name__}")
    if isinstance(opt_level, bool) or not isinstance(opt_level, int):
        raise TypeError(f"compile: opt_level must be an int 0..3, got {opt_level!r}")
    if not 0 <= opt_level <= 3:
        raise ValueError(f"compile: opt_level must be 0..3, got {opt_level}")
    text = str(Target("llvm" if target is None else target))
    dump = os.fspath(dump_ir) if dump_ir is not None else ""
    return Executable(_ffi._compile(mod, text, opt_level, dump, bool(progress)))


__all__ = ["compile"]
