# Shared fixtures for the Python tests: the random seed (fixed, printed), the hand-written kernel
# library built by CMake (target anvil_test_kernels), a library exported from C source plus params
# at test time, and random data that is never zero.
#
# Run from a build:  PYTHONPATH=<build>/python python3 -m pytest tests/python -q
# The kernel library is found through $ANVIL_TEST_KERNELS, else <build>/lib next to the package.
import os
from pathlib import Path

import numpy as np
import pytest

import anvil

SEED = int(os.environ.get("ANVIL_TEST_SEED", "20240611"))

# Under CI (CI=true) nothing may be missing: scripts/setup.sh installs every peer (apache-tvm,
# tornado, ...) and scripts/build.sh builds every binary the tests use, so a test that would skip
# for want of one fails instead. Skips that do not depend on the setup -- the machine has a CUDA
# device, a peer that setup.sh does not install -- give a reason starting with NOT_APPLICABLE.
IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
NOT_APPLICABLE = "not applicable here: "


def require(available, what):
    """Skip the calling test (or, at import time, the whole module) when `what` -- a peer, a built
    binary -- is not `available`; under CI=true fail instead. The reason is printed either way."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"{what} (CI=true: scripts/setup.sh and scripts/build.sh provide it, so it must be "
                    f"there)", pytrace=False)
    print(f"skipping: {what}")
    pytest.skip(what, allow_module_level=True)


def _skip_fails_under_ci(report):
    """Under CI=true, a skip whose reason does not start with NOT_APPLICABLE becomes a failure
    (a pytest.skip, skipif or importorskip that bypassed require(), an empty parametrize)."""
    if not IN_CI or not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if reason.startswith("Skipped: "):
        reason = reason[len("Skipped: "):]
    if reason.startswith(NOT_APPLICABLE):
        return
    report.outcome = "failed"
    report.longrepr = (f"skipped under CI=true: {reason}\n(a missing peer or build target fails in CI; a skip "
                       f"that does not depend on the setup gives a reason starting {NOT_APPLICABLE!r})")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _skip_fails_under_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _skip_fails_under_ci(outcome.get_result())


def pytest_report_header(config):
    ci = "CI=true: skips for a missing peer or binary fail" if IN_CI else "not CI: missing peers skip"
    return f"anvil test seed: {SEED} (set ANVIL_TEST_SEED to change it); {ci}"


@pytest.fixture
def rng(request):
    """A numpy Generator seeded from SEED and the test name, so each test is reproducible alone."""
    seed = SEED + sum(request.node.name.encode())
    print(f"random seed for {request.node.name}: {seed}")
    return np.random.default_rng(seed)


def random_array(rng, shape, dtype):
    """Random values of `dtype` with no zeros (bool: a mix of True and False)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        out = rng.integers(0, 2, size=shape).astype(bool)
        if out.size >= 2:
            out.flat[0], out.flat[1] = True, False
        return out
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low = 1 if dtype.kind == "u" else max(info.min, -100)
        values = rng.integers(low, min(info.max, 100) + 1, size=shape, dtype=np.int64)
        values[values == 0] = 1
        return values.astype(dtype)
    magnitude = rng.uniform(0.5, 2.0, size=shape)
    sign = np.where(rng.integers(0, 2, size=shape) == 1, 1.0, -1.0)
    return (magnitude * sign).astype(dtype)


@pytest.fixture(scope="session")
def kernels_path():
    path = Path(os.environ.get("ANVIL_TEST_KERNELS",
                               Path(anvil.__file__).parents[2] / "lib" / "libanvil_test_kernels.so"))
    require(path.exists(), f"kernel library {path} not built (target anvil_test_kernels; or set ANVIL_TEST_KERNELS)")
    return path


@pytest.fixture(scope="session")
def kernels(kernels_path):
    """The hand-written kernel library tests/data/test_kernels.c, loaded once."""
    return anvil.runtime.load_module(kernels_path)


@pytest.fixture
def make_random(rng):
    """make_random(shape, dtype): random_array with this test's generator."""
    return lambda shape, dtype="float32": random_array(rng, shape, dtype)


# Kernels written against the ABI by hand (as the C code generator will): each kind of error,
# a callback into a function argument (also from pool threads), and an element-wise square.
KERNEL_SOURCE = r"""
#include "anvil/runtime/c_abi.h"
const AnvilRuntimeApi* __anvil_runtime_api = 0;

int32_t __anvil_fn_square(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  (void)ret;
  if (n != 2 || args[0].kind != kAnvilTensor || args[1].kind != kAnvilTensor) {
    __anvil_runtime_api->error_set(kAnvilErrorType, "square expects (x, y) tensors");
    return -1;
  }
  const DLTensor* x = args[0].v_tensor;
  int64_t count = 1;
  for (int i = 0; i < x->ndim; ++i) count *= x->shape[i];
  const float* in = (const float*)((const char*)x->data + x->byte_offset);
  float* out = (float*)((char*)args[1].v_tensor->data + args[1].v_tensor->byte_offset);
  for (int64_t i = 0; i < count; ++i) out[i] = in[i] * in[i];
  return 0;
}

/* raise_kind(kind): reports an error of the given AnvilErrorKind. */
int32_t __anvil_fn_raise_kind(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  (void)ret;
  if (n != 1 || args[0].kind != kAnvilInt) {
    __anvil_runtime_api->error_set(kAnvilErrorType, "raise_kind expects an int");
    return -1;
  }
  __anvil_runtime_api->error_set((int32_t)args[0].v_int64, "raise_kind: requested error");
  return -1;
}

/* call_back(f, x) -> f(x) for an int x; errors of f pass through with their kind. */
int32_t __anvil_fn_call_back(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  if (n != 2 || args[0].kind != kAnvilFunction) {
    __anvil_runtime_api->error_set(kAnvilErrorType, "call_back expects (function, value)");
    return -1;
  }
  return __anvil_runtime_api->function_call(args[0].v_handle, &args[1], 1, ret);
}

struct Callback { void* fn; int32_t failed; };

static int32_t call_task(int32_t task_id, AnvilParallelEnv* env, void* closure) {
  (void)env;
  struct Callback* c = (struct Callback*)closure;
  AnvilValue arg, ret;
  arg.kind = kAnvilInt; arg.reserved = 0; arg.v_int64 = task_id;
  ret.kind = kAnvilNull; ret.reserved = 0; ret.v_int64 = 0;
  if (__anvil_runtime_api->function_call(c->fn, &arg, 1, &ret) != 0) c->failed = 1;
  return 0;
}

/* parallel_call_back(f) -> number of tasks; calls f(task_id) on every pool thread. */
int32_t __anvil_fn_parallel_call_back(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  if (n != 1 || args[0].kind != kAnvilFunction) {
    __anvil_runtime_api->error_set(kAnvilErrorType, "parallel_call_back expects a function");
    return -1;
  }
  struct Callback c = {args[0].v_handle, 0};
  if (__anvil_runtime_api->parallel_launch(call_task, &c, 4) != 0) return -1;
  if (c.failed) {
    __anvil_runtime_api->error_set(kAnvilErrorRuntime, "parallel_call_back: a callback failed");
    return -1;
  }
  ret->kind = kAnvilInt;
  ret->v_int64 = 4;
  return 0;
}
"""
KERNEL_NAMES = ["square", "raise_kind", "call_back", "parallel_call_back"]


@pytest.fixture(scope="session")
def weights():
    rng = np.random.default_rng(7)
    print("weights seed: 7")
    return {
        "weight": rng.uniform(0.5, 2.0, size=(4, 8)).astype(np.float32),
        "bias": rng.integers(1, 100, size=(8,)).astype(np.int64),
    }


@pytest.fixture(scope="session")
def exported(tmp_path_factory, weights):
    root = anvil.runtime.c_source_module(KERNEL_SOURCE, KERNEL_NAMES)
    root.import_module(anvil.runtime.params_module(weights))
    path = tmp_path_factory.mktemp("export") / "model.so"
    root.export_library(path)
    return anvil.runtime.load_module(path)
