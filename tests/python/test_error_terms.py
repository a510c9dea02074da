# Errors a Python user meets say what to do in Python (and C++) terms, not in the name of a C++
# method alone.
import numpy as np
import pytest

import anvil
from anvil import rpc


def test_local_tensor_to_remote_function_says_how_to_copy_it():
    x = np.ones((3, 4))  # what rpc.test.remote_tensor_func checks for
    with rpc.LocalSession() as sess:
        f = sess.get_function("rpc.test.remote_tensor_func")
        for local in (x, anvil.tensor(x)):
            with pytest.raises(TypeError) as info:
                f(local)
            message = str(info.value)
            assert "anvil.tensor(array, sess.cpu())" in message, message
            assert "cannot be passed to a remote function" in message, message
            assert "RPCSession::" not in message, message
        remote = anvil.tensor(x, sess.cpu())  # what the message proposes works
        f(remote)
