#!/usr/bin/env python3
# float32 matmul / dense on the Vulkan device 0 (Mesa's lavapipe here and in CI): Anvil's GPU
# GEMM schedule (ops/gpu/matmul_gpu.cc: 64x64 tiles of A and B staged in workgroup memory with
# barriers, a 4x4 block of C per invocation in registers (8x8 and 128x128 tiles from 256 rows
# and columns), unrolled inner k; 1..8 rows: one output per invocation, 256 columns per
# workgroup, no staging) against IREE's Vulkan back end (pip iree-base-compiler /
# iree-base-runtime, a linalg.matmul compiled with
# --iree-hal-target-device=vulkan) on the same device, in the same process, plus numpy
# (OpenBLAS) on the CPU as a reference column only.
#
# lavapipe is a CPU emulation of a GPU (LLVM-compiled shaders on the host's cores): on it this
# compares the quality of the two compilers' kernels, not GPU speed. Another Vulkan device (a
# real GPU) works the same way; its name is printed.
#
# The Anvil kernel is built here with anvil.te and the same schedule as the "gpu" rows of
# nn.dense / matmul (their parameters: _schedule below mirrors matmul_gpu.cc). Both engines are
# checked against numpy float64 first (rtol 1e-4 of the |A|.|B| scale). A figure is the median
# over --runs repeats of the per-call time (each repeat runs calls until --min-ms passed; the
# engines take turns per repeat). Prints a table, the load average, and as the last line
#   {"bench": "vulkan_matmul", "device": ..., "rows": [{"name", "m", "n", "k", "anvil_ms",
#    "iree_ms", "numpy_ms", "anvil_over_iree"}, ...]}
# anvil_over_iree = Anvil time / IREE time (< 1: Anvil faster).
#
#   source scripts/env.sh && python3 bench/vulkan/matmul_bench.py [--runs 5] [--min-ms 200] [--only 512]
"""float32 matmul on the Vulkan device: Anvil vs IREE (vulkan-spirv), numpy as a CPU reference."""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

SEED = 20261207
# (name, M, N, K, dense: B given as [N, K])
CASES = [
    ("matmul 512", 512, 512, 512, False),
    ("matmul 1024", 1024, 1024, 1024, False),
    ("dense 1x1536x384", 1, 1536, 384, True),
    ("dense 8x1536x384", 8, 1536, 384, True),
]


def _schedule(te, s, C, params=None):
    """The gpu rows' schedule (ops/gpu/matmul_gpu.cc) on C[M, N] = sum_k A[i, k] * B(k, j)."""
    m = int(C.shape[0])
    tm, tn, thr_m, thr_n, kt = params or (4, 4, 16, 16, 16)
    if params is None and m >= 256 and int(C.shape[1]) >= 256:
        tm = tn = 8
    stage = True
    if params is None and m <= 8:  # one output per invocation, operands read in place
        tm, tn, thr_m, stage = 1, 1, 1, False
        while thr_m < m:
            thr_m *= 2
        thr_n = max(64, 256 // thr_m)
    operands = list(C.op.input_tensors)
    CL = s.cache_write(C, "local")
    i, j = C.op.axis
    io, ii = s[C].split(i, factor=tm)
    bi, ti = s[C].split(io, factor=thr_m)
    jo, ji = s[C].split(j, factor=tn)
    bj, tj = s[C].split(jo, factor=thr_n)
    s[C].reorder(bi, bj, ti, tj, ii, ji)
    s[C].bind(bi, te.thread_axis("blockIdx.y"))
    s[C].bind(bj, te.thread_axis("blockIdx.x"))
    t = s[C].fuse(ti, tj)
    s[C].bind(t, te.thread_axis("threadIdx.x"))
    s[C].unroll(ii)
    s[C].unroll(ji)
    s[CL].compute_at(s[C], t)
    ko, ki = s[CL].split(CL.op.reduce_axis[0], factor=kt)
    li, lj = CL.op.axis
    s[CL].reorder(ko, ki, li, lj)
    for ax in (ki, li, lj):
        s[CL].unroll(ax)
    for x in operands if stage else []:
        X = s.cache_read(x, "shared", [CL])
        s[X].compute_at(s[CL], ko)
        f = s[X].fuse(*X.op.axis)
        _, fi = s[X].split(f, factor=thr_m * thr_n)
        s[X].bind(fi, te.thread_axis("threadIdx.x"))


def anvil_kernel(anvil, m, n, k, dense):
    from anvil import te
    A = te.placeholder((m, k), "float32", name="A")
    B = te.placeholder((n, k) if dense else (k, n), "float32", name="B")
    r = te.reduce_axis((0, k), name="k")
    if dense:
        C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[j, r], axis=r), name="C")
    else:
        C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    s = te.create_schedule(C.op)
    _schedule(te, s, C)
    return anvil.build(s, [A, B, C], target="vulkan")


def iree_kernel(m, n, k, dense):
    import iree.compiler as ic
    import iree.runtime as rt
    bt = f"tensor<{n}x{k}xf32>" if dense else f"tensor<{k}x{n}xf32>"
    op = "linalg.matmul"
    if dense:  # B read transposed: the indexing maps of linalg.matmul
        op += (" indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>,"
               " affine_map<(d0, d1, d2) -> (d0, d1)>]")
    text = f"""
func.func @mm(%a: tensor<{m}x{k}xf32>, %b: {bt}) -> tensor<{m}x{n}xf32> {{
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{m}x{n}xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %r = {op} ins(%a, %b : tensor<{m}x{k}xf32>, {bt}) outs(%f : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}"""
    vmfb = ic.compile_str(text, target_backends=(), extra_args=["--iree-hal-target-device=vulkan"])
    cfg = rt.Config("vulkan")
    ctx = rt.SystemContext(config=cfg)
    ctx.add_vm_module(rt.VmModule.copy_buffer(cfg.vm_instance, vmfb))
    return cfg, ctx.modules.module["mm"]


def iree_to_host(rt, device, arr):
    """Device array -> numpy through a mappable staging buffer (lavapipe refuses the host-pointer
    import DeviceArray.to_host tries: minImportedHostPointerAlignment 4096)."""
    src = arr._buffer_view.get_buffer()
    mem = int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE)
    use = int(rt.BufferUsage.TRANSFER_TARGET | rt.BufferUsage.MAPPING_SCOPED)
    host = device.allocator.allocate_buffer(memory_type=mem, allowed_usage=use, allocation_size=src.byte_length())
    sem = device.create_semaphore(0)
    device.queue_copy(src, host, wait_semaphores=rt.HalFence.create_at(sem, 0),
                      signal_semaphores=rt.HalFence.create_at(sem, 1))
    rt.HalFence.create_at(sem, 1).wait()
    return np.array(host.map().asarray(tuple(arr.shape), np.dtype(np.float32)))


def per_call_ms(fn, min_ms):
    fn()
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        el = (time.perf_counter() - start) * 1e3
        if el >= min_ms:
            return el / calls


def check(name, engine, got, want, scale):
    err = float(np.max(np.abs(got.astype(np.float64) - want) / (scale + 1e-30)))
    if err > 1e-4:
        sys.exit(f"{name}: {engine} differs from numpy float64 (max error {err:.2e} of the |A|.|B| scale)")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--min-ms", type=float, default=200.0)
    ap.add_argument("--only", help="run the cases whose name contains this")
    ap.add_argument("--no-iree", action="store_true", help="Anvil and numpy only")
    args = ap.parse_args()
    import anvil
    dev = anvil.vulkan(0)
    if not dev.exist:
        sys.exit("no Vulkan device (scripts/setup.sh installs mesa-vulkan-drivers: lavapipe)")
    iree_ok = not args.no_iree
    if iree_ok:
        try:
            import iree.runtime as rt
        except ImportError:
            print("iree not installed (scripts/setup.sh --bench): its column is empty")
            iree_ok = False
    dev_name = getattr(dev, "device_name", None) or "vulkan:0"
    la = os.getloadavg()
    print(f"Vulkan device: {dev_name}  (lavapipe = a CPU emulation: this compares code quality, not GPU speed)")
    print(f"{os.cpu_count()} cpus, load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}; seed {SEED}; median of {args.runs}")
    print(f"{'case':18} {'anvil ms':>10} {'iree ms':>10} {'anvil/iree':>10} {'numpy ms (CPU)':>15}")
    rng = np.random.default_rng(SEED)
    rows = []
    for name, m, n, k, dense in CASES:
        if args.only and args.only not in name:
            continue
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        b = rng.uniform(-1, 1, (n, k) if dense else (k, n)).astype(np.float32)
        bm = b.T if dense else b
        want = a.astype(np.float64) @ bm.astype(np.float64)
        scale = np.abs(a).astype(np.float64) @ np.abs(bm).astype(np.float64)
        mod = anvil_kernel(anvil, m, n, k, dense)
        ta, tb = anvil.tensor(a, device=dev), anvil.tensor(b, device=dev)
        tc = anvil.empty((m, n), "float32", device=dev)
        mod["main"](ta, tb, tc)
        check(name, "anvil", tc.numpy(), want, scale)
        def run_anvil():
            mod["main"](ta, tb, tc)
            dev.sync()
        engines = {"anvil": run_anvil, "numpy": lambda: a @ bm}
        if iree_ok:
            cfg, f = iree_kernel(m, n, k, dense)
            da, db = rt.asdevicearray(cfg.device, a), rt.asdevicearray(cfg.device, b)
            check(name, "iree", iree_to_host(rt, cfg.device, f(da, db)), want, scale)
            engines["iree"] = lambda: f(da, db)  # the default (sync) ABI waits for the device
        times = {e: [] for e in engines}
        for _ in range(args.runs):
            for e, fn in engines.items():
                times[e].append(per_call_ms(fn, args.min_ms))
        med = {e: statistics.median(v) for e, v in times.items()}
        ratio = med["anvil"] / med["iree"] if "iree" in med else None
        iree_s = f"{med['iree']:10.3f}" if "iree" in med else f"{'-':>10}"
        ratio_s = f"{ratio:10.2f}" if ratio else f"{'-':>10}"
        print(f"{name:18} {med['anvil']:10.3f} {iree_s} {ratio_s} {med['numpy']:15.3f}", flush=True)
        rows.append({"name": name, "m": m, "n": n, "k": k, "anvil_ms": round(med["anvil"], 4),
                     "iree_ms": round(med["iree"], 4) if "iree" in med else None,
                     "numpy_ms": round(med["numpy"], 4), "anvil_over_iree": round(ratio, 3) if ratio else None})
    la = os.getloadavg()
    print(f"load average after: {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}")
    print(json.dumps({"bench": "vulkan_matmul", "device": dev_name, "rows": rows}))


if __name__ == "__main__":
    main()
