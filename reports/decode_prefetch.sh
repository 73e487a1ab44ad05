#!/bin/sh
# reports/decode_prefetch.sh — the decode path's prefetch settings against
# the type keys and values are stored in, for a machine lent for minutes:
#
#     sh reports/decode_prefetch.sh ATTNBENCH OUTDIR [THREADS [ROUNDS]]
#
# Why: `prefetch` (keys ahead) was tuned on fp32 rows on a Zen 4, and a
# single query row held in registers asks either for every line of the row
# ahead or only for a new page's first lines (`row_prefetch`, 1 or 0). Which
# style wins depends on the core's own stream prefetcher: every line took
# 0.77-0.83 of the page-start time for f16 and int8 on a Xeon, 1.14-1.21x
# on a Zen 4 (docs/decoding.md). This measures the settings rather than
# assuming them on the machine at hand.
#
# A decoding step over 16384 keys (H 32, Dh 128, Hkv 32 and 8), its keys
# and values f32, f16 and i8, kernel avx512 (ATTN_KERNEL overrides), at
# THREADS (default 1) threads: one process per setting of SETTINGS (the
# environment's, else: prefetch off; 16 keys with page starts; 16 and 32
# keys with every line), the settings in turn, ROUNDS (default 2) times,
# the order reversed every other round (about 90 s a round on one thread).
# One JSON per process in OUTDIR (its *.json replaced); the medians are
# printed as they come.
set -eu
bin=$1 out=$2
threads=${3:-1} rounds=${4:-2}
kernel=${ATTN_KERNEL:-avx512}
settings=${SETTINGS:-prefetch=0 prefetch=16,row_prefetch=0 prefetch=16,row_prefetch=1 prefetch=32,row_prefetch=1}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac

S='op=sdpa,B=1,Lq=1,Lk=16384,H=32,Dh=128,mask=causal-br'
shapes="$S;$S,kv=f16;$S,kv=i8;$S,Hkv=8;$S,Hkv=8,kv=f16;$S,Hkv=8,kv=i8"
reversed=
for p in $settings; do reversed="$p $reversed"; done
mkdir -p "$out"
rm -f "$out"/*.json
r=1
while [ "$r" -le "$rounds" ]; do
    order=$settings
    [ $((r % 2)) = 0 ] && order=$reversed
    for p in $order; do
        echo "== round $r of $rounds, $p"
        "$bin" run --no-peaks --kernel "$kernel" --param "$p" --threads "$threads" \
            --max-time 1 --shape "$shapes" --json "$out/$(echo "$p" | tr ',=' '-_')-round-$r.json"
    done
    r=$((r + 1))
done
