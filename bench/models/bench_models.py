#!/usr/bin/env python3
# Latency of the end-to-end models, Anvil against ONNX Runtime side by side (issues 11 and 12):
# ResNet-18, MobileNetV2, the MiniLM-style encoder (tests/models/make_models.py, seeded random
# weights) and PP-OCRv4 detection and recognition (real weights, from rapidocr-onnxruntime), at
# each --batch (the models' batch dim is symbolic; the OCR models keep their H/W: 640x640 and
# 48x320) and each --threads. Per (model, batch): Anvil's compile time (and ORT's session creation,
# its graph optimisation, beside Anvil's library load), then for each thread count each engine in
# its own fresh process (engines.py: so peak RSS is that engine's alone) — warm-up runs, then the
# median of --runs timed runs. ORT: intra_op_num_threads = threads, sequential execution. Anvil:
# ANVIL_NUM_THREADS. Peers beside ORT (issue 12):
#   OpenVINO   a column whenever `import openvino` works (pip install openvino, or
#              scripts/setup.sh --bench): INFERENCE_NUM_THREADS, INFERENCE_PRECISION_HINT=f32;
#              ratio anvil/openvino and anvil/(the faster of ORT and OpenVINO);
#   TVM        with --tvm: Apache TVM untuned (Relax ONNX frontend, default pipeline), a reference
#              column only, tens of times slower: --tvm-runs timed runs at most, stopped after
#              --tvm-budget-s per cell, at the batches of --tvm-batch (default 1).
# Each engine's outputs of the first thread count are compared with ORT's (max |diff| / max |ORT|).
# --compile-resnet50: compile time of ResNet-50 (onnx's light graph with random weights,
# resnet50.py) for Anvil (target < 15 s) and TVM untuned when installed. --overhead: the VM's
# per-call overhead on batch-1 MobileNetV2 (vm_overhead.py; target < 1 %). --issue12 turns on
# everything issue 12's tables need (--batch 1 8, --tvm, --compile-resnet50, --overhead).
# Peak RSS also for the C++ runtime-only runner (examples/runtime_only/run_model.cc: the library
# on libanvil_runtime alone, what a deployment pays; the Python worker's `import anvil` loads the
# compiler and LLVM too, about 55 MB resident before any model), when it is on PATH.
# Prints a table, the geometric means of the ratios, the load average at the start and the end,
# and as the last line the JSON summary
#   {"bench": "models", "rows": [{"model", "batch", "threads", "anvil_ms", "ort_ms", "ratio", ...}, ...], ...}
#
#   source scripts/env.sh && python3 bench/models/bench_models.py [--models resnet18,...] [--runs 20]
#       [--batch 1 8] [--threads 1,2] [--tvm] [--compile-resnet50] [--overhead] [--issue12]
"""Model latency, compile time and peak RSS: Anvil vs ONNX Runtime (and OpenVINO, TVM)."""
import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "models"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import engines  # noqa: E402  (the worker processes)

MODELS = ["resnet18", "mobilenetv2", "minilm", "ocr_det", "ocr_rec"]


# The runtime-only runner's peak RSS: a small Python process spawns it and reads its children's
# ru_maxrss (no copy of this big process is made, so the figure is the runner's own).
RUNTIME_ONLY = r"""
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""


def runtime_only_rss(lib, params_path, threads, outdir):
    """Peak RSS (MB) of anvil_runtime_only_run_model on the library, or None without it."""
    runner = shutil.which("anvil_runtime_only_run_model")
    if runner is None:
        return None
    env = dict(os.environ, ANVIL_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", RUNTIME_ONLY, runner, lib, params_path,
                          os.path.join(outdir, "runtime_only_out.params")], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"runtime-only runner on {lib}: {out.stderr.strip()[-2000:]}")
    return float(out.stdout.strip().splitlines()[-1])


def model_file(name, outdir, batch=1):
    """(path, input names in order, {name: array} at `batch`)."""
    import numpy as np
    import onnx
    rng = np.random.default_rng(0)
    if name.startswith("ocr_"):
        import real_models
        path = real_models.det_model_path() if name == "ocr_det" else real_models.rec_model_path()
        feed = real_models.det_input(batch) if name == "ocr_det" else real_models.rec_input(batch)
        return str(path), ["x"], feed
    import make_models
    path = make_models.save(name, outdir)
    feed = make_models.random_inputs(name, batch, rng)
    names = [i.name for i in onnx.load(str(path), load_external_data=False).graph.input]
    return str(path), [n for n in names if n in feed], feed


def worker(engine, model, inputs_path, threads, warmup, runs, input_names):
    """One engine's timing in a fresh process (engines.worker; kept here for older callers)."""
    return engines.worker(engine, model, inputs_path, threads, warmup, runs, input_names)


def compile_anvil(path, feed, lib):
    """Import + compile + export with Anvil, in this process; seconds."""
    import anvil
    from anvil import frontend
    t0 = time.perf_counter()
    mod = frontend.from_onnx(path, shape={k: v.shape for k, v in feed.items()})
    anvil.compile(mod, target="llvm").export_library(lib)
    return time.perf_counter() - t0


def numbers(values):
    """--batch 1 8 / --batch 1,8 / --threads 1,2 -> [1, 8]."""
    return [int(v) for item in values for v in str(item).split(",") if v]


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def load_average():
    return [round(x, 2) for x in os.getloadavg()]


def fmt(value, spec, width):
    return f"{'-' if value is None else format(value, spec):>{width}}"


def print_table(rows, with_ov, with_tvm):
    head = (f"{'model':<12} {'batch':>5} {'thr':>3} {'anvil ms':>10} {'ort ms':>10} {'ratio':>7} "
            f"{'anvil MB':>9} {'ort MB':>8} {'rt-only MB':>10}")
    if with_ov:
        head += f" {'ov ms':>10} {'a/ov':>7} {'a/best':>7} {'ov MB':>8}"
    if with_tvm:
        head += f" {'tvm ms':>11} {'tvm/ort':>8}"
    print("\n" + head)
    for r in rows:
        line = (f"{r['model']:<12} {r['batch']:>5} {r['threads']:>3} {r['anvil_ms']:>10.3f} {r['ort_ms']:>10.3f} "
                f"{r['ratio']:>7.3f} {r['anvil_rss_mb']:>9.1f} {r['ort_rss_mb']:>8.1f} "
                f"{fmt(r['anvil_runtime_only_rss_mb'], '.1f', 10)}")
        if with_ov:
            line += (f" {fmt(r.get('openvino_ms'), '.3f', 10)} {fmt(r.get('ratio_openvino'), '.3f', 7)}"
                     f" {fmt(r.get('ratio_best_peer'), '.3f', 7)} {fmt(r.get('openvino_rss_mb'), '.1f', 8)}")
        if with_tvm:
            line += f" {fmt(r.get('tvm_ms'), '.1f', 11)} {fmt(r.get('tvm_over_ort'), '.1f', 8)}"
        print(line)


def summarize_ratios(rows, with_ov, with_tvm):
    """Prints the geometric means (overall and per batch/threads) and returns them for the JSON."""
    out = {}

    def report(key, label, target=None):
        cells = [r for r in rows if r.get(key) is not None]
        if not cells:
            return
        g = geomean([r[key] for r in cells])
        worst = max(cells, key=lambda r: r[key])
        met = sum(r[key] <= 1.0 for r in cells)
        line = (f"geometric mean {label}: {g:.3f} over {len(cells)} cells; <= 1.0 in {met}/{len(cells)}; "
                f"worst {worst['model']} batch {worst['batch']} {worst['threads']} thr {worst[key]:.3f}")
        if target is not None:
            line += f" (target: geomean <= {target}, every cell <= 1.0)"
        print(line)
        groups = {}
        for r in cells:
            groups.setdefault((r["batch"], r["threads"]), []).append(r[key])
        by_group = {bt: geomean(v) for bt, v in sorted(groups.items())}
        if len(by_group) > 1:
            print("  " + ", ".join(f"batch {b} {t} thr {v:.3f}" for (b, t), v in by_group.items()))
        out[key] = {"geomean": round(g, 3), "cells": len(cells), "cells_le_1": met,
                    "by_batch_threads": {f"{b}x{t}": round(v, 3) for (b, t), v in by_group.items()}}

    print()
    report("ratio", "anvil/ort", 0.85)
    if with_ov:
        report("ratio_openvino", "anvil/openvino")
        report("ratio_best_peer", "anvil/faster of ort and openvino")
        report("openvino_over_ort", "openvino/ort")
    if with_tvm:
        cells = [r["tvm_over_ort"] for r in rows if r.get("tvm_over_ort") is not None]
        if cells:
            print(f"geometric mean tvm/ort (untuned TVM, reference only): {geomean(cells):.1f} over {len(cells)} cells")
            out["tvm_over_ort"] = {"geomean": round(geomean(cells), 2), "cells": len(cells)}
    return out


def compile_resnet50(tmp, with_tvm):
    """Anvil's (and TVM's) compile time of the randomised light ResNet-50."""
    import resnet50
    path, input_name, feed = resnet50.save(tmp)
    result = {"model": "resnet50 (onnx light graph, random weights)", "batch": 1,
              "anvil_compile_s": round(compile_anvil(path, feed, os.path.join(tmp, "resnet50.so")), 2)}
    if with_tvm:
        try:
            t = engines.tvm_compile(path, {input_name: list(feed[input_name].shape)},
                                    os.path.join(tmp, "resnet50_tvm.so"))
            result["tvm_compile_s"] = round(t["compile_s"], 2)
            result["tvm_input"] = t["input"]
        except RuntimeError as e:
            result["tvm_error"] = str(e)[:400]
    return result


def print_resnet50(result):
    if "tvm_compile_s" in result:
        tvm = f"TVM {engines.tvm_version()} untuned {result['tvm_compile_s']} s"
    else:
        tvm = f"TVM failed: {result['tvm_error']}" if "tvm_error" in result else "TVM skipped: pip install apache-tvm"
    verdict = "met" if result["anvil_compile_s"] < 15 else "MISSED"
    print(f"compile resnet50 (onnx light graph, random weights, batch 1, import to library): "
          f"Anvil {result['anvil_compile_s']} s (target < 15 s: {verdict}), {tvm}")


def print_overhead(threads, o):
    verdict = "met" if o["plain_overhead_pct"] < 1.0 else "MISSED"
    print(f"vm overhead mobilenetv2 batch 1, {threads} thr (medians of {o['reps']} rounds): call - kernels = "
          f"{o['plain_overhead_us']:.1f} us = {o['plain_overhead_pct']:.2f} % of a call (target < 1 %: {verdict}; "
          f"run-to-run noise included; call {o['call_us']:.0f} us, kernels {o['kernel_us']:.0f} us in "
          f"{o['kernel_calls']} calls); builtins "
          f"{o['builtin_us']:.1f} us in {o['builtin_calls']} calls; in one profiled run wall - kernels = "
          f"{o['in_run_overhead_us']:.1f} us = {o['in_run_overhead_pct']:.2f} % (upper bound: with the profiler's "
          f"bookkeeping)")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batch", nargs="+", default=["1"], help="batch sizes, e.g. --batch 1 8 (default 1)")
    ap.add_argument("--threads", nargs="+", default=["1,2"], help="thread counts, e.g. --threads 1,2 (default)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--no-openvino", action="store_true", help="leave out the OpenVINO column even if installed")
    ap.add_argument("--tvm", action="store_true", help="add the TVM-untuned reference column (slow)")
    ap.add_argument("--tvm-runs", type=int, default=3, help="TVM: timed runs per cell at most (default 3)")
    ap.add_argument("--tvm-warmup", type=int, default=1)
    ap.add_argument("--tvm-budget-s", type=float, default=60.0,
                    help="TVM: stop timing a cell after this many seconds, once it has one run (default 60)")
    ap.add_argument("--tvm-batch", nargs="+", default=["1"], help="batches TVM runs at (default 1)")
    ap.add_argument("--compile-resnet50", action="store_true",
                    help="compile time of ResNet-50 (onnx light graph, random weights): Anvil and TVM")
    ap.add_argument("--overhead", action="store_true", help="the VM's per-call overhead on batch-1 MobileNetV2")
    ap.add_argument("--overhead-reps", type=int, default=30)
    ap.add_argument("--issue12", action="store_true",
                    help="issue 12's tables: --batch 1 8 --tvm --compile-resnet50 --overhead (explicit --batch wins)")
    args = ap.parse_args()
    if args.issue12:
        args.tvm = args.compile_resnet50 = args.overhead = True
        if args.batch == ["1"]:
            args.batch = ["1", "8"]
    batches, thread_counts, tvm_batches = numbers(args.batch), numbers(args.threads), set(numbers(args.tvm_batch))
    import numpy as np
    import anvil

    load_start = load_average()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus; "
          f"load average {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}")
    if load_start[0] > 0.5 * (os.cpu_count() or 1):
        print(f"note: load average {load_start[0]:.2f} on {os.cpu_count()} cpus: the machine is busy, "
              f"timings are noisy")
    with_ov = not args.no_openvino and engines.available("openvino")
    with_tvm = args.tvm and engines.available("tvm")
    if args.no_openvino:
        print("openvino: skipped (--no-openvino)")
    elif not with_ov:
        print("openvino: skipped: pip install openvino (or scripts/setup.sh --bench)")
    if args.tvm and not with_tvm:
        print("tvm: skipped: pip install apache-tvm")
    versions = {"onnxruntime": engines.version("onnxruntime"),
                "openvino": engines.version("openvino") if with_ov else None,
                "tvm": engines.tvm_version() if with_tvm else None}
    rows, compile_rows, errors, overhead, resnet50 = [], [], [], [], None
    libs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            for batch in batches:
                path, input_names, feed = model_file(name, tmp, batch)
                tag = f"{name}_b{batch}"
                inputs_path = os.path.join(tmp, f"{tag}_inputs.npz")
                np.savez(inputs_path, **feed)
                params_path = os.path.join(tmp, f"{tag}_inputs.params")
                with open(params_path, "wb") as f:
                    f.write(anvil.runtime.save_params({n: anvil.tensor(np.ascontiguousarray(feed[n])) for n in input_names}))
                lib = os.path.join(tmp, f"{tag}.so")
                compile_s = compile_anvil(path, feed, lib)
                libs[(name, batch)] = (lib, inputs_path, input_names)
                crow = {"model": name, "batch": batch, "compile_s": round(compile_s, 2)}
                compile_rows.append(crow)
                print(f"{name}{'' if batch == 1 else f' batch {batch}'}: compiled in {compile_s:.1f} s")
                tvm_lib = None
                if with_tvm and batch in tvm_batches:
                    tvm_lib = os.path.join(tmp, f"{tag}_tvm.so")
                    try:
                        t = engines.tvm_compile(path, {n: list(feed[n].shape) for n in input_names}, tvm_lib)
                        crow["tvm_compile_s"] = round(t["compile_s"], 2)
                        crow["tvm_input"] = t["input"]
                        print(f"{name}{'' if batch == 1 else f' batch {batch}'}: TVM compiled in {t['compile_s']:.1f} s"
                              + ("" if t["input"] == "original" else f" ({t['input']})"))
                    except RuntimeError as e:
                        tvm_lib = None
                        crow["tvm_error"] = str(e)[:400]
                        print(f"{name} batch {batch}: TVM failed: {crow['tvm_error']}")
                for threads in thread_counts:
                    first = threads == thread_counts[0]
                    outs = {e: os.path.join(tmp, f"{tag}_{e}_out.npz") if first else ""
                            for e in ("anvil", "ort", "openvino", "tvm")}
                    a = engines.worker("anvil", lib, inputs_path, threads, args.warmup, args.runs, input_names,
                                       out_path=outs["anvil"])
                    o = engines.worker("ort", path, inputs_path, threads, args.warmup, args.runs, input_names,
                                       out_path=outs["ort"])
                    rt = runtime_only_rss(lib, params_path, threads, tmp)
                    row = {"model": name, "batch": batch, "threads": threads, "anvil_ms": round(a["median_ms"], 3),
                           "ort_ms": round(o["median_ms"], 3), "ratio": round(a["median_ms"] / o["median_ms"], 3),
                           "anvil_rss_mb": round(a["peak_rss_mb"], 1), "ort_rss_mb": round(o["peak_rss_mb"], 1),
                           "anvil_runtime_only_rss_mb": None if rt is None else round(rt, 1)}
                    if first:
                        crow.update({"anvil_load_s": round(a["load_s"], 3), "ort_session_s": round(o["load_s"], 3)})
                    if with_ov:
                        v = engines.worker("openvino", path, inputs_path, threads, args.warmup, args.runs, input_names,
                                           out_path=outs["openvino"])
                        row.update({"openvino_ms": round(v["median_ms"], 3),
                                    "ratio_openvino": round(a["median_ms"] / v["median_ms"], 3),
                                    "ratio_best_peer": round(a["median_ms"] / min(o["median_ms"], v["median_ms"]), 3),
                                    "openvino_over_ort": round(v["median_ms"] / o["median_ms"], 3),
                                    "openvino_rss_mb": round(v["peak_rss_mb"], 1),
                                    "openvino_precision": v.get("precision")})
                        if first:
                            crow["openvino_compile_s"] = round(v["load_s"], 3)
                        if v.get("precision") != "f32":
                            errors.append(f"{name} batch {batch}: OpenVINO ran in {v.get('precision')}, not f32")
                    if tvm_lib is not None:
                        try:  # a reference column: its failure is reported, not fatal
                            t = engines.worker("tvm", tvm_lib, inputs_path, threads, args.tvm_warmup, args.tvm_runs,
                                               input_names, budget_s=args.tvm_budget_s, out_path=outs["tvm"])
                            row.update({"tvm_ms": round(t["median_ms"], 3), "tvm_runs": t["runs"],
                                        "tvm_over_ort": round(t["median_ms"] / o["median_ms"], 2)})
                        except RuntimeError as e:
                            errors.append(f"{name} batch {batch} {threads} thr: TVM run failed: "
                                          f"{engines.error_line(str(e))[:300]}")
                    rows.append(row)
                    if first:  # every engine's outputs against ORT's, once per (model, batch)
                        for e in ("anvil", "openvino", "tvm"):
                            if os.path.exists(outs[e]):
                                err = engines.max_error(outs[e], outs["ort"])
                                crow[f"{e}_max_rel_err"] = None if err is None else float(f"{err:.3g}")
                                if err is None or err > 1e-3:
                                    what = ("shapes/count differ" if err is None
                                            else f"max |diff| / max |ORT| = {err:.3g}")
                                    errors.append(f"{name} batch {batch}: {e} outputs differ from ORT's ({what})")
        if args.compile_resnet50:
            resnet50 = compile_resnet50(tmp, engines.available("tvm"))
        if args.overhead:
            if ("mobilenetv2", 1) not in libs:
                path, input_names, feed = model_file("mobilenetv2", tmp, 1)
                inputs_path = os.path.join(tmp, "mobilenetv2_b1_inputs.npz")
                np.savez(inputs_path, **feed)
                lib = os.path.join(tmp, "mobilenetv2_b1.so")
                compile_anvil(path, feed, lib)
                libs[("mobilenetv2", 1)] = (lib, inputs_path, input_names)
            import vm_overhead
            for threads in thread_counts:
                o = vm_overhead.measure(*libs[("mobilenetv2", 1)], threads, reps=args.overhead_reps,
                                        warmup=args.warmup)
                overhead.append({"model": "mobilenetv2", "batch": 1, "threads": threads,
                                 **{k: round(v, 3) if isinstance(v, float) else v for k, v in o.items()}})
    print_table(rows, with_ov, any("tvm_ms" in r for r in rows))
    for c in compile_rows:
        label = c["model"] if c["batch"] == 1 else f"{c['model']} batch {c['batch']}"
        line = (f"compile {label}: Anvil {c['compile_s']} s (import to library; then import + load + VM "
                f"{c.get('anvil_load_s', float('nan'))} s), ONNX Runtime import + session creation {c.get('ort_session_s', float('nan'))} s")
        if "openvino_compile_s" in c:
            line += f", OpenVINO import + read + compile {c['openvino_compile_s']} s"
        if "tvm_compile_s" in c:
            line += f", TVM untuned import to library {c['tvm_compile_s']} s"
        print(line)
    errs = [c for c in compile_rows if any(k.endswith("_max_rel_err") for k in c)]
    if errs:
        print("outputs vs ORT (max |diff| / max |ORT|): " + "; ".join(
            f"{c['model']} b{c['batch']} " + " ".join(f"{e} {c[e + '_max_rel_err']}"
                                                      for e in ("anvil", "openvino", "tvm") if e + "_max_rel_err" in c)
            for c in errs))
    for e in errors:
        print(f"warning: {e}")
    geo = summarize_ratios(rows, with_ov, with_tvm)
    if resnet50 is not None or overhead:
        print()
    if resnet50 is not None:
        print_resnet50(resnet50)
    for o in overhead:
        print_overhead(o["threads"], o)
    load_end = load_average()
    print(f"load average after: {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}")
    summary = {"bench": "models", "rows": rows, "compile": compile_rows}
    summary.update({"geomean": geo, "load_average": {"start": load_start, "end": load_end}, "versions": versions})
    if resnet50 is not None:
        summary["compile_resnet50"] = resnet50
    if overhead:
        summary["vm_overhead"] = overhead
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
