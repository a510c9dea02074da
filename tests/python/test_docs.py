# The code examples in docs/ run as written: each block between `<!-- example: NAME -->` and
# `<!-- end example -->` is executed in a fresh Python process (so what it registers or starts
# cannot leak into other tests); its own assertions check the results, and it must print.
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXAMPLE = re.compile(r"<!-- example: (\S+) -->\s*```python\n(.*?)```\s*<!-- end example -->", re.S)


def examples():
    out = []
    for path in sorted(DOCS.glob("*.md")):
        for name, code in EXAMPLE.findall(path.read_text()):
            out.append(pytest.param(code, id=f"{path.name}:{name}"))
    return out


@pytest.mark.parametrize("code", examples())
def test_doc_example_runs(code, tmp_path):
    import anvil

    env = dict(os.environ)
    package_root = str(Path(anvil.__file__).resolve().parents[1])
    env["PYTHONPATH"] = package_root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"example failed:\n{proc.stdout}\n{proc.stderr}"
    assert proc.stdout  # the examples print something (IR, timings, results)
