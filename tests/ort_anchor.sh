#!/bin/sh
# tests/ort_anchor.sh — the ONNX Runtime anchor (reports/ort_anchor.py):
#   its self-test (every graph form against numpy on small shapes, auto's form
#   choices, a short timed run whose JSON is read back); its refusals (exit
#   status 2, nothing written); and reports/anchor_table.py reading attnbench,
#   PyTorch and ONNX Runtime files together (one column set per peer; the rate
#   column: tokens/s for op=generate, sequences/s for op=bert, or both).
# The anchor reads its shapes from the attnbench binary ($1, default
# build/attnbench). Skipped (exit 0, with a line saying why) when the Python
# modules (Debian's python3-onnx, python3-numpy), node, the npm package (npm ci
# --prefix reports/ort_anchor) or the binary are missing.
#     PYTHON=/usr/bin/python3 sh tests/ort_anchor.sh [build/attnbench]
set -u
cd "$(dirname "$0")/.." || exit 1
PYTHON=${PYTHON:-/usr/bin/python3}
bin=${1:-build/attnbench}

if ! "$PYTHON" -c 'import numpy, onnx' 2>/dev/null; then
    echo "ort_anchor: skipped (no python3-onnx / numpy for $PYTHON)"; exit 0
fi
if ! command -v node >/dev/null || [ ! -f reports/ort_anchor/node_modules/onnxruntime-node/package.json ]; then
    echo "ort_anchor: skipped (no node, or no npm ci --prefix reports/ort_anchor)"; exit 0
fi
if [ ! -x "$bin" ]; then
    echo "ort_anchor: skipped (no attnbench at $bin: make)"; exit 0
fi

fails=0
fail() { echo "FAIL ort_anchor: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

"$PYTHON" reports/ort_anchor.py --self-test --attnbench "$bin" >"$tmp/self-test.out" 2>&1 \
    || { cat "$tmp/self-test.out"; fail "--self-test"; }

# Refusals: exit status 2, no file (the shape and the op: attnbench's refusals).
for args in "--threads 0" "--repetitions 0" "--sdpa-form flash" "--shape op=sdpa,L=0" \
            "--suite default --shape op=sdpa" "--op nope"; do
    # shellcheck disable=SC2086  # the arguments are split on purpose
    "$PYTHON" reports/ort_anchor.py $args --attnbench "$bin" --json "$tmp/refused.json" >/dev/null 2>&1
    code=$?
    [ "$code" = 2 ] || fail "'$args' exited with $code, not 2"
    [ ! -e "$tmp/refused.json" ] || fail "'$args' wrote its file"
done
# Without the binary there are no shapes: exit status 1, said, no file.
"$PYTHON" reports/ort_anchor.py --shape op=sdpa,L=4 --attnbench "$tmp/none" --json "$tmp/refused.json" \
    >"$tmp/none.out" 2>&1
code=$?
[ "$code" = 1 ] || fail "no attnbench: exited with $code, not 1"
[ ! -e "$tmp/refused.json" ] || fail "no attnbench: wrote its file"
grep -q "$tmp/none not found.*build it first: make" "$tmp/none.out" \
    || fail "no attnbench: not said: $(cat "$tmp/none.out")"

# A shape without a graph is named as not built, and nothing fails.
"$PYTHON" reports/ort_anchor.py --shape 'op=generate,P=2,N=2,M=2,D=8,H=2' --threads 1 \
    --attnbench "$bin" >"$tmp/generate.out" 2>&1 || fail "op=generate: exit status $?"
grep -q "1 shape not built" "$tmp/generate.out" || fail "op=generate is not reported as not built"

# anchor_table.py: attnbench, PyTorch and ONNX Runtime side by side. The three
# files are one ORT run under three kernel names, so every speedup is 1.00×.
# The run has an sdpa and an op=bert shape: bert's rate column is sequences/s.
bert=op=bert,B=2,L=8,layers=1,D=16,H=2,F=32,mask=padding
if "$PYTHON" reports/ort_anchor.py --shape "op=sdpa,B=1,L=16,H=2,Dh=8;$bert" --threads 1 --repetitions 2 \
        --min-time 0.001 --attnbench "$bin" --json "$tmp/ort.json" >/dev/null 2>&1; then
    sed 's#/onnxruntime/#/avx512/#; s#"kernel": "onnxruntime"#"kernel": "avx512"#' "$tmp/ort.json" >"$tmp/ours.json"
    sed 's#/onnxruntime/#/pytorch/#; s#"kernel": "onnxruntime"#"kernel": "pytorch"#' "$tmp/ort.json" >"$tmp/torch.json"
    "$PYTHON" reports/anchor_table.py "$tmp/ours.json" "$tmp/torch.json" "$tmp/ort.json" >"$tmp/table.md" \
        || fail "anchor_table.py: exit status $?"
    grep -q "| PyTorch | GFLOP/s | ONNX Runtime | GFLOP/s | sequences/s (ours / PyTorch / ONNX Runtime) |" \
        "$tmp/table.md" || fail "anchor_table.py: no PyTorch and ONNX Runtime columns: $(head -1 "$tmp/table.md")"
    grep -q "| sdpa | B1_H2_L16_Dh8 | 1 | avx512 |.*| – | \*\*1.00×\*\* | \*\*1.00×\*\* |" "$tmp/table.md" \
        || fail "anchor_table.py: the sdpa row: $(grep '| sdpa |' "$tmp/table.md")"
    # The bert row: B / median (sequences/s, 3 digits, no exponent) on each side,
    # from the JSON.
    seq=$("$PYTHON" - "$tmp/ort.json" <<'EOF'
import json, sys
b = [e for e in json.load(open(sys.argv[1]))["benchmarks"]
     if e.get("aggregate_name") == "median" and e["run_name"].startswith("bert/")][0]
ok = abs(b["sequences_per_second"] * b["real_time"] / 1e9 - 2) < 1e-6
x = b["sequences_per_second"]
print(("%.0f" % x if x >= 100 else "%.3g" % x) if ok else "wrong")
EOF
)
    grep -q "| bert | B2_D16_H2_L8_layers1_F32_post_gelu_padding | 1 | avx512 |.*| $seq / $seq / $seq | \*\*1.00×\*\* | \*\*1.00×\*\* |" \
        "$tmp/table.md" || fail "anchor_table.py: the bert row ($seq sequences/s): $(grep '| bert |' "$tmp/table.md")"
    "$PYTHON" reports/anchor_table.py "$tmp/ours.json" "$tmp/torch.json" >"$tmp/table1.md"
    grep -q "| PyTorch | GFLOP/s | sequences/s (ours / PyTorch) | speedup | memory (ours / PyTorch) |" \
        "$tmp/table1.md" || fail "anchor_table.py: PyTorch alone: $(head -1 "$tmp/table1.md")"
    # Without a rate the column keeps its name (tokens/s); with op=generate rows
    # too (made here from the bert rows) it is both, each rate with its unit.
    "$PYTHON" - "$tmp" <<'EOF'
import json, sys
d = sys.argv[1]
for side in ("ours", "torch"):
    j = json.load(open(f"{d}/{side}.json"))
    sdpa = dict(j, benchmarks=[e for e in j["benchmarks"] if e["run_name"].startswith("sdpa/")])
    json.dump(sdpa, open(f"{d}/{side}-sdpa.json", "w"))
    gen = []
    for e in j["benchmarks"]:
        if e["run_name"].startswith("bert/"):
            e = dict(e, run_name="generate/" + e["run_name"].split("/", 1)[1])
            if "sequences_per_second" in e:
                e["tokens_per_second"] = 1000.0
                del e["sequences_per_second"], e["ms_per_sequence"]
            gen.append(e)
    j["benchmarks"] += gen
    json.dump(j, open(f"{d}/{side}-mixed.json", "w"))
EOF
    "$PYTHON" reports/anchor_table.py "$tmp/ours-sdpa.json" "$tmp/torch-sdpa.json" >"$tmp/table2.md"
    grep -q "| PyTorch | GFLOP/s | tokens/s (ours / PyTorch) | speedup |" "$tmp/table2.md" \
        || fail "anchor_table.py: no rate: $(head -1 "$tmp/table2.md")"
    "$PYTHON" reports/anchor_table.py "$tmp/ours-mixed.json" "$tmp/torch-mixed.json" >"$tmp/table3.md"
    grep -q "| tokens/s or sequences/s (ours / PyTorch) |" "$tmp/table3.md" \
        && grep -q "| bert | .*| $seq / $seq seq/s |" "$tmp/table3.md" \
        && grep -q "| generate | .*| 1000 / 1000 tok/s |" "$tmp/table3.md" \
        || fail "anchor_table.py: generate and bert rows: $(cat "$tmp/table3.md")"
else
    fail "a timed run for anchor_table.py"
fi

if [ "$fails" -eq 0 ]; then
    echo "ort_anchor: all passed ($(tail -1 "$tmp/self-test.out"))"
    exit 0
fi
exit 1
