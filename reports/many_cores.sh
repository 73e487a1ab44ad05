#!/bin/sh
# reports/many_cores.sh — the many-core measurements of docs/performance.md
# ("16 threads") in one go, for a machine lent for minutes:
#
#     sh reports/many_cores.sh ATTNBENCH OUTDIR [MAX_THREADS [ROUNDS]]
#
# On the anchor shapes (BERT-base encoder layers at L 512 and at B 8 L 128,
# SDPA L 2048, a decoding step over 16384 keys with 32 and 8 key/value
# heads), kernel avx512 (ATTN_KERNEL overrides), MAX_THREADS (default: every
# core) and ROUNDS (default 3):
#   1. `explain --measure 5` at 1 and at MAX_THREADS: each parallel region's
#      time, where the time goes;
#   2. ROUNDS rounds, each: the thread counts 1, 2, 4, ... MAX_THREADS side
#      by side in one process (the threads table); PyTorch fp32 at
#      MAX_THREADS (when PYTHON, else /usr/bin/python3, else the python3 on
#      PATH, has torch: a lent machine's PyTorch is in the latter); then 1 and
#      MAX_THREADS each in a process of its own (the A/A of timing thread
#      counts side by side), in the other order every other round.
# No peaks are measured (--no-peaks: a minute or more on many cores). One
# JSON per step in OUTDIR (its *.json replaced), for `attnbench compare`,
# reports/anchor_table.py or a script; the tables are printed as they come.
set -eu
bin=$1 out=$2
max=${3:-$(nproc)} rounds=${4:-3}
kernel=${ATTN_KERNEL:-avx512}
if [ -z "${PYTHON:-}" ]; then
    PYTHON=/usr/bin/python3
    "$PYTHON" -c 'import torch' 2>/dev/null || PYTHON=python3
fi
cd "$(dirname "$0")/.."
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac

E512='op=encoder,B=1,L=512,D=768,H=12,F=3072,norm=post,act=gelu,mask=none'
E8='op=encoder,B=8,L=128,D=768,H=12,F=3072,norm=post,act=gelu,mask=none'
S2K='op=sdpa,B=1,L=2048,H=12,Dh=64,mask=none'
D32='op=sdpa,B=1,Lq=1,Lk=16384,H=32,Dh=128,mask=causal-br'
D8='op=sdpa,B=1,Lq=1,Lk=16384,H=32,Hkv=8,Dh=128,mask=causal-br'
all="$E512;$E8;$S2K;$D32;$D8"
counts=1 n=2
while [ "$n" -lt "$max" ]; do counts="$counts,$n"; n=$((n * 2)); done
[ "$max" -gt 1 ] && counts="$counts,$max"
torch=1
"$PYTHON" -c 'import torch' 2>/dev/null || { torch=0; echo "many_cores: no torch for $PYTHON; PyTorch left out"; }
mkdir -p "$out"
rm -f "$out"/*.json
run() { "$bin" run --no-peaks --kernel "$kernel" --max-time 1 "$@"; }

for n in 1 "$max"; do
    "$bin" explain --kernel "$kernel" --threads "$n" --measure 5 --shape "$E512;$E8;$S2K" \
        --json "$out/explain-$n.json"
done
r=1
while [ "$r" -le "$rounds" ]; do
    echo "== round $r of $rounds"
    run --threads "$counts" --shape "$all" --json "$out/side-by-side-$r.json"
    [ "$torch" = 0 ] || "$PYTHON" reports/pytorch_anchor.py --attnbench "$bin" --no-peaks \
        --shape "$all" --threads "$max" --repetitions 5 --min-time 0.1 --json "$out/pytorch-$r.json"
    order="1 $max"
    [ $((r % 2)) = 0 ] && order="$max 1"
    for n in $order; do
        run --threads "$n" --shape "$E512;$S2K" --json "$out/alone-$r-$n.json"
    done
    r=$((r + 1))
done
