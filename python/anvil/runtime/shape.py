# ShapeTuple: a tuple that crosses into C++ as a shape value (a plain tuple becomes an array).
from .. import _ffi


class ShapeTuple(tuple):
    """A shape: a tuple of ints passed to C++ as a shape value (TVM's ShapeTuple).

    Shapes returned by C++ come back as ShapeTuple; plain tuples and lists become arrays.
    """

    def __new__(cls, dims=()):
        return super().__new__(cls, (int(d) for d in dims))

    def __repr__(self):
        return f"ShapeTuple({tuple(self)!r})"


_ffi._set_shape_class(ShapeTuple)
