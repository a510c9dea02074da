# anvil.te: tensor expressions and schedules with TVM's names (tvm.te): placeholder, compute,
# reduce_axis, sum/max/min, create_schedule, Stage primitives, cache_read/cache_write.
"""Tensor expressions: describe a kernel as computations over tensors, schedule its loops,
then :func:`anvil.lower` it to loop-level IR or :func:`anvil.build` it into a runnable module.

>>> n = te.var("n")
>>> A = te.placeholder((n, 64), name="A")
>>> k = te.reduce_axis((0, 64), name="k")
>>> B = te.compute((n,), lambda i: te.sum(A[i, k] * 2.0, axis=k), name="B")
>>> s = te.create_schedule(B.op)
>>> xo, xi = s[B].split(B.op.axis[0], factor=8)

Tensors are their own operations here (``B.op is B``'s operation: the same object kinds), so
``C.op.axis``, ``s[C]`` and ``s[C.op]`` all work as in TVM. Illegal schedules raise ValueError
with the stage and axis named.
"""
import builtins as _builtins
import inspect as _inspect

from . import _ffi
from .tir import (  # noqa: F401 (re-exported under TVM's te names)
    PrimExpr,
    Var,
    abs,
    acos,
    acosh,
    all,
    any,
    asin,
    asinh,
    atan,
    atanh,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    ceil,
    const,
    copysign,
    cos,
    cosh,
    div,
    erf,
    exp,
    fabs,
    floor,
    floordiv,
    floormod,
    fma,
    if_then_else,
    indexdiv,
    indexmod,
    isfinite,
    isinf,
    isnan,
    log,
    log10,
    log2,
    max_value,
    min_value,
    nearbyint,
    pow,
    power,
    round,
    rsqrt,
    shift_left,
    shift_right,
    sigmoid,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
    truncdiv,
    truncmod,
)
from . import tir as _tir

_te = _ffi.te

Tensor = _te.Tensor
IterVar = _te.IterVar
Stage = _te.Stage
Schedule = _te.Schedule


def var(name="tindex", dtype="int32"):
    """A scalar variable (int32 unless `dtype` says otherwise): a symbolic shape dimension
    ``n = te.var("n")``, or a scalar kernel parameter ``alpha = te.var("alpha", dtype="float32")``
    listed among the tensors in ``anvil.lower`` / ``anvil.build`` args and passed by value."""
    return _te.var(name, dtype)


def size_var(name="size", dtype="int32"):
    """A variable known to be non-negative (a shape dimension)."""
    return _te.size_var(name, dtype)


def placeholder(shape, dtype=None, name="placeholder"):
    """An input tensor of the given shape (ints or expressions) and dtype (default float32)."""
    return _te.placeholder(shape, dtype or "float32", name)


def _positional_names(fcompute):
    """The names of fcompute's required positional parameters, or None when it takes *args."""
    try:
        params = _inspect.signature(fcompute).parameters.values()
    except (TypeError, ValueError):
        return None
    if _builtins.any(p.kind == p.VAR_POSITIONAL for p in params):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]


def compute(shape, fcompute, name="compute", tag="", attrs=None):
    """A tensor whose element at (i, j, ...) is fcompute(i, j, ...).

    fcompute takes one index variable per dimension (the axes take its parameter names) and
    returns an expression, or a reduction (te.sum / te.max / te.min) as its whole result. `tag` and `attrs` are accepted for TVM
    compatibility and ignored.
    """
    del tag, attrs
    dims = 1 if not isinstance(shape, (list, tuple)) else len(shape)
    names = _positional_names(fcompute)
    if names is not None and len(names) != dims:
        raise ValueError(f"compute '{name}': fcompute takes {len(names)} index arguments but the shape has {dims} "
                         "dimensions")
    # The axes are named after fcompute's parameters, as in TVM (C.op.axis[0].var.name == "i").
    return _te.compute(shape, fcompute, name, names or [])


def reduce_axis(dom, name="rv"):
    """A reduction axis over ``dom = (lo, hi)`` (hi exclusive), e.g. ``te.reduce_axis((0, n), "k")``."""
    if isinstance(dom, (list, tuple)) and len(dom) == 2:
        lo, hi = dom
    else:
        raise TypeError(f"reduce_axis: dom must be a (lo, hi) pair, got {dom!r}")
    return _te.reduce_axis(lo, hi, name)


class ThreadAxis:
    """A GPU thread or block index (``te.thread_axis("threadIdx.x")``) for Stage.bind."""

    def __init__(self, tag, dom=None):
        self.thread_tag = tag
        self.dom = dom

    def __repr__(self):
        return f"ThreadAxis({self.thread_tag!r})"


def thread_axis(dom=None, tag="", name=""):
    """``thread_axis("threadIdx.x")`` or ``thread_axis((0, 64), "threadIdx.x")``."""
    if isinstance(dom, str):
        dom, tag = None, dom
    if not tag:
        raise ValueError("thread_axis: a thread tag is needed (blockIdx.x, threadIdx.y, vthread, ...)")
    del name
    return ThreadAxis(tag, dom)


def _is_axis_list(x):
    if isinstance(x, IterVar):
        return True
    return isinstance(x, (list, tuple)) and len(x) > 0 and _builtins.all(isinstance(a, IterVar) for a in x)


def _reducer(kind, elementwise):
    def reducer(expr, axis=None, where=None, *args, init=None):
        if init is not None:
            raise NotImplementedError(f"te.{kind}: init is not supported")
        if axis is not None and not args and _is_axis_list(axis):
            return _te.reduce(kind, expr, axis, where)
        if elementwise is None or axis is None:
            raise TypeError(f"te.{kind}: expected axis=<reduce_axis> or a list of them")
        # te.max(a, b, ...): the element-wise operation, as in TVM.
        rest = [x for x in (where,) + args if x is not None]
        return elementwise(expr, axis, *rest)

    reducer.__name__ = kind
    reducer.__doc__ = (f"te.{kind}(expr, axis=k or [k1, k2], where=None): the {kind} of expr over the reduction "
                       "axes; must be the whole body of a compute.")
    return reducer


sum = _reducer("sum", None)  # noqa: A001 (TVM's name)
max = _reducer("max", _tir.max)  # noqa: A001 (TVM's name)
min = _reducer("min", _tir.min)  # noqa: A001 (TVM's name)


def create_schedule(ops):
    """A schedule for the given output operation(s): ``te.create_schedule(C.op)`` or a list."""
    return _te.create_schedule(ops if isinstance(ops, (list, tuple)) else [ops])


# ---- Tensor ------------------------------------------------------------------------------


class _TensorSlice:
    """A[i] of a tensor with more dimensions: index it further (A[i][j])."""

    def __init__(self, tensor, indices):
        self.tensor = tensor
        self.indices = indices

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        return _index(self.tensor, self.indices + index)


def _index(tensor, indices):
    if len(indices) < tensor.ndim:
        return _TensorSlice(tensor, indices)
    return tensor._index(indices)


def _tensor_getitem(self, index):
    return _index(self, index if isinstance(index, tuple) else (index,))


def _tensor_repr(self):
    kind = "compute" if self.is_compute else "placeholder"
    return f"Tensor(name={self.name!r}, shape={list(self.shape)}, dtype={self.dtype!r}, {kind})"


def _output(self, index):
    if index != 0:
        raise IndexError(f"operation '{self.name}' has one output, not {index + 1}")
    return self


Tensor.__getitem__ = _tensor_getitem
Tensor.__repr__ = _tensor_repr
Tensor.__str__ = _tensor_repr
Tensor.output = _output
Tensor.num_outputs = property(lambda self: 1)


# ---- Stage -------------------------------------------------------------------------------


def _fuse(self, *args):
    """Fuses consecutive leaf axes (outer first) into one; returns the fused axis."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if not args:
        raise ValueError(f"{self!r}: fuse needs at least one axis")
    fused = args[0]
    for axis in args[1:]:
        fused = self._fuse2(fused, axis)
    return fused


def _reorder(self, *args):
    """Orders the given leaf axes as listed (the others keep their places)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    self._reorder(list(args))


def _bind(self, ivar, thread_ivar):
    """Binds a loop to a GPU thread index: ``s[C].bind(xo, te.thread_axis("blockIdx.x"))``."""
    tag = thread_ivar.thread_tag if isinstance(thread_ivar, ThreadAxis) else thread_ivar
    if not isinstance(tag, str):
        raise TypeError(f"bind: expected te.thread_axis(...) or a tag string, got {type(thread_ivar).__name__}")
    self._bind(ivar, tag)


def _pragma(self, var, pragma_type, pragma_value=None):
    """Annotates a loop with ``pragma_<pragma_type> = pragma_value``."""
    self._pragma(var, pragma_type, pragma_value)


Stage._fuse2 = Stage.fuse
Stage.fuse = _fuse
Stage.reorder = _reorder
Stage.bind = _bind
Stage.pragma = _pragma

for _cls in (Tensor, IterVar, Stage, Schedule):
    _cls.__module__ = "anvil.te"
del _cls

__all__ = [
    "IterVar", "PrimExpr", "Schedule", "Stage", "Tensor", "ThreadAxis", "Var", "abs", "all", "any", "ceil",
    "compute", "const", "create_schedule", "div", "erf", "exp", "fabs", "floor", "floordiv", "floormod", "fma",
    "if_then_else", "indexdiv", "indexmod", "log", "max", "max_value", "min", "min_value", "placeholder", "pow",
    "power", "reduce_axis", "round", "rsqrt", "sigmoid", "size_var", "sqrt", "sum", "tanh", "thread_axis",
    "truncdiv", "truncmod", "var",
]
