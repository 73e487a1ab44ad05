#!/bin/sh
# reports/decode_prefetch.sh — the decode path's prefetch distance against
# the type keys and values are stored in, for a machine lent for minutes:
#
#     sh reports/decode_prefetch.sh ATTNBENCH OUTDIR [THREADS [ROUNDS]]
#
# Why: the `prefetch` parameter counts keys, and was tuned on fp32 rows on
# a Zen 4, where every distance from 16 to 64 keys gives narrow rows the
# same time (their loop, not memory, bounds them there). A key of f16 is
# half the bytes of fp32 and one of int8 a quarter, so the same distance
# runs a half or a quarter as far ahead in bytes. One core of the 16-core
# Xeon read fp32 keys at 14.6 GB/s but f16 at 9.3 and int8 at 7.6
# (docs/decoding.md), which would fit too few lines in flight. This
# measures it rather than assuming it.
#
# A decoding step over 16384 keys (H 32, Dh 128, Hkv 32 and 8), its keys
# and values f32, f16 and i8, kernel avx512 (ATTN_KERNEL overrides), at
# THREADS (default 1) threads: one process per distance (0, 16, 32, 64
# keys), the distances in turn, ROUNDS (default 2) times, the order
# reversed every other round. One JSON per process in OUTDIR (its *.json
# replaced); the medians are printed as they come.
set -eu
bin=$1 out=$2
threads=${3:-1} rounds=${4:-2}
kernel=${ATTN_KERNEL:-avx512}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac

S='op=sdpa,B=1,Lq=1,Lk=16384,H=32,Dh=128,mask=causal-br'
shapes="$S;$S,kv=f16;$S,kv=i8;$S,Hkv=8;$S,Hkv=8,kv=f16;$S,Hkv=8,kv=i8"
mkdir -p "$out"
rm -f "$out"/*.json
r=1
while [ "$r" -le "$rounds" ]; do
    order="0 16 32 64"
    [ $((r % 2)) = 0 ] && order="64 32 16 0"
    for d in $order; do
        echo "== round $r of $rounds, prefetch $d keys ahead"
        "$bin" run --no-peaks --kernel "$kernel" --param "prefetch=$d" --threads "$threads" \
            --max-time 1 --shape "$shapes" --json "$out/prefetch-$d-round-$r.json"
    done
    r=$((r + 1))
done
