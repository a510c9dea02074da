# Runtime modules: loading kernel libraries, C source modules and export_library.
import os

from .. import _ffi
from .._ffi import Module


def load_module(path):
    """Load a kernel library written by export_library (or by hand, following the kernel ABI).

    Parameters
    ----------
    path : str or os.PathLike
        The library file. A name without a directory (``"k.so"``) is the file in the working
        directory, as in TVM: the library search path is never consulted.

    Returns
    -------
    Module
        The root of the module tree packed in the library.

    Raises
    ------
    OSError
        When the file is missing, is not a loadable shared library (the ELF checks of
        ``docs/abi.md``) or was built by TVM rather than Anvil.
    """
    return _ffi.get_global_func("runtime.load_module")(os.fspath(path))


def c_source_module(source, function_names):
    """Wrap C99 source that follows the kernel ABI (``anvil/runtime/c_abi.h``) as a module.

    The module cannot run by itself: export_library compiles it into a shared library.

    Parameters
    ----------
    source : str
        Defines each kernel as ``int32_t __anvil_fn_<name>(const AnvilValue*, int32_t, AnvilValue*)``.
    function_names : list of str
        The kernel names the source defines.

    Returns
    -------
    Module
        A module of kind ``"c"``.
    """
    return _ffi.c_source_module(source, list(function_names))


def _export_library(self, file_name, compiler=None, options=None, keep_temp_dir=False):
    """Compile this module tree into one shared library that load_module reads back.

    Host code (C source modules) is compiled with the system C compiler (`compiler`, default
    ``$CC`` or ``cc``); the other modules (params, ...) are packed into the library.

    Parameters
    ----------
    file_name : str or os.PathLike
        The ``.so`` to write.
    compiler : str, optional
    options : list of str, optional
        Extra compiler and linker flags.
    keep_temp_dir : bool
        Keep the generated sources for inspection.

    Raises
    ------
    ValueError
        When the tree holds no host code or a module that cannot be packed.
    RuntimeError
        When compilation fails (the message holds the compiler's output).
    """
    self._export_library(os.fspath(file_name), compiler, list(options or []), keep_temp_dir)


Module.export_library = _export_library
