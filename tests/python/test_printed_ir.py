# The text that print(anvil.lower(...)) shows: the names the user gave (A, B, C, i, j, no
# A_1/i_1 unless two different things of one name are visible at once) and loop bounds a reader
# can take in (range(m // 8, (m + 7) // 8), not the arithmetic that produced them).
import re

import numpy as np

import anvil
from anvil import te


def test_flattened_body_uses_the_signature_names():
    A = te.placeholder((32, 16), name="A")
    B = te.placeholder((16, 32), name="B")
    k = te.reduce_axis((0, 16), name="k")
    C = te.compute((32, 32), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=8)
    s[C].parallel(xo)
    text = str(anvil.lower(s, [A, B, C], name="mm"))
    print(text)
    assert text.startswith("func mm(A: Buffer(float32, [32, 16]), B: Buffer(float32, [16, 32]), "
                           "C: Buffer(float32, [32, 32])):")
    assert not re.search(r"\b[ABC]_\d", text), text
    assert "C[i.outer * 256 + i.inner * 32 + j] = C[i.outer * 256 + i.inner * 32 + j] + " \
           "A[i.outer * 128 + i.inner * 16 + k] * B[k * 32 + j]" in text


def test_sibling_stages_keep_their_axis_names():
    A = te.placeholder((16, 16), name="A")
    B = te.compute((16, 16), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((16, 16), lambda i, j: B[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    text = str(anvil.lower(s, [A, C], name="two"))
    print(text)
    assert re.search(r"\b[A-Za-z]+_\d", text) is None, text
    assert text.count("for i in range(0, 16):") == 2 and text.count("for j in range(0, 16):") == 2
    assert "C[i * 16 + j] = B[i * 16 + j] + 1.0f" in text


def test_split_of_a_symbolic_extent_prints_simplified_bounds(rng):
    m = te.var("m")  # a plain var, as TVM's tutorials write shapes
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    xo, xi = s[B].split(B.op.axis[0], factor=8)
    s[B].vectorize(xi)
    f = anvil.lower(s, [A, B], name="scale")
    text = str(f)
    print(text)
    assert "for i.outer in range(0, m // 8):" in text
    assert "for i.outer in range(m // 8, (m + 7) // 8):" in text
    assert "max(" not in text and "min(" not in text
    mod = anvil.build(s, [A, B], target="llvm", name="scale")  # and it still computes the same
    for size in (1, 5, 16, 37):
        a = rng.uniform(-1, 1, size).astype("float32")
        b = np.zeros(size, "float32")
        mod["scale"](a, b)
        np.testing.assert_allclose(b, a.astype("float64") * 2.0, rtol=1e-6)
