# Totals of a conformance run and the docs/conformance.md report: per-operator counts, every test
# that did not pass with its reason, and as the very last line one JSON object of the headline
# figures ({"conformance": "onnx-node", ...}) for scripts to track.
import collections
import datetime
import platform
import re

# The reason a pass carries when the runner bound inputs at compile time (bind_inputs.py).
BOUND_PREFIX = "shape input bound at compile time: "


def summarise(cases, results, version):
    """Counts over `results` ({name: (outcome, reason)}); tests that never reported count as failed."""
    totals = collections.Counter()
    per_op = collections.defaultdict(collections.Counter)
    misses, bound = [], []
    for case in cases:
        outcome, reason = results.get(case.name, ("fail", "no result (the run was interrupted)"))
        if case.kind == "light":
            totals["light_total"] += 1
            totals["light_pass"] += outcome == "pass"
        else:
            totals["all_total"] += 1
            totals[f"all_{outcome}"] += 1
            is_bound = outcome == "pass" and reason.startswith(BOUND_PREFIX)
            totals["all_pass_bound"] += is_bound
            if case.planned:
                totals["planned_total"] += 1
                totals["planned_pass"] += outcome == "pass"
                totals["planned_pass_bound"] += is_bound
            if is_bound:
                bound.append((case, reason[len(BOUND_PREFIX):]))
            per_op[case.op][outcome] += 1
            per_op[case.op]["planned"] += case.planned
        if outcome != "pass":
            misses.append((case, outcome, reason))
    for key in ("all_pass", "all_fail", "all_unsupported", "planned_pass", "planned_total", "light_pass",
                "light_total", "all_total", "all_pass_bound", "planned_pass_bound"):
        totals.setdefault(key, 0)
    line = {"conformance": "onnx-node", "onnx": version, "planned_pass": totals["planned_pass"],
            "planned_total": totals["planned_total"], "all_pass": totals["all_pass"],
            "all_total": totals["all_total"], "light_pass": totals["light_pass"],
            "planned_pass_bound": totals["planned_pass_bound"]}
    return {"totals": dict(totals), "per_op": per_op, "misses": misses, "bound": bound, "json": line,
            "version": version}


def cause(reason):
    """A reason with its names and numbers blanked, so that reasons of one cause group together."""
    r = re.sub(r"node (\d+|'[^']*') \(([\w.]+), opset \d+\)", r"node (\2)", reason)
    r = re.sub(r"'[^']*'", "'…'", r)
    r = re.sub(r"\[[^\]]*\]", "[…]", r)
    r = re.sub(r"\(at [\w.]+:\d+\)", "", r)
    return re.sub(r"\d+(\.\d+)?(e-?\d+)?", "N", r).strip()[:140]


def causes(misses, planned_only):
    """[(count, outcome, cause)] of the misses, most frequent first."""
    counts = collections.Counter((outcome, cause(reason)) for case, outcome, reason in misses
                                 if case.planned or not planned_only)
    return [(n, outcome, c) for (outcome, c), n in counts.most_common()]


def _pct(n, d):
    return f"{100 * n / d:.1f} %" if d else "-"


def write_doc(path, summary, backend, min_planned=None):
    import json

    t, per_op = summary["totals"], summary["per_op"]
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# ONNX conformance",
        "",
        f"The ONNX backend node tests of onnx {summary['version']} (one model per test, with input and",
        "expected-output protobufs) and the nine `light` model graphs, run by",
        f"`tests/conformance/run_node_tests.py --backend {backend}` ({when}, {platform.machine()}) and compared",
        "by onnx's own rule: same number of outputs, same shapes and dtypes, then `assert_allclose` with",
        "rtol 1e-3 and atol 1e-7. *Planned* tests are those whose operators are all in issue 11's list.",
        "",
        "| | pass | total | rate |",
        "|---|---:|---:|---:|",
        f"| planned node tests | {t['planned_pass']} | {t['planned_total']} | "
        f"{_pct(t['planned_pass'], t['planned_total'])} |",
        f"| planned, none bound at compile time | {t['planned_pass'] - t['planned_pass_bound']} | "
        f"{t['planned_total']} | {_pct(t['planned_pass'] - t['planned_pass_bound'], t['planned_total'])} |",
        f"| all node tests | {t['all_pass']} | {t['all_total']} | {_pct(t['all_pass'], t['all_total'])} |",
        f"| light model graphs | {t['light_pass']} | {t['light_total']} | {_pct(t['light_pass'], t['light_total'])} |",
        "",
        f"Of all node tests {t['all_fail']} fail and {t['all_unsupported']} are unsupported by the backend.",
        "",
        "Many tests feed an operator's shape-like argument (axes, pads, a Reshape's shape, TopK's k,",
        "Resize's scales, Range's bounds) as a graph input. Anvil compiles such a model once and takes",
        "the value at run time: integer values become symbolic dims the VM binds (`tensor_to_shape`),",
        "axes become one variant per possible set picked by a run-time `if`, and floats are read by the",
        "kernel. Where the importer still needs a value at import, the runner binds that input to the",
        "test's value (`from_onnx(..., input_values=...)`) and compiles once per data set; such passes",
        "are *passes with the shape input bound at compile time*, listed apart and counted in",
        f"`planned_pass` (`planned_pass_bound` in the JSON line): {t['all_pass_bound']} here "
        f"({t['planned_pass_bound']} planned).",
        "",
        "## Per operator",
        "",
        "An expanded test (the operator's function body spelled out) counts under its operator.",
        "",
        "| operator | planned | tests | pass | fail | unsupported |",
        "|---|:---:|---:|---:|---:|---:|",
    ]
    for op in sorted(per_op, key=str.lower):
        c = per_op[op]
        tests = c["pass"] + c["fail"] + c["unsupported"]
        planned = "yes" if c["planned"] == tests else ("no" if c["planned"] == 0 else f"{c['planned']}/{tests}")
        lines.append(f"| {op} | {planned} | {tests} | {c['pass']} | {c['fail']} | {c['unsupported']} |")
    if min_planned is not None:
        lines += ["", f"`scripts/test.sh` runs this and fails below a planned pass rate of {100 * min_planned:.0f} % "
                  "(`--min-planned`), issue 11's target."]
    lines += ["", "## Causes of the planned tests that do not pass", "",
              "Reasons with names and numbers blanked (N, '…'); the table after it gives each test's own.", "",
              "| tests | outcome | cause |", "|---:|---|---|"]
    for n, outcome, c in causes(summary["misses"], planned_only=True):
        lines.append(f"| {n} | {outcome} | {c.replace('|', chr(92) + '|')} |")
    lines += ["", "## Tests that do not pass", ""]
    misses = sorted(summary["misses"], key=lambda m: (not m[0].planned, m[0].kind, m[0].name))
    if not misses:
        lines.append("None.")
    else:
        lines += ["| test | planned | outcome | reason |", "|---|:---:|---|---|"]
        for case, outcome, reason in misses:
            reason = reason.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {case.name} | {'yes' if case.planned else 'no'} | {outcome} | {reason} |")
    lines += ["", "## Passes with an input bound at compile time", ""]
    if not summary["bound"]:
        lines.append("None.")
    else:
        lines += ["| test | planned | bound inputs |", "|---|:---:|---|"]
        for case, names in sorted(summary["bound"], key=lambda b: b[0].name):
            lines.append(f"| {case.name} | {'yes' if case.planned else 'no'} | {names} |")
    lines += ["", json.dumps(summary["json"])]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
