# anvil.frontend: model importers. from_onnx reads an ONNX model (file, bytes or onnx.ModelProto)
# into an IRModule through the C++ importer (src/anvil/frontend/onnx/importer.h); the onnx pip
# package is never needed, only accepted.
"""Import models into Anvil's graph IR (``anvil.IRModule``), as TVM's ``relax.frontend``."""
import os

from .. import _ffi
from .._ffi import IRModule


def _shape_option(shape):
    """{name: [int, ...]} for the C++ importer; None stays None. None as a dimension keeps the
    model's own (-1 to the importer)."""
    if shape is None:
        return None
    if not isinstance(shape, dict):
        raise TypeError(f"from_onnx: shape must be a dict of input name -> tuple of ints, got {type(shape).__name__}")
    out = {}
    for name, dims in shape.items():
        if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
            raise TypeError(f"from_onnx: the shape of input {name!r} must be a tuple of ints, got {dims!r}")
        out[name] = [-1 if d is None else d for d in dims]
    return out


def _values_option(input_values):
    """{name: contiguous numpy array} for the C++ importer (which copies them); None stays None."""
    if input_values is None:
        return None
    if not isinstance(input_values, dict):
        raise TypeError(f"from_onnx: input_values must be a dict of input name -> array, "
                        f"got {type(input_values).__name__}")
    import numpy as np

    # np.require, not np.ascontiguousarray: the latter makes a 0-d array 1-d.
    return {name: np.require(value, requirements="C") for name, value in input_values.items()}


def from_onnx(model, shape=None, *, shape_dict=None, base_dir=None, input_values=None):
    """Convert an ONNX model into an IRModule whose ``"main"`` takes the model's inputs.

    Parameters
    ----------
    model : str, os.PathLike, bytes or onnx.ModelProto
        A model file, its serialized bytes, or a loaded model (serialized with
        ``SerializeToString()``; weights loaded by ``onnx.load`` travel inside it).
    shape : dict, optional
        ``{input_name: (d0, d1, ...)}`` pins the dimensions of inputs (TVM's ``shape_dict``); a
        dimension given as ``None`` or ``-1`` keeps the model's own, which may be symbolic.
        Dimensions left symbolic (``dim_param`` names, unknown dims) stay symbolic: one compiled
        module then runs at any size.
    shape_dict : dict, optional
        The same as `shape`, under TVM's name.
    base_dir : str or os.PathLike, optional
        Where external-data files resolve (default: the model file's directory; bytes and
        ModelProtos have none, so a model that still refers to external data needs it).
    input_values : dict, optional
        ``{input_name: array}`` binds graph inputs to fixed values at import: each becomes a
        constant of the module (and is no longer a parameter of ``"main"`` nor in
        ``input_names``). For inputs an operator needs to know at import, such as a Reshape's
        shape, a Pad's pads or a TopK's k given as graph inputs. The dtype must be the declared
        one and the shape must fit the declared dimensions (ValueError otherwise).

    Returns
    -------
    IRModule
        Printable (``print(mod)``); ``mod.input_names`` / ``mod.output_names`` are the ONNX names.

    Raises
    ------
    NotImplementedError
        For an operator, attribute, opset or dtype the importer does not support (the message
        names the node and its op type).
    ValueError
        For a malformed model or a `shape` that does not fit it.
    OSError
        When the file cannot be read.
    """
    if shape is not None and shape_dict is not None:
        raise TypeError("from_onnx: pass shape or shape_dict, not both")
    shapes = _shape_option(shape if shape is not None else shape_dict)
    base = os.fspath(base_dir) if base_dir is not None else ""
    values = _values_option(input_values)
    if isinstance(model, (str, os.PathLike)):
        return _ffi._from_onnx_file(os.fspath(model), shapes, base, values)
    if isinstance(model, (bytes, bytearray, memoryview)):
        return _ffi._from_onnx_bytes(bytes(model), shapes, base, values)
    if hasattr(model, "SerializeToString") and hasattr(model, "graph"):
        return _ffi._from_onnx_bytes(model.SerializeToString(), shapes, base, values)
    raise TypeError(f"from_onnx: expected a path, bytes or an onnx.ModelProto, got {type(model).__name__}")


IRModule.__module__ = "anvil"

__all__ = ["IRModule", "from_onnx"]
