#!/usr/bin/python3
"""anchor_table.py — attnbench beside PyTorch: one Markdown table from the JSON
files of `attnbench run` and `reports/pytorch_anchor.py` (same schema).

    /usr/bin/python3 reports/anchor_table.py FILE.json...

The files' benchmarks of kernel "pytorch" are PyTorch's, the others
attnbench's (e.g. ATTNBENCH.json PYTORCH.json, or one pair per suite).

For every benchmark present in both (matched by op, shape and thread count;
the kernel part of the run name differs), prints both medians, GFLOP/s and
%-of-peak; for memory-bound calls (attnbench gives pct_read_bw: decoding)
attnbench's GB/s and its fraction of the measured read bandwidth; for
op=generate both sides' new tokens per second; the speedup (PyTorch time /
attnbench time) and, when measured (--memory), the resident memory each
call added. Standard library only.
"""
import json
import sys


def medians(path):
    """{(op, shape label, threads): median aggregate entry} of one JSON file."""
    with open(path) as f:
        data = json.load(f)
    out = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") != "aggregate" or b.get("aggregate_name") != "median":
            continue
        op, kernel, label, threads = b["run_name"].split("/")
        out[(op, label, threads)] = dict(b, kernel=kernel)
    return out


def fmt_time(ns):
    return f"{ns / 1e6:.3g} ms" if ns < 1e9 else f"{ns / 1e9:.3g} s"


def fmt_mib(b):
    return "–" if b.get("extra_rss_bytes") is None else f"{b['extra_rss_bytes'] / 2**20:.1f} MiB"


def fmt_bandwidth(b):
    """GB/s and % of the read bandwidth, for calls attnbench judges by it."""
    pct = b.get("pct_read_bw")
    return "–" if pct is None else f"{b['bytes'] / b['real_time']:.1f} ({pct:.0f}%)"


def fmt_tokens(a, p):
    if a.get("tokens_per_second") is None or p.get("tokens_per_second") is None:
        return "–"
    return f"{a['tokens_per_second']:.0f} / {p['tokens_per_second']:.0f}"


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    ours, theirs = {}, {}
    try:
        for path in argv[1:]:
            for key, b in medians(path).items():
                (theirs if b["kernel"] == "pytorch" else ours)[key] = b
    except (OSError, ValueError, KeyError) as e:
        print(f"anchor_table: {e}", file=sys.stderr)
        return 1
    print("| op | shape | thr | kernel | median | GFLOP/s | % peak | GB/s (% read bw) | PyTorch "
          "| GFLOP/s | tokens/s (ours / PyTorch) | speedup | memory (ours / PyTorch) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in ours:
        if key not in theirs:
            continue
        a, p = ours[key], theirs[key]
        pct = a.get("pct_peak")
        print(f"| {key[0]} | {key[1]} | {key[2].split(':')[1]} | {a['kernel']} "
              f"| {fmt_time(a['real_time'])} | {a['GFLOPS']:.1f} "
              f"| {'–' if pct is None else f'{pct:.0f}%'} | {fmt_bandwidth(a)} "
              f"| {fmt_time(p['real_time'])} | {p['GFLOPS']:.1f} | {fmt_tokens(a, p)} "
              f"| **{p['real_time'] / a['real_time']:.2f}×** "
              f"| {fmt_mib(a)} / {fmt_mib(p)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
