#!/usr/bin/python3
"""pytorch_gemm.py — the products of a BERT-base encoder layer timed alone in
PyTorch (fp32 F.linear, the call nn.Linear makes), to set beside the
product regions of `attnbench explain --measure` on the same machine:

    /usr/bin/python3 reports/pytorch_gemm.py [THREADS[,THREADS...]] [M[,M...]]

Why: an encoder layer's time is ~90% products (QKV, output, the two FFN
products). When attnbench and PyTorch are even on a whole layer, this says
whether the products themselves (PyTorch's BLAS against attnbench's packed
GEMM) are where the difference is, region by region.

M is the number of token rows (default 512 and 1024: B 1 L 512 and B 8 L
128). Each product is timed as the median of 7 repetitions of as many calls
as fill ~0.05 s, after a warm-up; printed as ms and GFLOP/s (2·M·N·K per
call; the bias add is not counted), and the process's CPU time over the
wall time of those calls ("cpu/wall"): about the threads really busy, since
a BLAS that ignores torch.set_num_threads (Debian's OpenBLAS build does)
would otherwise pass for a faster core. stdlib + torch only.
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

D, FF = 768, 3072
PRODUCTS = [("QKV", D, 3 * D), ("output", D, D), ("FFN 1", D, FF), ("FFN 2", FF, D)]


def time_call(fn):
    fn()
    fn()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.05 or calls < 2:
        fn()
        calls += 1
    reps, cpu0, wall0 = [], time.process_time(), time.perf_counter()
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        reps.append((time.perf_counter() - start) / calls)
    busy = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    return statistics.median(reps), busy


def main():
    threads = [int(t) for t in (sys.argv[1] if len(sys.argv) > 1 else "1").split(",")]
    rows = [int(m) for m in (sys.argv[2] if len(sys.argv) > 2 else "512,1024").split(",")]
    torch.manual_seed(0)
    blas = [w for w in torch.__config__.show().replace(",", " ").split() if w.startswith("BLAS_INFO")]
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads by default, "
          f"{blas[0] if blas else 'BLAS_INFO not given'}")
    print(f"{'M':>5} {'product':<8} {'K':>5} {'N':>5} {'threads':>7} {'ms':>9} {'GFLOP/s':>9} {'cpu/wall':>8}")
    for n in threads:
        torch.set_num_threads(n)
        for m in rows:
            for name, k, out in PRODUCTS:
                x = torch.rand(m, k) - 0.5
                w = (torch.rand(out, k) - 0.5) * 0.05
                b = torch.rand(out) - 0.5
                with torch.no_grad():
                    sec, busy = time_call(lambda: F.linear(x, w, b))
                print(f"{m:>5} {name:<8} {k:>5} {out:>5} {n:>7} {sec * 1e3:>9.3f} "
                      f"{2.0 * m * k * out / sec / 1e9:>9.1f} {busy:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
