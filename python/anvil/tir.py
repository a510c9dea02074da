# anvil.tir: expressions of the loop-level IR (TVM's tvm.tir names): constants, variables, math
# intrinsics, integer division flavours, select/cast, and the PrimFunc that lower() returns.
"""Expressions of Anvil's tensor IR, with the names of ``tvm.tir``.

Python operators build expressions: ``+ - * / // % < <= > >= == !=`` and unary ``-``.
``//`` and ``%`` floor (as Python does); ``/`` of two integers is a TypeError (ambiguous: use
``//``, :func:`truncdiv` or a cast). Literals adopt the other operand's dtype (``x * 2`` keeps
``x``'s dtype); an int literal meeting a float expression becomes that float type, a float
literal meeting an integer expression is a TypeError (cast explicitly). ``and``/``or``/``not``
cannot work on expressions: use :func:`all`, :func:`any`, :func:`if_then_else`.
"""
import numpy as _np

from . import _ffi

_te = _ffi.te

PrimExpr = _te.PrimExpr
Var = _te.Var
PrimFunc = _te.PrimFunc


def const(value, dtype=None):
    """A constant: ``const(1)`` int32, ``const(1.5)`` float32, ``const(0, "float64")``."""
    return _te.const(value, dtype)


def _unary(name):
    def fn(x):
        return _te.call(name, [x])

    fn.__name__ = name
    fn.__doc__ = f"The intrinsic {name}(x), lane-wise on float expressions."
    return fn


exp = _unary("exp")
log = _unary("log")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
tanh = _unary("tanh")
erf = _unary("erf")
sigmoid = _unary("sigmoid")
floor = _unary("floor")
ceil = _unary("ceil")
round = _unary("round")  # noqa: A001 (TVM's name)
abs = _unary("abs")  # noqa: A001 (TVM's name)
fabs = abs
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
asin = _unary("asin")
acos = _unary("acos")
atan = _unary("atan")
sinh = _unary("sinh")
cosh = _unary("cosh")
asinh = _unary("asinh")
acosh = _unary("acosh")
atanh = _unary("atanh")
log2 = _unary("log2")
log10 = _unary("log10")
trunc = _unary("trunc")
# round is half to even already (TVM's nearbyint): one intrinsic, both names.
nearbyint = round


def _classify(name):
    def fn(x):
        return _te.call(name, [x])

    fn.__name__ = name
    fn.__doc__ = f"{name}(x): a bool expression (lanes of x), on float expressions."
    return fn


isnan = _classify("isnan")
isinf = _classify("isinf")
isfinite = _classify("isfinite")


def copysign(x, y):
    """|x| with the sign bit of y (float expressions)."""
    return _te.call("copysign", [x, y])


def bitwise_and(a, b):
    """a & b on int/uint expressions."""
    return _te.call("bitwise_and", [a, b])


def bitwise_or(a, b):
    """a | b on int/uint expressions."""
    return _te.call("bitwise_or", [a, b])


def bitwise_xor(a, b):
    """a ^ b on int/uint expressions."""
    return _te.call("bitwise_xor", [a, b])


def bitwise_not(a):
    """~a on an int/uint expression."""
    return _te.call("bitwise_not", [a])


def shift_left(x, k):
    """x << k on int/uint expressions; k >= the bit width (or negative) gives 0."""
    return _te.call("shift_left", [x, k])


def shift_right(x, k):
    """x >> k: arithmetic for int, logical for uint; k >= the bit width (or negative) gives 0,
    or -1 for a negative int x."""
    return _te.call("shift_right", [x, k])


def power(x, y):
    """x ** y (float expressions)."""
    return _te.call("pow", [x, y])


pow = power  # noqa: A001 (TVM's name)


def fma(a, b, c):
    """a * b + c, fused."""
    return _te.call("fma", [a, b, c])


def floordiv(a, b):
    """a // b rounded toward negative infinity (integer index arithmetic)."""
    return _te.binary("floordiv", a, b)


def floormod(a, b):
    """a % b with the sign of b (the remainder of floordiv)."""
    return _te.binary("floormod", a, b)


indexdiv = floordiv
indexmod = floormod


def truncdiv(a, b):
    """a / b rounded toward zero (C semantics) on integers."""
    return _te.binary("truncdiv", a, b)


def truncmod(a, b):
    """The remainder of truncdiv (sign of a)."""
    return _te.binary("truncmod", a, b)


def div(a, b):
    """C semantics: truncating on integers, true division on floats."""
    return _te.binary("truncdiv", a, b)


def min(a, b, *rest):  # noqa: A001 (TVM's name)
    """The element-wise minimum of two or more expressions."""
    out = _te.binary("min", a, b)
    for x in rest:
        out = _te.binary("min", out, x)
    return out


def max(a, b, *rest):  # noqa: A001 (TVM's name)
    """The element-wise maximum of two or more expressions."""
    out = _te.binary("max", a, b)
    for x in rest:
        out = _te.binary("max", out, x)
    return out


def if_then_else(cond, t, f):
    """cond ? t : f. Both sides are evaluated (the IR's select): a load on the untaken side must
    still be in bounds, so clamp its indices (padding: ``A[min(max(i - p, 0), n - 1)]``)."""
    return _te.select(cond, t, f)


def Select(cond, true_value, false_value):  # noqa: N802 (TVM's name)
    """cond ? true_value : false_value, both evaluated."""
    return _te.select(cond, true_value, false_value)


def Cast(dtype, value):  # noqa: N802 (TVM's name)
    """value converted to dtype."""
    return _te.cast(dtype, value)


def all(*args):  # noqa: A001 (TVM's name)
    """The conjunction of boolean expressions (also given as one list)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    if not args:
        raise ValueError("all: expected at least one condition")
    out = args[0]
    for x in args[1:]:
        out = _te.logical_and(out, x)
    return _te.to_expr(out)


def any(*args):  # noqa: A001 (TVM's name)
    """The disjunction of boolean expressions (also given as one list)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    if not args:
        raise ValueError("any: expected at least one condition")
    out = args[0]
    for x in args[1:]:
        out = _te.logical_or(out, x)
    return _te.to_expr(out)


def logical_not(x):
    """not x for a boolean expression."""
    return _te.logical_not(x)


def max_value(dtype):
    """The largest finite value of dtype, as a constant."""
    dt = _np.dtype(dtype)
    info = _np.finfo(dt) if dt.kind == "f" else _np.iinfo(dt)
    return _te.const(float(info.max) if dt.kind == "f" else int(info.max), str(dtype))


def min_value(dtype):
    """The lowest finite value of dtype, as a constant."""
    dt = _np.dtype(dtype)
    info = _np.finfo(dt) if dt.kind == "f" else _np.iinfo(dt)
    return _te.const(float(info.min) if dt.kind == "f" else int(info.min), str(dtype))


for _cls in (PrimExpr, Var, PrimFunc):
    _cls.__module__ = "anvil.tir"
del _cls

__all__ = [n for n in dir() if not n.startswith("_") and n != "_np"]
