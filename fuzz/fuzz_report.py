#!/usr/bin/python3
"""fuzz_report.py — a mutation fuzzer for the report's readers (make fuzz).

reports/report.py is Python, out of libFuzzer's reach; this feeds
reports/report_data.py's readers (load_benchmarks, read_wisdom) mutations
of the committed samples (tests/report_samples): byte flips, insertions,
truncations, and structural ones on the parsed JSON (a field deleted, set
to null, a string, a huge or negative number, a list, an object), some of
them aimed at the fields of newer attnbench files that a random walk
rarely reaches (the "summary" rows, read_gbs, the peaks' errors, the
median's interval, a failed entry's). The readers must skip what they
cannot use; any exception is a defect: the input is saved as
build/fuzz/report-crash-N and the run fails.

    /usr/bin/python3 fuzz/fuzz_report.py [--seconds S] [--seed N]
"""
import argparse
import contextlib
import copy
import io
import json
import os
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "reports"))
import report_data  # noqa: E402

ODD = [None, "", "x", -1, 0, 1e308, -1e308, float("nan"), True, [], {}, [1, "a"], {"a": None},
       2 ** 70, "2026-13-45T99:99:99+9999"]


def mutate_json(doc, rng):
    """One structural change somewhere in doc (in place)."""
    parent, key = None, None
    node = doc
    for _ in range(rng.randint(1, 6)):
        if not isinstance(node, (dict, list)) or not node:
            break
        parent, key = node, rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        node = parent[key]
        if rng.random() < 0.3:
            break
    if parent is None:
        return
    if isinstance(parent, dict) and rng.random() < 0.3:
        del parent[key]
    else:
        parent[key] = copy.deepcopy(rng.choice(ODD))   # (a shared list could nest in itself)


# Where the readers look for the fields of newer files, and those fields.
NEW_FIELDS = {
    "summary": ("op", "shape", "threads", "best", "runner_up", "ratio", "ci_low", "ci_high",
                "verdict", "kernels", "paired_rounds", "unstable"),
    "context": ("read_gbs", "peak_error", "triad_gbs", "peak_gflops", "threads", "date"),
    "benchmarks": ("peak_gflops", "peak_error", "median_precision", "median_ci_low",
                   "median_ci_high", "GBps", "pct_read_bw", "error_occurred", "real_time",
                   "time_unit", "shape"),
}


def mutate_new_fields(doc, rng):
    """One change to a field of NEW_FIELDS (in place), or to the summary
    array itself."""
    if not isinstance(doc, dict):
        return
    where = rng.choice(list(NEW_FIELDS))
    if where == "summary" and rng.random() < 0.15:
        doc["summary"] = copy.deepcopy(rng.choice(ODD))
        return
    node = doc.get(where)
    if isinstance(node, list) and node:
        node = rng.choice(node)
    if not isinstance(node, dict):
        return
    key = rng.choice(NEW_FIELDS[where])
    if rng.random() < 0.3:
        node.pop(key, None)
    else:
        node[key] = copy.deepcopy(rng.choice(ODD))


def mutate_bytes(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.random()
        if not data:
            break
        i = rng.randrange(len(data))
        if op < 0.4:
            data[i] ^= 1 << rng.randrange(8)
        elif op < 0.7:
            data[i:i] = rng.choice([b"{", b"}", b"[", b"]", b",", b'"', b"null", b"1e999", b"\xff"])
        elif op < 0.9:
            del data[i:i + rng.randint(1, 16)]
        else:
            data = data[:i]
    return bytes(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    samples = [p for p in sorted((ROOT / "tests/report_samples").glob("*.json"))]
    texts = [p.read_bytes() for p in samples]
    wisdom = (ROOT / "tests/report_samples/wisdom").read_bytes()
    out = ROOT / "build/fuzz"
    out.mkdir(parents=True, exist_ok=True)
    runs = crashes = 0
    end = time.time() + args.seconds
    with tempfile.TemporaryDirectory() as tmp:
        while time.time() < end:
            kind = rng.random()
            if kind < 0.2:
                data, name = mutate_bytes(wisdom, rng), "wisdom"
            elif kind < 0.6:
                doc = json.loads(rng.choice(texts))
                for _ in range(rng.randint(1, 4)):
                    (mutate_new_fields if rng.random() < 0.4 else mutate_json)(doc, rng)
                data, name = json.dumps(doc).encode(), "r.json"
            else:
                data, name = mutate_bytes(rng.choice(texts), rng), "r.json"
            path = Path(tmp) / name
            path.write_bytes(data)
            runs += 1
            try:
                with contextlib.redirect_stderr(io.StringIO()):
                    if name == "wisdom":
                        report_data.read_wisdom(path)
                    else:
                        report_data.load_benchmarks([path])
            except Exception:
                crashes += 1
                saved = out / f"report-crash-{crashes}{path.suffix}"
                saved.write_bytes(data)
                print(f"fuzz_report: {traceback.format_exc().strip().splitlines()[-1]} "
                      f"(input saved as {saved})", file=sys.stderr)
                if crashes >= 5:
                    break
            report_data.WARNINGS.clear()
    print(f"report   {args.seconds:8.0f} {runs:12d} {runs / max(args.seconds, 1e-9):8.0f}"
          f"        -        -        -  {'ok' if crashes == 0 else f'FAILED ({crashes} inputs)'}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
