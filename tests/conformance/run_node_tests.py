#!/usr/bin/env python3
"""Runs the ONNX backend node tests (onnx 1.22.0's data: 1765 single-operator models with inputs
and expected outputs) and the nine `light` model graphs on a backend, compares by onnx's rule
(rtol 1e-3, atol 1e-7, shapes and dtypes must match) and prints pass / fail / unsupported per test.

    tests/conformance/run_node_tests.py [--backend anvil|ort] [-k REGEX] [--jobs N]
                                        [--timeout S] [--write-doc docs/conformance.md]

The data comes from tests/conformance/fetch_node_tests.sh (run here when --data is not given).
Each test runs in a worker process under a timeout, so a crash or a hang is that test's failure.
"Planned" tests are those whose operators are all in issue 11's list (node_tests.PLANNED_OPS).
Exit status: 0 when the run completed (and --min-planned, if given, was reached), 1 when it was
not reached, 2 when the backend is not available here.
"""
import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import time
import traceback
from multiprocessing.connection import wait
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import backends  # noqa: E402
import node_tests  # noqa: E402
from conformance_doc import BOUND_PREFIX, causes, summarise, write_doc  # noqa: E402

DATA_VERSION = "1.22.0"


def _run_case(run, case):
    names, sets = node_tests.data_sets(case)
    if not sets:
        return "fail", "no test_data_set in the test directory"
    bound = set()
    for inputs, expected in sets:
        actual = run(case.model, inputs, names)
        bound |= set(getattr(run, "bound_inputs", ()))
        reason = node_tests.check_outputs(expected, list(actual), case.rtol)
        if reason:
            return "fail", reason
    # A pass that needed inputs bound at compile time says so (conformance_doc counts it apart).
    return "pass", (BOUND_PREFIX + ", ".join(sorted(bound))) if bound else ""


def _worker(backend_name, conn):
    """Runs cases sent over `conn` until it receives None; answers (index, outcome, reason, seconds)."""
    try:
        run = backends.make(backend_name)
    except backends.BackendUnavailable as e:
        conn.send(("unavailable", str(e)))
        return
    conn.send(("ready", ""))
    while True:
        task = conn.recv()
        if task is None:
            return
        index, case = task
        start = time.perf_counter()
        try:
            outcome, reason = _run_case(run, case)
        except backends.Unsupported as e:
            outcome, reason = "unsupported", str(e)
        except Exception as e:  # noqa: BLE001 - any other error is this test's failure
            frame = traceback.extract_tb(e.__traceback__)[-1]
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            outcome = "fail"
            reason = f"{type(e).__name__}: {first}"[:240] + f" (at {Path(frame.filename).name}:{frame.lineno})"
        conn.send((index, outcome, reason[:300], time.perf_counter() - start))


class Pool:
    """N spawned workers; a worker that dies or overruns the timeout is replaced."""

    def __init__(self, backend, jobs, timeout):
        self.ctx = multiprocessing.get_context("spawn")
        self.backend, self.timeout = backend, timeout
        self.workers = [self._start() for _ in range(jobs)]

    def _start(self):
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(self.backend, child), daemon=True)
        proc.start()
        child.close()
        kind, message = parent.recv()
        if kind == "unavailable":
            proc.join()
            raise backends.BackendUnavailable(message)
        return {"proc": proc, "conn": parent, "task": None, "since": 0.0}

    def _replace(self, w):
        w["proc"].kill()
        w["proc"].join()
        w.update(self._start())

    def run(self, cases, report):
        pending = list(enumerate(cases))[::-1]
        busy = 0
        while pending or busy:
            for w in self.workers:
                if w["task"] is None and pending:
                    w["task"], w["since"] = pending.pop(), time.monotonic()
                    w["conn"].send(w["task"])
                    busy += 1
            active = [w for w in self.workers if w["task"] is not None]
            ready = wait([w["conn"] for w in active] + [w["proc"].sentinel for w in active], timeout=1.0)
            now = time.monotonic()
            for w in active:
                index = w["task"][0]
                if w["conn"] in ready:
                    try:
                        _, outcome, reason, seconds = w["conn"].recv()
                        w["task"] = None
                        busy -= 1
                        report(index, outcome, reason, seconds)
                        continue
                    except EOFError:
                        pass
                if w["conn"] in ready or w["proc"].sentinel in ready:
                    code = w["proc"].exitcode
                    w["proc"].join()
                    why = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
                    report(index, "fail", f"worker process died ({why})", now - w["since"])
                elif now - w["since"] > self.timeout:
                    report(index, "fail", f"timed out after {self.timeout:.0f} s", now - w["since"])
                else:
                    continue
                w["task"] = None
                busy -= 1
                self._replace(w)

    def close(self):
        for w in self.workers:
            try:
                w["conn"].send(None)
            except (BrokenPipeError, OSError):
                pass
            w["proc"].join(timeout=5)
            if w["proc"].is_alive():
                w["proc"].kill()
                w["proc"].join()


def fetch_data():
    script = HERE / "fetch_node_tests.sh"
    out = subprocess.run(["bash", str(script)], check=True, stdout=subprocess.PIPE, text=True).stdout
    return out.strip().splitlines()[-1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=sorted(backends.BACKENDS), default="anvil")
    parser.add_argument("-k", dest="pattern", help="run only tests whose name matches this regular expression")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="worker processes")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per test (default 120)")
    parser.add_argument("--data", help="the data directory (holding node/ and light/); default: fetch it")
    parser.add_argument("--write-doc", type=Path, help="write the report (e.g. docs/conformance.md)")
    parser.add_argument("--min-planned", type=float, help="fail (exit 1) below this planned pass fraction")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only non-passing tests and totals")
    args = parser.parse_args(argv)

    data = args.data or fetch_data()
    cases = node_tests.discover(data, args.pattern)
    if not cases:
        print(f"no tests under {data} match {args.pattern!r}")
        return 1
    print(f"onnx {DATA_VERSION} backend tests: {len(cases)} from {data}; backend {args.backend}, "
          f"{args.jobs} jobs, {args.timeout:.0f} s timeout")
    results = {}
    start = time.perf_counter()

    def report(index, outcome, reason, seconds):
        case = cases[index]
        results[case.name] = (outcome, reason)
        if outcome != "pass" or reason or not args.quiet:
            tail = f": {reason}" if reason else ""
            print(f"{outcome.upper():11s} {case.name} ({seconds:.2f} s){tail}", flush=True)

    try:
        pool = Pool(args.backend, max(1, args.jobs), args.timeout)
    except backends.BackendUnavailable as e:
        print(f"backend {args.backend} not available: {e}")
        return 2
    try:
        pool.run(cases, report)
    finally:
        pool.close()

    summary = summarise(cases, results, DATA_VERSION)
    t = summary["totals"]
    print(f"\n{t['all_pass']}/{t['all_total']} node tests pass ({t['all_fail']} fail, {t['all_unsupported']} "
          f"unsupported); planned {t['planned_pass']}/{t['planned_total']} "
          f"({100 * t['planned_pass'] / max(1, t['planned_total']):.1f} %, {t['planned_pass_bound']} of them with "
          f"a shape input bound at compile time); light {t['light_pass']}/"
          f"{t['light_total']}; {time.perf_counter() - start:.0f} s")
    if not args.quiet or args.write_doc:
        print("\nplanned tests that do not pass, by cause:")
        for n, outcome, c in causes(summary["misses"], planned_only=True):
            print(f"{n:5d} {outcome:11s} {c}")
    if args.write_doc:
        write_doc(args.write_doc, summary, args.backend, args.min_planned)
        print(f"wrote {args.write_doc}")
    print(json.dumps(summary["json"]))
    if args.min_planned is not None and t["planned_pass"] < args.min_planned * t["planned_total"]:
        print(f"planned pass rate below {args.min_planned:.3f}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
