#!/usr/bin/env python3
"""Checks the #include lines of the sources against the layer table of docs/design.md.

The table (between the markers `<!-- layers: begin -->` and `<!-- layers: end -->`) is the one
place the dependency rules are written (DESIGN.md §2). Each row names a folder and what its
files may include besides the folder itself and `base/`; a third column adds what its test
files may include. Entries are folders of src/anvil (`tir`) or single headers
(`runtime/object.h`); what a folder may include, its entries may include too (the rule is
transitive). A row's folder is one of src/anvil, or a path from the repository root ending in
`/` (code outside src/, e.g. `examples/runtime_only/`).

Fails (exit status 1, one line per problem: file, line, include, what is allowed) when
  - a file includes a folder or header its row does not allow,
  - a folder of src/anvil, or an included folder, has no row,
  - a quoted include is neither "anvil/..." (a full path from src/) nor a file name next to
    the including file,
  - the table names a header that does not exist.

Usage: check_layering.py [REPO_ROOT]   (default: the repository holding this script)
"""
import re
import sys
from pathlib import Path

SOURCE_SUFFIXES = {".h", ".cc", ".c", ".def", ".inc", ".cpp"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
TICKED = re.compile(r"`([^`]+)`")
# Test-only files: foo_test.cc, test_util.h, pass_testing.h, te_test_kernels.h, server_test_main.cc,
# test_functions.cc, foo_fuzz.cc.
TEST_FILE = re.compile(r"(^|_)test(s|ing)?(_|\.)|^test_|_fuzz\.")


def parse_table(design_md):
    """{row: (allowed, test_allowed)}; entries are folder names or header paths."""
    text = design_md.read_text()
    m = re.search(r"<!-- layers: begin -->(.*?)<!-- layers: end -->", text, re.S)
    if not m:
        raise SystemExit(f"{design_md}: no layer table (expected <!-- layers: begin --> ... <!-- layers: end -->)")
    rows = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue  # header, separator or prose
        names = TICKED.findall(cells[0])
        if len(names) != 1:
            raise SystemExit(f"{design_md}: layer table row {line.strip()!r}: expected one folder in the first cell")
        allowed = set(TICKED.findall(cells[1]))
        test_allowed = set(TICKED.findall(cells[2])) if len(cells) > 2 else set()
        rows[names[0].rstrip("/") + ("/" if names[0].endswith("/") else "")] = (allowed, test_allowed)
    if not rows:
        raise SystemExit(f"{design_md}: the layer table has no rows")
    return rows


def closure(rows, start):
    """Every folder/header reachable from the entries in `start` through the rows' first column."""
    seen, todo = set(), list(start)
    while todo:
        entry = todo.pop()
        if entry in seen:
            continue
        seen.add(entry)
        if entry in rows:
            todo.extend(rows[entry][0])
    return seen


def included_target(path):
    """'anvil/tir/stmt.h' -> ('tir', 'tir/stmt.h'); None for anything else."""
    if not path.startswith("anvil/"):
        return None
    rest = path[len("anvil/"):]
    folder = rest.split("/", 1)[0]
    return folder, rest


def check(root):
    root = Path(root).resolve()
    rows = parse_table(root / "docs" / "design.md")
    src = root / "src" / "anvil"
    problems = []

    for row, (allowed, test_allowed) in rows.items():
        for entry in allowed | test_allowed:
            if entry.endswith(".h") and not (src / entry).is_file():
                problems.append(f"docs/design.md: layer table row `{row}` names {entry}, which does not exist")

    # Folders to check: every folder of src/anvil, and the rows that are paths from the root.
    roots = {}
    for d in sorted(p for p in src.iterdir() if p.is_dir()):
        if d.name not in rows:
            problems.append(f"src/anvil/{d.name}/: no row in the layer table of docs/design.md")
            continue
        roots[d.name] = d
    for row in rows:
        if row.endswith("/") and (root / row).is_dir():
            roots[row] = root / row

    checked = 0
    for row, folder in roots.items():
        allowed, test_allowed = rows[row]
        own = set() if row.endswith("/") else {row}
        base = own | {"base"}
        may = closure(rows, allowed | base)
        may_test = closure(rows, allowed | test_allowed | base)
        for path in sorted(folder.rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            checked += 1
            rel = path.relative_to(root)
            is_test = bool(TEST_FILE.search(path.name))
            ok = may_test if is_test else may
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                bracket, name = m.groups()
                where = f"{rel}:{number}: #include {bracket}{name}{'>' if bracket == '<' else chr(34)}"
                target = included_target(name)
                if target is None:
                    if bracket == '"' and ("/" in name or not (path.parent / name).is_file()):
                        problems.append(f"{where}: not a file next to it; Anvil includes are full paths "
                                        f"from src/ (\"anvil/<folder>/...\")")
                    continue
                t_folder, t_path = target
                if t_folder not in rows:
                    problems.append(f"{where}: anvil/{t_folder}/ has no row in the layer table of docs/design.md")
                    continue
                if t_folder in ok or t_path in ok:
                    continue
                kind = "test file" if is_test else "file"
                listed = ", ".join(sorted(ok - {row})) or "nothing"
                problems.append(f"{where}: a {kind} of `{row}` may include only {listed} "
                                f"(layer table in docs/design.md)")
    return problems, checked


def main(argv):
    root = argv[1] if len(argv) > 1 else Path(__file__).resolve().parents[1]
    problems, checked = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"layering: {len(problems)} problem(s) in {checked} files")
        return 1
    print(f"layering: {checked} files follow the layer table of docs/design.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
