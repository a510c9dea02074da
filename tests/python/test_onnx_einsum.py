# ONNX Einsum with an index repeated inside one operand (a diagonal, a trace, a batch diagonal
# under an ellipsis, a diagonal feeding a contraction): imported by anvil.frontend.from_onnx,
# compiled for llvm, run on the VM and compared with numpy.einsum in float64 on random inputs
# (seed SEED).
import numpy as np
import pytest

import anvil
from conftest import SEED, require

try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    onnx = None
require(onnx is not None, "pip package onnx (scripts/setup.sh installs it)")

CASES = [
    ("ii->i", [(5, 5)]),
    ("ii", [(4, 4)]),
    ("...ii->...i", [(3, 5, 5)]),
    ("bii,bi->b", [(2, 4, 4), (2, 4)]),
    ("iji->j", [(3, 2, 3)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
]


@pytest.mark.parametrize("equation,shapes", CASES)
def test_einsum_diagonals_match_numpy(equation, shapes):
    rng = np.random.default_rng(SEED)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    names = [f"x{i}" for i in range(len(xs))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, x.shape)
                                            for n, x in zip(names, xs)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    exe = anvil.compile(anvil.frontend.from_onnx(model))
    got = anvil.runtime.VirtualMachine(exe, anvil.cpu())["main"](*xs).numpy()
    want = np.einsum(equation, *[x.astype(np.float64) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
