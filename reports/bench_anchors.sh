#!/bin/sh
# reports/bench_anchors.sh — attnbench beside the libraries a user would
# otherwise pick, interleaved shape by shape (what `make bench-anchors` runs):
#
#     sh reports/bench_anchors.sh ATTNBENCH "SUITES" THREADS OUTDIR
#
# SUITES: suite names, or single shapes ("op=bert,B=1,L=128,mask=padding").
# For each shape of the suites, back to back before the next shape, so that
# load on a shared machine falls on every side alike:
#   1. `attnbench run --kernel auto` (what a caller of the library gets,
#      wisdom included), then the library kernels built in (onednn,
#      openblas: timed side by side in one process, as any kernels are);
#   2. PyTorch (reports/pytorch_anchor.py), when /usr/bin/python3 has torch;
#   3. ONNX Runtime (reports/ort_anchor.py), when python3-onnx and the npm
#      package (npm ci --prefix reports/ort_anchor) are there.
# A side that is missing is said once and left out; the rest still run.
# One JSON per shape and side in OUTDIR (its *.json replaced), then the
# table of reports/anchor_table.py: per peer its time and the speedup
# (the peer's time / attnbench auto's).
set -eu
bin=$1 suites=$2 threads=$3 out=$4
PYTHON=${PYTHON:-/usr/bin/python3}
cd "$(dirname "$0")/.."

libraries=
for k in onednn openblas; do
    if "$bin" list | awk -v k="$k" '$1 == k && $2 == "yes" { f = 1 } END { exit !f }'; then
        libraries="$libraries${libraries:+,}$k"
    else
        echo "bench-anchors: the $k kernel is not built; left out"
    fi
done
torch=1
"$PYTHON" -c 'import torch' 2>/dev/null || { torch=0; echo "bench-anchors: no torch for $PYTHON; PyTorch left out"; }
ort=1
if ! "$PYTHON" -c 'import onnx' 2>/dev/null \
    || [ ! -f reports/ort_anchor/node_modules/onnxruntime-node/package.json ]; then
    ort=0
    echo "bench-anchors: no python3-onnx or no npm ci --prefix reports/ort_anchor; ONNX Runtime left out"
fi

mkdir -p "$out"
rm -f "$out"/*.json
# SUITES names suites, or shapes in --shape syntax starting with op= (one
# bert-base row alone: "op=bert,B=1,L=128,mask=padding").
shapes=$(for s in $suites; do
    case $s in
    op=*) echo "$s" ;;
    *) "$bin" list --suites | awk -v s="$s:" '$1 == "suite" { f = ($2 == s); next } f && $1 ~ /^op=/ { print $1 }' ;;
    esac
done)
[ -n "$shapes" ] || { echo "bench-anchors: no shapes in suites '$suites'" >&2; exit 2; }
i=100
for shape in $shapes; do
    i=$((i + 1))
    echo "== $shape"
    "$bin" run --shape "$shape" --kernel auto --threads "$threads" --memory \
        --json "$out/$i-attnbench.json"
    [ -z "$libraries" ] || "$bin" run --shape "$shape" --kernel "$libraries" --threads "$threads" \
        --memory --json "$out/$i-libraries.json"
    # PyTorch's math SDPA holds two Lq x Lk tensors: a call over 5 s (L 8192)
    # is skipped, and said.
    [ "$torch" = 0 ] || "$PYTHON" reports/pytorch_anchor.py --shape "$shape" --threads "$threads" \
        --max-call-time 5 --memory --json "$out/$i-pytorch.json"
    [ "$ort" = 0 ] || "$PYTHON" reports/ort_anchor.py --shape "$shape" --threads "$threads" \
        --memory --json "$out/$i-onnxruntime.json"
done
"$PYTHON" reports/anchor_table.py "$out"/*.json
