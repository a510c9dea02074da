# `pip install .` into a fresh virtual environment, used from outside the source tree: the
# installed package carries the `anvil` and `anvil-rpc` binaries (anvil/bin/) and puts both
# commands on the environment's PATH, so PopenSession(), rpc.Server() and `anvil compile`/`run`
# work without a build tree.
#
# Slow: pip compiles the whole project once more. To keep that short the build uses build/'s
# build type (RelWithDebInfo; the wheel is stripped on install) and ccache with the settings of
# scripts/build.sh (CCACHE_BASEDIR = the checkout, CCACHE_NOHASHDIR), so it takes most objects
# from what building build/ cached, and it goes to a persistent folder (scikit-build-core's
# build-dir: $ANVIL_WHEEL_BUILD_DIR, default <repo>/build-wheel) so a second run is incremental.
# Deselect it with `-m "not slow"`; it prints how long pip took (2-vCPU machine, Dec 2026: 452 s
# into an empty build-wheel with almost no ccache hits, about 20 s when incremental).
# The install is offline: --no-build-isolation (scikit-build-core, nanobind and numpy come from the
# interpreter's site-packages, which the venv sees) and --no-index.
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = Path(os.environ.get("ANVIL_WHEEL_BUILD_DIR", ROOT / "build-wheel"))
PIP_TIMEOUT_S = 3 * 3600  # a cold build on 2 cores takes ~25 min


def _clean_env(venv_bin):
    """The environment of a user who never sourced scripts/env.sh: no build tree on PATH or
    PYTHONPATH, none of Anvil's variables; the venv's bin/ first on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANVIL_") and k != "PYTHONPATH"}
    build_bins = {str(ROOT / "build" / "bin"), str(ROOT / "build-san" / "bin")}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p not in build_bins]
    env["PATH"] = os.pathsep.join([str(venv_bin)] + path)
    env["VIRTUAL_ENV"] = str(venv_bin.parent)
    env.pop("PYTHONHOME", None)
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A fresh venv with the package pip-installed from this checkout; yields (bin dir, env, cwd)."""
    home = tmp_path_factory.mktemp("install")
    env_dir = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)], check=True, timeout=300)
    venv_bin = env_dir / "bin"
    env = _clean_env(venv_bin)
    pip_env = dict(env, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    pip_env.setdefault("CCACHE_BASEDIR", str(ROOT))
    pip_env.setdefault("CCACHE_NOHASHDIR", "1")
    pip_env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    # The compilers CMake picks for build/ (scikit-build-core would take Python's sysconfig gcc/g++,
    # and ccache keys on the compiler's name).
    pip_env.setdefault("CC", "cc")
    pip_env.setdefault("CXX", "c++")
    command = [str(venv_bin / "python"), "-m", "pip", "install", "--no-build-isolation", "--no-deps",
               "-C", f"build-dir={BUILD_DIR}", "-C", "cmake.build-type=RelWithDebInfo", str(ROOT)]
    print("running:", " ".join(command))
    start = time.monotonic()
    done = subprocess.run(command, cwd=home, env=pip_env, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    seconds = time.monotonic() - start
    print(f"pip install . into a fresh venv took {seconds:.0f} s (build dir {BUILD_DIR})")
    if done.returncode != 0:
        pytest.fail(f"pip install failed ({done.returncode}) after {seconds:.0f} s:\n"
                    f"{done.stdout[-6000:]}\n{done.stderr[-6000:]}")
    yield venv_bin, env, home
    shutil.rmtree(env_dir, ignore_errors=True)


def _python(venv, code, timeout=120):
    venv_bin, env, home = venv
    return subprocess.run([str(venv_bin / "python"), "-c", textwrap.dedent(code)], cwd=home, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_package_imports_from_the_venv_not_the_tree(venv):
    done = _python(venv, """
        import anvil, anvil.rpc
        print(anvil.__file__)
        print(anvil.rpc._find_anvil_rpc())
    """)
    assert done.returncode == 0, done.stderr
    package_file, rpc_binary = done.stdout.split()
    venv_dir = str(venv[0].parent)
    assert package_file.startswith(venv_dir), package_file
    assert rpc_binary.startswith(venv_dir) and rpc_binary.endswith("anvil/bin/anvil-rpc"), rpc_binary


def test_anvil_rpc_command_is_on_path(venv):
    venv_bin, env, home = venv
    found = shutil.which("anvil-rpc", path=env["PATH"])
    assert found == str(venv_bin / "anvil-rpc"), found
    done = subprocess.run(["anvil-rpc", "--help"], cwd=home, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "usage: anvil-rpc <command>" in done.stdout and "tracker" in done.stdout
    done = subprocess.run(["anvil-rpc", "server", "--help"], cwd=home, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "--port" in done.stdout


def test_popen_session_and_server_run_from_the_installed_package(venv):
    done = _python(venv, """
        import numpy as np
        import anvil
        from anvil import rpc

        with rpc.PopenSession() as sess:
            print("popen", sess.get_function("rpc.test.addone")(41))
            x = np.arange(6, dtype="float32")
            print("tensor", anvil.tensor(x, sess.cpu()).numpy().tolist() == x.tolist())

        server = rpc.Server(host="127.0.0.1", port=9300, port_end=9400, key="install-test", silent=True)
        try:
            remote = rpc.connect("127.0.0.1", server.port, key="install-test")
            print("server", remote.get_function("rpc.test.addone")(1))
        finally:
            server.terminate()
    """)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "popen 42" in done.stdout
    assert "tensor True" in done.stdout
    assert "server 2" in done.stdout


def test_anvil_command_compiles_and_runs_a_model_from_the_installed_package(venv):
    """`anvil compile` / `anvil run` on the venv's PATH, outside the tree: a small ONNX model (MatMul
    + Relu, random weights) compiled to a library and run on given inputs, checked against numpy."""
    venv_bin, env, home = venv
    found = shutil.which("anvil", path=env["PATH"])
    assert found == str(venv_bin / "anvil"), found
    done = _python(venv, """
        import numpy as np, onnx
        from onnx import helper, numpy_helper, TensorProto
        rng = np.random.default_rng(7)
        w = rng.standard_normal((8, 4)).astype("float32")
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["y0"]), helper.make_node("Relu", ["y0"], ["y"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])], [numpy_helper.from_array(w, "w")])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), "tiny.onnx")
        x = rng.standard_normal((3, 8)).astype("float32")
        np.savez("in.npz", x=x)
        np.save("want.npy", np.maximum(x.astype("float64") @ w.astype("float64"), 0))
    """)
    assert done.returncode == 0, done.stderr
    for command in (["anvil", "compile", "tiny.onnx", "-o", "tiny.so"],
                    ["anvil", "run", "tiny.so", "--inputs", "in.npz", "--outputs", "out.npz"]):
        done = subprocess.run(command, cwd=home, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    done = _python(venv, """
        import numpy as np
        got, want = np.load("out.npz")["y"], np.load("want.npy")
        print("max diff", float(np.abs(got - want).max()))
        assert np.allclose(got, want, rtol=1e-5, atol=1e-5)
    """)
    assert done.returncode == 0, done.stdout + done.stderr
