# The demo behind scripts/demo.sh runs as shipped: it compiles its tensor-expression kernels,
# exports them with the weights, loads the library back and checks the MLP against numpy float64
# (it exits non-zero when the results differ). Small sizes and one timing repeat keep it quick.
import os
import subprocess
import sys
from pathlib import Path

import anvil

ROOT = Path(__file__).resolve().parents[2]


def test_demo_compiles_runs_and_matches_numpy(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(anvil.__file__).resolve().parents[1]) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "runtime_demo.py"), "--batch", "3", "--hidden", "40",
                          "--classes", "7", "--repeat", "1", "--out", str(tmp_path / "demo.so")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "demo OK" in out.stdout
    assert "max |anvil - numpy float64|" in out.stdout
