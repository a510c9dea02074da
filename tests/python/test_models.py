# Model tests (issue 11, item 10): ResNet-18, MobileNetV2 and a MiniLM-L6 style encoder built by
# tests/models/make_models.py (seeded random weights, torch.onnx layout, symbolic batch), and the
# PP-OCRv4 detector and recogniser with real weights from the pip package rapidocr-onnxruntime.
# Each compiles once with Anvil and must match ONNX Runtime at batch 1 and at batch 4 from the
# same executable, on fresh random inputs (a rendered text page for the OCR models), within
# rtol 1e-4 / atol 1e-4.
#
# KNOWN_FAILURES lists models that do not match yet, as strict expected failures (so they turn
# red once fixed); it is empty now.
import sys
from pathlib import Path

import numpy as np
import pytest

import anvil
from conftest import SEED, require

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))

KNOWN_FAILURES = {}
GENERATED = ["resnet18", "mobilenetv2", "minilm"]
REAL = ["ppocr_det", "ppocr_rec"]


def _have(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    require(_have("onnx") and _have("onnxruntime"), "pip packages onnx and onnxruntime (scripts/setup.sh)")
    return tmp_path_factory.mktemp("models")


def _model_path(name, model_dir):
    if name in GENERATED:
        import make_models

        path = model_dir / f"{name}.onnx"
        return path if path.exists() else make_models.save(name, model_dir)
    import real_models

    require(real_models.available(), "pip package rapidocr-onnxruntime (scripts/setup.sh installs it)")
    return real_models.det_model_path() if name == "ppocr_det" else real_models.rec_model_path()


def _inputs(name, batch, seed):
    rng = np.random.default_rng(seed)
    if name in GENERATED:
        import make_models

        return make_models.random_inputs(name, batch, rng)
    import real_models

    # Detection at a size other than the rendered default: H and W are symbolic in the model.
    if name == "ppocr_det":
        return real_models.det_input(batch, height=320, width=480, seed=int(rng.integers(1 << 16)))
    return real_models.rec_input(batch, width=320, seed=int(rng.integers(1 << 16)))


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_FAILURES[n], strict=True))
                                  if n in KNOWN_FAILURES else n for n in GENERATED + REAL])
def test_model_matches_onnxruntime_at_batch_1_and_4(name, model_dir):
    from compare_ort import compare

    path = _model_path(name, model_dir)
    mod = anvil.frontend.from_onnx(str(path))
    exe = anvil.compile(mod, target="llvm")  # once: both batch sizes run on this executable
    vm = anvil.runtime.VirtualMachine(exe, anvil.cpu())
    for batch in (1, 4):
        seed = SEED + sum(name.encode()) + batch
        print(f"{name} batch {batch}: input seed {seed}")
        report = compare(path, _inputs(name, batch, seed), vm["main"], rtol=1e-4, atol=1e-4)
        print(report)
