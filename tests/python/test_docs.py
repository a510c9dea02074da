# The code examples in docs/ run as written: each block between `<!-- example: NAME -->` and
# `<!-- end example -->` is executed (its own assertions check the results).
import re
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
def test_doc_example_runs(code, capsys):
    exec(compile(code, "<doc example>", "exec"), {"__name__": "doc_example"})
    assert capsys.readouterr().out  # the examples print something (IR, timings)
