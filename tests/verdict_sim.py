#!/usr/bin/python3
"""verdict_sim.py — how often `attnbench compare` calls what is not there,
and catches what is, on simulated files (docs/verdicts.md, "Simulated").

    /usr/bin/python3 tests/verdict_sim.py ATTNBENCH TRIALS CELL...

A cell is REPS:SIGMA:BENCH:RUNS:SHIFT — each of BENCH benchmarks (true
times 1, 1.5, 2, ... ms) gets REPS repetitions, each lognormal with SIGMA
(a run's median then moves by about SIGMA / sqrt(REPS)), in RUNS files a
side of Google Benchmark JSON as any program writes it; NEW's true times
are SHIFT times BASE's (1: an A/A pair). Per cell, over TRIALS pairs of
sides: how many exited 1 (a regression called somewhere), how many rows
were called, and how many times the whole-run line called a regression.
Not run by `make test` (minutes); needs numpy (python3-numpy)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def write_side(path, rng, reps, sigma, n_bench, shift):
    rows = []
    for i in range(n_bench):
        true = 1e-3 * (1 + 0.5 * i) * shift
        for k, t in enumerate(true * np.exp(rng.normal(0.0, sigma, reps))):
            rows.append({"name": "BM_%d" % i, "run_name": "BM_%d" % i, "run_type": "iteration",
                         "repetitions": reps, "repetition_index": k, "threads": 1,
                         "iterations": 100, "real_time": float(t) * 1e9, "time_unit": "ns"})
    with open(path, "w") as f:
        json.dump({"context": {"host_name": "sim"}, "benchmarks": rows}, f)


def cell(ab, trials, spec, seed):
    reps, sigma, n_bench, runs, shift = spec.split(":")
    reps, sigma, n_bench, runs, shift = int(reps), float(sigma), int(n_bench), int(runs), float(shift)
    rng = np.random.default_rng(seed)
    exit1 = rows_called = whole_called = 0
    with tempfile.TemporaryDirectory() as d:
        for _ in range(trials):
            sides = []
            for side, factor in (("a", 1.0), ("b", shift)):
                paths = [os.path.join(d, "%s%d.json" % (side, r)) for r in range(runs)]
                for p in paths:
                    write_side(p, rng, reps, sigma, n_bench, factor)
                sides.append(",".join(paths))
            out = os.path.join(d, "v.json")
            rc = subprocess.run([ab, "compare", sides[0], sides[1], "--json", out],
                                capture_output=True).returncode
            if rc == 2:
                sys.exit("%s: compare exited 2" % spec)
            v = json.load(open(out))
            exit1 += rc == 1
            rows_called += sum(r["verdict"] == "REGRESSION" for r in v["rows"])
            whole_called += sum(r["verdict"] == "REGRESSION" for r in v.get("whole_run", []))
    print("%-22s trials %4d  exit 1: %4d (%5.1f%%)  rows called: %5d of %6d  whole run called: %4d"
          % (spec, trials, exit1, 100.0 * exit1 / trials, rows_called, trials * n_bench,
             whole_called), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    for i, spec in enumerate(sys.argv[3:]):
        cell(os.path.abspath(sys.argv[1]), int(sys.argv[2]), spec, 12345 + i)
