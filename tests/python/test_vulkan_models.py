# Issue 13's models on `--target vulkan`: ResNet-18 and MobileNetV2 (tests/models/make_models.py,
# seeded random weights, symbolic batch) compiled once for vulkan, exported, loaded back and run in
# the VM on the Vulkan device (lavapipe here and in CI) at batch 1 and 2 from that one artifact,
# against ONNX Runtime on the CPU: max |diff| <= 1e-3 * max |ORT| (float32 tolerances, rtol 1e-3).
import sys
from pathlib import Path

import numpy as np
import pytest

import anvil
from conftest import SEED

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))


@pytest.mark.parametrize("name", ["resnet18", "mobilenetv2"])
def test_model_on_vulkan_matches_onnx_runtime_at_two_batch_sizes(name, tmp_path):
    import make_models
    import onnxruntime as ort

    dev = anvil.vulkan(0)
    if not dev.exist:  # scripts/setup.sh installs lavapipe, so under CI=true this fails
        pytest.skip("no Vulkan device (scripts/setup.sh installs mesa-vulkan-drivers: lavapipe)")
    path = make_models.save(name, tmp_path)
    lib_path = tmp_path / f"{name}_vulkan.so"
    exe = anvil.compile(anvil.frontend.from_onnx(str(path)), "vulkan")
    exe.export_library(str(lib_path))
    vm = anvil.runtime.VirtualMachine(anvil.runtime.load_module(str(lib_path)), dev)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for batch in (1, 2):
        feeds = make_models.random_inputs(name, batch, np.random.default_rng(SEED + batch))
        want = sess.run(None, feeds)[0]
        out = vm["main"](*[anvil.tensor(feeds[i.name], device=dev) for i in sess.get_inputs()])
        got = (out[0] if isinstance(out, (list, tuple)) else out).numpy()
        err = np.abs(got.astype(np.float64) - want).max() / np.abs(want).max()
        print(f"{name} batch {batch} on {dev.device_name}: max|diff|/max|ORT| = {err:.2e}")
        assert got.shape == want.shape and err <= 1e-3


def test_cli_compiles_for_vulkan_and_runs_on_the_device(tmp_path):
    """`anvil compile --target vulkan` then `anvil run`: the run goes to the Vulkan device (the
    profile says so) and the outputs it writes match ONNX Runtime."""
    import os
    import shutil
    import subprocess

    import make_models
    import onnxruntime as ort

    if not anvil.vulkan(0).exist:
        pytest.skip("no Vulkan device (scripts/setup.sh installs mesa-vulkan-drivers: lavapipe)")
    root = Path(__file__).resolve().parents[2]
    build_bin = Path(os.environ.get("ANVIL_BUILD_DIR", root / "build")) / "bin" / "anvil"
    cli = str(build_bin) if build_bin.is_file() else shutil.which("anvil")
    path = make_models.save("resnet18", tmp_path)
    lib = tmp_path / "resnet18_vulkan.so"
    done = subprocess.run([cli, "compile", str(path), "--target", "vulkan", "-o", str(lib)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    feeds = make_models.random_inputs("resnet18", 2, np.random.default_rng(SEED))
    np.savez(tmp_path / "in.npz", **feeds)
    done = subprocess.run([cli, "run", str(lib), "--inputs", str(tmp_path / "in.npz"), "--outputs",
                           str(tmp_path / "out.npz"), "--repeat", "1", "--profile"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "vulkan:0" in done.stdout  # the profile's device column
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got = next(iter(np.load(tmp_path / "out.npz").values()))
    assert np.abs(got.astype(np.float64) - want).max() <= 1e-3 * np.abs(want).max()
