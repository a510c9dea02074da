# The global function registry: what C++, RPC peers and the VM see by name.
import atexit

from . import _ffi
from ._ffi import Function

# Names registered from Python; dropped at exit so the registry (which C++ destroys only after the
# interpreter is gone) releases their Python objects while Python still runs.
_registered_from_python = set()


def get_global_func(name, allow_missing=False):
    """Look up a global function.

    Parameters
    ----------
    name : str
        The registered name, e.g. ``"testing.echo"``.
    allow_missing : bool
        Return None instead of raising when the name is not registered.

    Returns
    -------
    Function or None

    Raises
    ------
    ValueError
        When the function is missing and `allow_missing` is False.
    """
    return _ffi.get_global_func(name, allow_missing)


def register_func(func_name, f=None, override=False):
    """Register a Python callable (or a Function) as a global function.

    Usable directly, ``register_func("my.add", add)``, or as a decorator,
    ``@register_func("my.add")`` or ``@register_func`` (the function's ``__name__`` is used).
    C++ calls the callable with the GIL held; an exception it raises surfaces in the Python
    caller as the same exception.

    Parameters
    ----------
    func_name : str or callable
        The name to register under, or the callable itself (registered under its __name__).
    f : callable, optional
        The function to register; when omitted a decorator is returned.
    override : bool
        Replace an existing function of the same name instead of raising ValueError.

    Returns
    -------
    callable
        `f` itself, or the decorator.
    """
    if callable(func_name) and f is None:
        f, func_name = func_name, func_name.__name__
    if not isinstance(func_name, str):
        raise TypeError(f"register_func: expected a str name, got {type(func_name).__name__}")

    def register(func):
        _ffi.register_func(func_name, func, override)
        if not isinstance(func, Function):
            _registered_from_python.add(func_name)
        return func

    return register(f) if f is not None else register


# TVM 0.27's name (tvm.register_global_func); the same function.
register_global_func = register_func


def remove_global_func(name):
    """Remove a global function; return True when it was registered."""
    _registered_from_python.discard(name)
    return _ffi.remove_global_func(name)


def list_global_func_names(prefix=""):
    """Return the sorted names of global functions starting with `prefix` ("" lists all)."""
    return _ffi.list_global_func_names(prefix)


@atexit.register
def _drop_python_functions():
    for name in list(_registered_from_python):
        _ffi.remove_global_func(name)
    _registered_from_python.clear()
