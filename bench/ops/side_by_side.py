# What the single-operator benchmarks here share: a per-call time that is robust to the timer's
# resolution (calls repeated until a minimum time passed; the median of several such repeats).
import time


def per_call_ms(run, runs=1, min_ms=30.0):
    """Median over `runs` repeats of the mean time of one call of run(), in ms; each repeat calls
    run() until min_ms passed (one untimed call first warms it)."""
    run()
    times = []
    for _ in range(runs):
        n, t0 = 0, time.perf_counter()
        while True:
            run()
            n += 1
            dt = (time.perf_counter() - t0) * 1e3
            if dt >= min_ms:
                break
        times.append(dt / n)
    times.sort()
    return times[len(times) // 2]


def float_model(nodes, x_shape, y_shape, initializers=(), name="layer", opset=17):
    """An ONNX model of `nodes` from one float32 input "x" (x_shape) to one float32 output "y"
    (y_shape; None when the benchmark leaves it to shape inference)."""
    import onnx
    h = onnx.helper
    g = h.make_graph(list(nodes), name, [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, list(x_shape))],
                     [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None if y_shape is None else list(y_shape))],
                     initializer=list(initializers))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def ort_session(model, threads=1):
    """An ONNX Runtime CPU session on `model` (a ModelProto) with `threads` intra-op threads,
    sequential execution: the peer every benchmark here compares against."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
