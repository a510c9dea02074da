# tests/check_layering.py (the ctest layering_includes) on small trees built here, with the real
# layer table of docs/design.md: it passes on the repository and fails, naming file, line and
# rule, on each kind of violation.
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "tests" / "check_layering.py"


def run(root):
    proc = subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture
def tree(tmp_path):
    """A tree with the real table and one well-layered file per folder of src/anvil."""
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "design.md", tmp_path / "docs" / "design.md")
    src = tmp_path / "src" / "anvil"
    for folder in ["base", "runtime", "rpc", "ir", "tir"]:
        (src / folder).mkdir(parents=True)
    (src / "base" / "error.h").write_text("#pragma once\n")
    (src / "runtime" / "object.h").write_text('#include "anvil/base/error.h"\n')
    (src / "runtime" / "data_type.h").write_text("#include <dlpack/dlpack.h>\n")
    (src / "rpc" / "wire.h").write_text('#include "anvil/runtime/object.h"\n')
    (src / "ir" / "node.h").write_text('#include "anvil/runtime/object.h"\n')
    (src / "tir" / "stmt.h").write_text('#include "anvil/ir/node.h"\n#include "anvil/runtime/data_type.h"\n')
    return tmp_path


def test_the_repository_follows_its_table():
    code, out = run(ROOT)
    assert code == 0, out


def test_a_well_layered_tree_passes(tree):
    code, out = run(tree)
    assert code == 0, out


def test_runtime_including_the_compiler_fails(tree):
    (tree / "src/anvil/runtime/tensor.h").write_text('#pragma once\n\n#include "anvil/tir/stmt.h"\n')
    code, out = run(tree)
    assert code == 1
    assert 'src/anvil/runtime/tensor.h:3: #include "anvil/tir/stmt.h": a file of `runtime` may include only base' in out


def test_rpc_including_the_compiler_fails(tree):
    (tree / "src/anvil/rpc/client.cc").write_text('#include "anvil/ir/node.h"\n')
    code, out = run(tree)
    assert code == 1 and "src/anvil/rpc/client.cc:1" in out and "`rpc` may include only" in out


def test_including_a_layer_above_fails(tree):
    (tree / "src/anvil/ir/expr.h").write_text('#include "anvil/tir/stmt.h"\n')
    code, out = run(tree)
    assert code == 1 and "src/anvil/ir/expr.h:1" in out


def test_ir_may_take_only_the_two_leaf_headers_of_the_runtime(tree):
    (tree / "src/anvil/ir/tensor_user.h").write_text('#include "anvil/runtime/tensor.h"\n')
    code, out = run(tree)
    assert code == 1 and "src/anvil/ir/tensor_user.h:1" in out


def test_test_files_get_their_extra_column_only(tree):
    (tree / "src/anvil/tir/stmt_test.cc").write_text('#include "anvil/runtime/tensor.h"\n')
    assert run(tree)[0] == 0  # tir tests may use the runtime
    (tree / "src/anvil/tir/stmt.cc").write_text('#include "anvil/runtime/tensor.h"\n')
    code, out = run(tree)
    assert code == 1 and "src/anvil/tir/stmt.cc:1" in out and "stmt_test.cc" not in out


def test_relative_include_and_unknown_folder_fail(tree):
    (tree / "src/anvil/rpc/sneaky.h").write_text('#include "../tir/stmt.h"\n')
    (tree / "src/anvil/newthing").mkdir()
    code, out = run(tree)
    assert code == 1
    assert "src/anvil/rpc/sneaky.h:1" in out and "full paths" in out
    assert "src/anvil/newthing/: no row in the layer table" in out


def test_a_table_without_markers_is_an_error(tree):
    (tree / "docs" / "design.md").write_text("# design\n\nno table here\n")
    code, out = run(tree)
    assert code != 0 and "no layer table" in out
