#!/usr/bin/python3
"""anchor_table.py — attnbench beside its anchors (PyTorch, ONNX Runtime): one
Markdown table from the JSON files of `attnbench run`, `reports/pytorch_anchor.py`
and `reports/ort_anchor.py` (same schema).

    /usr/bin/python3 reports/anchor_table.py FILE.json...

The files' benchmarks of kernel "pytorch" are PyTorch's, of kernel "onnxruntime"
ONNX Runtime's, of the kernels "onednn" and "openblas" attnbench's library-backed
kernels' (the peers), the others attnbench's own (e.g. ATTNBENCH.json
PYTORCH.json ORT.json, one set per suite, or one file per benchmark and tool;
when a benchmark is in several files, the last one named wins).

For every attnbench benchmark that some peer has too (matched by op, shape and
thread count; the kernel part of the run name differs), prints attnbench's
median, GFLOP/s and %-of-peak; for memory-bound calls (attnbench gives
pct_read_bw: decoding) its GB/s and fraction of the measured read bandwidth;
then per peer found in the files its median and GFLOP/s; for op=generate every
side's new tokens per second, for op=bert its sequences per second (the rate
column is named after the rates the table has: tokens/s, sequences/s, or both,
each rate then followed by its unit); per peer the speedup (the peer's time / attnbench's
time), with several peers the speedup over the fastest of them, and, when
measured (--memory), the resident memory each call added. A peer without the
benchmark shows –. Standard library only.
"""
import json
import sys

from report_data import PEERS   # kernel → column name: the report's list of peers


def medians(path):
    """[((op, shape label, threads), median aggregate entry)] of one JSON file:
    one per kernel (a file of `attnbench run` may hold several)."""
    with open(path) as f:
        data = json.load(f)
    out = []
    for b in data.get("benchmarks", []):
        if b.get("run_type") != "aggregate" or b.get("aggregate_name") != "median":
            continue
        op, kernel, label, threads = b["run_name"].split("/")
        out.append(((op, label, threads), dict(b, kernel=kernel)))
    return out


def fmt_time(ns):
    return f"{ns / 1e6:.3g} ms" if ns < 1e9 else f"{ns / 1e9:.3g} s"


def fmt_mib(b):
    if b is None or b.get("extra_rss_bytes") is None:
        return "–"
    return f"{b['extra_rss_bytes'] / 2**20:.1f} MiB"


def fmt_bandwidth(b):
    """GB/s and % of the read bandwidth, for calls attnbench judges by it."""
    pct = b.get("pct_read_bw")
    return "–" if pct is None else f"{b['bytes'] / b['real_time']:.1f} ({pct:.0f}%)"


def three_digits(x):
    """3 significant digits without an exponent: 7.91, 79.1, 791, 7910."""
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


# The rates a row can give: (counter, its column name, its unit in a mixed column, format).
RATES = (("tokens_per_second", "tokens/s", "tok/s", lambda x: f"{x:.0f}"),     # op=generate
         ("sequences_per_second", "sequences/s", "seq/s", three_digits))      # op=bert


def rate_of(b):
    """The rate (RATES' entry) an attnbench median entry gives, or None."""
    return next((r for r in RATES if b.get(r[0]) is not None), None)


def fmt_rate(sides, mixed):
    """Every side's rate (the first side's kind), '–' when one lacks it."""
    rate = rate_of(sides[0])
    if rate is None or any(b is None or b.get(rate[0]) is None for b in sides):
        return "–"
    text = " / ".join(rate[3](b[rate[0]]) for b in sides)
    return f"{text} {rate[2]}" if mixed else text


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[4].strip(), file=sys.stderr)
        return 2
    ours, peers = {}, {kernel: {} for kernel in PEERS}
    try:
        for path in argv[1:]:
            for key, b in medians(path):
                peers.get(b["kernel"], ours)[key] = b
    except (OSError, ValueError, KeyError) as e:
        print(f"anchor_table: {e}", file=sys.stderr)
        return 1
    present = [(k, name) for k, name in PEERS.items() if peers[k]]
    names = " / ".join(name for _, name in present)
    head = "| op | shape | thr | kernel | median | GFLOP/s | % peak | GB/s (% read bw) "
    for _, name in present:
        head += f"| {name} | GFLOP/s "
    shown = [(key, a) for key, a in ours.items()
             if any(peers[k].get(key) for k, _ in present)]
    kinds = [r for r in RATES if any(rate_of(a) == r for _, a in shown)]
    mixed = len(kinds) > 1
    column = " or ".join(r[1] for r in kinds) if kinds else RATES[0][1]
    head += f"| {column} (ours / {names}) "
    for _, name in present:
        head += "| speedup " if len(present) == 1 else f"| speedup vs {name} "
    if len(present) > 1:
        head += "| vs the best peer "
    head += f"| memory (ours / {names}) |"
    print(head)
    print("|---" * head.count("| ") + "|")
    for key, a in shown:
        theirs = [peers[k].get(key) for k, _ in present]
        pct = a.get("pct_peak")
        row = (f"| {key[0]} | {key[1]} | {key[2].split(':')[1]} | {a['kernel']} "
               f"| {fmt_time(a['real_time'])} | {a['GFLOPS']:.1f} "
               f"| {'–' if pct is None else f'{pct:.0f}%'} | {fmt_bandwidth(a)} ")
        for p in theirs:
            row += "| – | – " if p is None else f"| {fmt_time(p['real_time'])} | {p['GFLOPS']:.1f} "
        row += f"| {fmt_rate([a] + theirs, mixed)} "
        for p in theirs:
            row += "| – " if p is None else f"| **{p['real_time'] / a['real_time']:.2f}×** "
        if len(present) > 1:
            best = min(p["real_time"] for p in theirs if p is not None)
            row += f"| **{best / a['real_time']:.2f}×** "
        row += f"| {' / '.join(fmt_mib(b) for b in [a] + theirs)} |"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
