# The backends tests/conformance/run_node_tests.py runs a test on, each a function
# (model_path, inputs) -> outputs (a list of numpy arrays, or lists of them for sequences).
# A test that a backend reports as not supported raises Unsupported, anything else is a failure.
# Workers are spawned (not forked), so a backend the parent probed is loaded afresh in each.
import numpy as np


class Unsupported(Exception):
    """The backend declines the test (an operator, attribute or dtype it does not implement)."""


class BackendUnavailable(Exception):
    """The backend cannot run at all here (not installed or not built)."""


def _ort():
    try:
        import onnxruntime as ort
    except ImportError as e:
        raise BackendUnavailable(f"onnxruntime is not installed ({e}); scripts/setup.sh installs it") from e
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # the runner parallelises over tests
    options.inter_op_num_threads = 1
    options.log_severity_level = 3

    def run(model_path, inputs, names):
        try:
            session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        except (state.NotImplemented, state.InvalidGraph) as e:
            # ORT refuses a model it has no kernel for (or an opset/type it does not know).
            raise Unsupported(str(e).splitlines()[0]) from e
        if any(_custom(x) for x in inputs) or any(o.type.startswith("tensor(") and o.type not in _NATIVE
                                                for o in session.get_outputs()):
            return _run_ort_values(ort, session, names, inputs)
        return session.run(None, dict(zip(names, inputs)))

    return run


# ORT's Python binding moves only numpy's own dtypes; bfloat16, float8, int4 and the like
# (ml_dtypes arrays in onnx's numpy_helper) go through OrtValues and raw bytes instead.
_NATIVE = {f"tensor({t})" for t in ("float", "double", "float16", "int8", "int16", "int32", "int64", "uint8",
                                    "uint16", "uint32", "uint64", "bool", "string", "complex64", "complex128")}


def _custom(x):
    return isinstance(x, np.ndarray) and type(x.dtype).__module__.startswith("ml_dtypes") or (
        isinstance(x, np.ndarray) and x.dtype.kind == "V")


def _run_ort_values(ort, session, names, inputs):
    import ctypes

    from onnx import TensorProto, numpy_helper

    feeds = {}
    for name, x in zip(names, inputs):
        if isinstance(x, np.ndarray) and _custom(x):
            proto = numpy_helper.from_array(x)
            value = ort.OrtValue.ortvalue_from_shape_and_type(list(x.shape), proto.data_type)
            ctypes.memmove(value.data_ptr(), proto.raw_data, len(proto.raw_data))
            feeds[name] = value
        else:
            feeds[name] = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(x))
    types = {TensorProto.DataType.Name(v).lower(): v for v in TensorProto.DataType.values()}
    outputs = []
    for value in session.run_with_ort_values(None, feeds):
        kind = value.data_type()
        if kind in _NATIVE or not value.is_tensor():
            outputs.append(value.numpy())
            continue
        proto = TensorProto(dims=value.shape(), data_type=types[kind[len("tensor("):-1]])
        proto.raw_data = ctypes.string_at(value.data_ptr(), value.tensor_size_in_bytes())
        outputs.append(numpy_helper.to_array(proto))
    return outputs


def _anvil_api():
    """The end-to-end API of issue 11; a missing name means the backend is not built yet."""
    try:
        import anvil

        return anvil, anvil.frontend.from_onnx, anvil.compile, anvil.runtime.VirtualMachine, anvil.cpu
    except (ImportError, AttributeError) as e:
        raise BackendUnavailable(f"anvil end-to-end API not available: {type(e).__name__}: {e}") from e


def _to_numpy(value):
    if isinstance(value, (list, tuple)):
        return [_to_numpy(v) for v in value]
    if hasattr(value, "numpy"):
        return value.numpy()
    return np.asarray(value)


def _anvil():
    anvil, from_onnx, compile_, VirtualMachine, cpu = _anvil_api()
    import onnx

    from bind_inputs import import_time_input

    def import_binding(model_path, inputs, names):
        """from_onnx, binding (one at a time) the integer inputs the importer must know."""
        bound, model = {}, None
        while True:
            try:
                return from_onnx(str(model_path), input_values=bound or None), bound
            except NotImplementedError as e:
                if model is None:
                    model = onnx.load(str(model_path), load_external_data=False)
                name = import_time_input(model, str(e), names[:len(inputs)], bound)
                if name is None:
                    raise
                bound[name] = inputs[names.index(name)]

    def run(model_path, inputs, names):
        try:
            mod, bound = import_binding(model_path, inputs, names)
            exe = compile_(mod, target="llvm")
            # numpy's buffer protocol cannot carry ml_dtypes' types (bfloat16, float8, int4):
            # those go in as anvil tensors, raw bits and all.
            feeds = [anvil.tensor(x) if _custom(x) else x for name, x in zip(names, inputs) if name not in bound]
            result = VirtualMachine(exe, cpu())["main"](*feeds)
        except NotImplementedError as e:
            raise Unsupported(str(e).splitlines()[0] if str(e) else "NotImplementedError") from e
        run.bound_inputs = sorted(bound)
        # One graph output comes back as a tensor, several as a list (a VM tuple).
        return _to_numpy(result) if isinstance(result, (list, tuple)) else [_to_numpy(result)]

    run.bound_inputs = []
    return run


BACKENDS = {"ort": _ort, "anvil": _anvil}


def check_available(name):
    """Raises BackendUnavailable when `name` cannot run here (checked once, in the parent)."""
    if name == "anvil":
        _anvil_api()
    else:
        BACKENDS[name]()


def make(name):
    return BACKENDS[name]()
