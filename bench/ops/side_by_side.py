# What the single-operator benchmarks here share: a per-call time that is robust to the timer's
# resolution (calls repeated until a minimum time passed; the median of several such repeats).
import time


def per_call_ms(run, runs=1, min_ms=30.0):
    """Median over `runs` repeats of the mean time of one call of run(), in ms; each repeat calls
    run() until min_ms passed (one untimed call first warms it)."""
    run()
    times = []
    for _ in range(runs):
        n, t0 = 0, time.perf_counter()
        while True:
            run()
            n += 1
            dt = (time.perf_counter() - t0) * 1e3
            if dt >= min_ms:
                break
        times.append(dt / n)
    times.sort()
    return times[len(times) // 2]
