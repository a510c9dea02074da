# The TIR pass order is written in one place, run_stages in src/anvil/pipeline/build.cc. Any
# documentation that spells out a chain of passes (`simplify` → `loop_partition` → ...) must
# agree with it: each chain of two or more passes is a contiguous run of the build's order.
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD_CC = ROOT / "src" / "anvil" / "pipeline" / "build.cc"
# A chain: names (optionally in backticks) joined by arrows, across line breaks.
CHAIN = re.compile(r"`?[\w:]+`?(?:\s*→\s*`?[\w:]+`?)+")


def build_order():
    text = BUILD_CC.read_text()
    body = text[text.index("run_stages("):]
    body = body[:body.index("\n}\n")]
    passes = re.findall(r'after\("[^"]*",\s*p::(\w+)\(', body)
    assert len(passes) >= 5, f"could not read the pass order from run_stages in {BUILD_CC}: {passes}"
    return ["te::lower"] + passes


def doc_chains(order):
    """(file, chain) for every arrow chain naming at least two passes of `order`."""
    known = set(order)
    pages = sorted((ROOT / "src").rglob("*.md")) + sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
    for page in pages:
        text = re.sub(r"\s+", " ", page.read_text())
        for match in CHAIN.finditer(text):
            names = [n.strip("`") for n in re.split(r"\s*→\s*", match.group(0))]
            if sum(n in known for n in names) >= 2:
                yield page.relative_to(ROOT), names


def is_contiguous_run(names, order):
    return any(order[i:i + len(names)] == names for i in range(len(order) - len(names) + 1))


def test_build_order_is_readable():
    order = build_order()
    assert order[:4] == ["te::lower", "simplify", "select_to_if", "loop_partition"], order
    assert order[-1] == "lower_parallel", order


def test_documented_pass_chains_match_the_build():
    order = build_order()
    chains = list(doc_chains(order))
    assert any(str(page) == "src/anvil/pipeline/README.md" for page, _ in chains), \
        "pipeline/README.md should list the pass order"
    wrong = [f"{page}: {' → '.join(names)}" for page, names in chains if not is_contiguous_run(names, order)]
    assert not wrong, ("documented pass order differs from run_stages in pipeline/build.cc "
                       f"({' → '.join(order)}):\n" + "\n".join(wrong))


def test_a_reordered_chain_is_caught():
    order = build_order()
    assert is_contiguous_run(["select_to_if", "loop_partition", "simplify"], order)
    assert not is_contiguous_run(["select_to_if", "loop_partition", "simplify", "vectorize", "unroll"], order)
