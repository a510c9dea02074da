"""Compares a model's outputs from Anvil with ONNX Runtime's on the same inputs (the model tests
of issue 11: float32 within rtol 1e-4 / atol 1e-4, shapes and dtypes equal).

    from compare_ort import compare
    report = compare("resnet18.onnx", {"input": x}, vm["main"])
    print(report)          # one line per output: shape, dtype, max abs / rel difference

`run_anvil` is called with the inputs as positional arguments in the model's input order (so a
VM function, `vm["main"]`, fits as it is) and returns one output or a list of them (numpy arrays
or anything with .numpy()). A mismatch raises AssertionError naming the output and the largest
differences.
"""
import functools

import numpy as np


@functools.lru_cache(maxsize=8)
def _session(model_path, threads):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    return ort.InferenceSession(model_path, options, providers=["CPUExecutionProvider"])


def _to_numpy(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def ort_run(model_path, inputs, threads=0):
    """ONNX Runtime's outputs, as {output name: array}."""
    session = _session(str(model_path), threads)
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, inputs)))


def input_order(model_path):
    return [i.name for i in _session(str(model_path), 0).get_inputs()]


class Report(list):
    """One row per output: (name, shape, dtype, max abs diff, max rel diff)."""

    def __str__(self):
        return "\n".join(f"{name}: {list(shape)} {dtype} max abs diff {a:.3g}, max rel diff {r:.3g}"
                         for name, shape, dtype, a, r in self)


def compare(model_path, inputs, run_anvil, rtol=1e-4, atol=1e-4):
    """Runs `run_anvil(*inputs in model order)` and ORT on `inputs` ({name: array}); asserts the
    outputs agree (shape, dtype, allclose). Returns a Report of the differences."""
    order = input_order(model_path)
    missing = [n for n in order if n not in inputs]
    if missing or len(inputs) != len(order):
        raise ValueError(f"compare: {model_path} takes inputs {order}, got {sorted(inputs)}")
    expected = ort_run(model_path, inputs)
    actual = run_anvil(*[inputs[n] for n in order])
    actual = [_to_numpy(a) for a in actual] if isinstance(actual, (list, tuple)) else [_to_numpy(actual)]
    if len(actual) != len(expected):
        raise AssertionError(f"{model_path}: anvil returned {len(actual)} outputs, ONNX Runtime {len(expected)} "
                             f"({list(expected)})")
    report = Report()
    for (name, want), got in zip(expected.items(), actual):
        if got.shape != want.shape or got.dtype != want.dtype:
            raise AssertionError(f"{model_path} output {name!r}: anvil gives {list(got.shape)} {got.dtype}, "
                                 f"ONNX Runtime {list(want.shape)} {want.dtype}")
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        abs_diff = float(diff.max()) if diff.size else 0.0
        rel_diff = float((diff / np.maximum(np.abs(want), 1e-30)).max()) if diff.size else 0.0
        report.append((name, want.shape, want.dtype, abs_diff, rel_diff))
        if not np.isfinite(got).all() and not np.array_equal(np.isfinite(got), np.isfinite(want)):
            raise AssertionError(f"{model_path} output {name!r}: anvil gives non-finite values where ONNX "
                                 f"Runtime does not")
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"{model_path} output {name!r} (anvil vs ONNX Runtime)")
    return report
