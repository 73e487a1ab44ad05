#!/usr/bin/env python3
"""list_json.py — `attnbench list --json`, the shapes tools outside C read
(docs/json-format.md), against the other outputs of attnbench:

  1. the suites and shapes agree with `list --suites`'s text (names, canonical
     texts in order, GFLOP);
  2. a shape's "keys" say all of it: the text written from them alone reads
     back (`list --json --shape`) as the same shape, label, FLOPs and bytes;
  3. what `run` reports: every shape of the smoke, gate and check suites
     (every op, every mask kind, the edge sizes) is run once, and each
     benchmark's shape, label, flops and bytes are the list's;
  4. bad shapes and flags are refused (exit status 2, nothing on stdout).

Usage: tests/list_json.py path/to/attnbench. stdlib only. Last line:
"list_json: N passed, N failed".
"""
import json
import os
import subprocess
import sys
import tempfile

AB = sys.argv[1] if len(sys.argv) > 1 else "build/attnbench"
RUN_SUITES = ("smoke", "gate", "check")
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL list_json: {what}")
    return ok


def attnbench(*args):
    return subprocess.run([AB, *args], capture_output=True, text=True, timeout=600)


def listed(*args):
    p = attnbench("list", "--json", *args)
    if not check(p.returncode == 0, f"list --json {' '.join(args)} exited {p.returncode}: {p.stderr}"):
        sys.exit(1)
    return json.loads(p.stdout)


def text_from_keys(shape):
    """The shape's text from its op and keys alone (every key given)."""
    def value(v):
        return v if isinstance(v, str) else repr(v) if isinstance(v, float) else str(v)
    return ",".join([f"op={shape['op']}"] + [f"{k}={value(v)}" for k, v in shape["keys"].items()])


def main():
    data = listed("--suites")
    ops = {o["name"]: o for o in data["ops"]}
    suites = {s["name"]: s["shapes"] for s in data["suites"]}

    # 1. The text listing: the same suites, shapes and GFLOP.
    p = attnbench("list", "--suites")
    text, current = {}, None
    for line in p.stdout.splitlines():
        if line.startswith("suite "):
            current = text.setdefault(line.split()[1].rstrip(":"), [])
        elif line.startswith("  op=") and current is not None:
            shape, gflop = line.split()[0], line.split()[1]
            current.append((shape, gflop))
    check(list(text) == list(suites), f"suites {list(suites)} != the text's {list(text)}")
    for name, shapes in suites.items():
        want = [(s["shape"], "%.3g" % (s["flops"] / 1e9)) for s in shapes]
        check(text.get(name) == want, f"suite {name}: JSON {want} != text {text.get(name)}")
        for s in shapes:
            check(s["op"] in ops and set(s["keys"]) <= set(ops[s["op"]]["keys"])
                  and s["keys"]["mask"] in ops[s["op"]]["masks"],
                  f"{s['shape']}: keys or mask not the op's ({ops.get(s['op'])})")

    # 2. The keys say all: every shape written from its keys reads back as itself.
    every = [s for shapes in suites.values() for s in shapes]
    chunks, chunk = [], []
    for s in every:   # --shape takes up to 2 KiB of text
        if chunk and len(";".join(text_from_keys(c) for c in chunk + [s])) >= 2000:
            chunks.append(chunk)
            chunk = []
        chunk.append(s)
    for chunk in chunks + [chunk]:
        back = listed("--shape", ";".join(text_from_keys(s) for s in chunk))["shapes"]
        for s, b in zip(chunk, back):
            check(s == b, f"{text_from_keys(s)} reads back as {b}, not {s}")
        check(len(back) == len(chunk), f"{len(chunk)} shapes read back as {len(back)}")

    # 3. What run reports, shape by shape.
    with tempfile.TemporaryDirectory() as tmp:
        for name in RUN_SUITES:
            out = os.path.join(tmp, f"{name}.json")
            p = attnbench("run", "--suite", name, "--kernel", "blocked", "--threads", "1",
                          "--iterations", "1", "--repetitions", "1", "--precision", "0",
                          "--max-call-time", "0", "--no-peaks", "--json", out)
            if not check(p.returncode == 0, f"run --suite {name} exited {p.returncode}: {p.stderr}"):
                continue
            runs = [b for b in json.load(open(out))["benchmarks"] if b.get("run_type") == "iteration"]
            by_shape = {b["shape"]: b for b in runs}
            check(len(by_shape) == len(suites[name]),
                  f"run --suite {name}: {len(by_shape)} shapes, the list has {len(suites[name])}")
            for s in suites[name]:
                b = by_shape.get(s["shape"])
                if not check(b is not None, f"{s['shape']}: not in run --suite {name}"):
                    continue
                check(b["run_name"] == f"{s['op']}/blocked/{s['label']}/threads:1",
                      f"{s['shape']}: run name {b['run_name']}, label {s['label']}")
                check(b["flops"] == s["flops"] and b["bytes"] == s["bytes"],
                      f"{s['shape']}: run {b['flops']} FLOPs {b['bytes']} bytes, "
                      f"list {s['flops']} {s['bytes']}")

    # 4. Refusals.
    for args in (["list", "--json", "--shape", "op=sdpa,F=8"], ["list", "--json", "--shape", "B=0"],
                 ["list", "--shape", "B=1"], ["list", "--json", "--op", "conv"],
                 ["list", "--suites", "--json", "--shape", "B=1"]):
        p = attnbench(*args)
        check(p.returncode == 2 and p.stdout == "" and p.stderr.startswith("attnbench list: "),
              f"{' '.join(args)}: exit {p.returncode}, stdout {p.stdout[:80]!r}, stderr {p.stderr!r}")
    # A key the op does not take is named with the op's keys.
    p = attnbench("list", "--json", "--shape", "op=encoder,scale=1")
    check("op=encoder takes no scale" in p.stderr, f"op=encoder,scale=1: {p.stderr!r}")

    print(f"list_json: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
