# The VM's per-call overhead (issue 12: < 1 % of batch-1 MobileNetV2): what one call of a model's
# `main` costs beyond its compiled kernels. In a fresh process on the model's library, --reps
# rounds of: one plain call of main (the VM invoke `anvil run` times, here from Python), then
# VirtualMachine.profile (the table of `anvil run --profile`: it runs main once to warm up, then
# once instrumented). Three figures over the rounds:
#   plain:     the median of the plain call's time minus the kernel sum (rows not named
#              vm.builtin.*) of the profiled run after it: interpreter dispatch + builtins
#              (allocation, shape checks) + the Python call; the figure the target is judged on.
#              The two come from different runs, so on a shared machine run-to-run variation
#              (easily 1 % of a 10 ms model) shows in it: more --overhead-reps and an idle machine
#              narrow it;
#   min:       the fastest plain call minus the smallest kernel sum (in the JSON only: on a busy
#              machine the two minima come from differently disturbed runs and can be far apart);
#   in-run:    the profiled run's wall time minus its kernel sum, inside one run (no run-to-run
#              noise) but with the profiler's own bookkeeping per call (argument-shape strings,
#              device syncs, records) on top: an upper bound.
"""VM per-call overhead: a model's call time against the sum of its kernel times."""
import json
import os
import subprocess
import sys

OVERHEAD = r"""
import json, statistics, sys, time
import numpy as np
import anvil
from anvil import runtime
lib, inputs_path, names = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
reps, warmup = int(sys.argv[4]), int(sys.argv[5])
data = np.load(inputs_path)
args = [data[n] for n in names]
vm = runtime.VirtualMachine(runtime.load_module(lib), anvil.cpu())
main = vm["main"]
for _ in range(warmup):
    main(*args)
call_us, wall_us, kernel_us, builtin_us, plain_gap, in_run_gap = [], [], [], [], [], []
for _ in range(reps):
    t0 = time.perf_counter()
    main(*args)
    call = (time.perf_counter() - t0) * 1e6
    report = json.loads(vm.profile("main", *args).json())
    kernels = sum(r["total_us"] for r in report["rows"] if not r["name"].startswith("vm.builtin."))
    call_us.append(call)
    wall_us.append(report["wall_us"])
    kernel_us.append(kernels)
    builtin_us.append(report["total_us"] - kernels)
    in_run_gap.append(report["wall_us"] - kernels)
    plain_gap.append(call - kernels)
med = statistics.median
print(json.dumps({"reps": reps, "call_us": med(call_us), "profiled_wall_us": med(wall_us), "kernel_us": med(kernel_us),
                  "builtin_us": med(builtin_us), "in_run_overhead_us": med(in_run_gap),
                  "in_run_overhead_pct": 100 * med([g / w for g, w in zip(in_run_gap, wall_us)]),
                  "plain_overhead_us": med(plain_gap),
                  "plain_overhead_pct": 100 * med([g / c for g, c in zip(plain_gap, call_us)]),
                  "min_overhead_us": min(call_us) - min(kernel_us),
                  "min_overhead_pct": 100 * (min(call_us) - min(kernel_us)) / min(call_us),
                  "kernel_calls": sum(r["calls"] for r in report["rows"] if not r["name"].startswith("vm.builtin.")),
                  "builtin_calls": sum(r["calls"] for r in report["rows"] if r["name"].startswith("vm.builtin."))}))
"""


def measure(lib, inputs_path, input_names, threads, reps=30, warmup=3):
    """The overhead figures (see the header) of `lib` on the saved inputs, at `threads`."""
    env = dict(os.environ, ANVIL_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", OVERHEAD, lib, inputs_path, json.dumps(input_names), str(reps),
                          str(warmup)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"vm overhead on {lib}: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])
