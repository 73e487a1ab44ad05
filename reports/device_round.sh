#!/bin/sh
# reports/device_round.sh — everything a lent many-core machine is asked
# for, in one command that cannot hang past its budget:
#
#     sh reports/device_round.sh OUTDIR [MAX_THREADS]
#
# Builds this tree with only what such a machine has (no hwloc, PAPI,
# SQLite, PostgreSQL, OpenBLAS or oneDNN), then runs, each under its own
# `timeout`: the decoding steps of the storage types at 1 and 2 threads
# with the peaks measured at those counts (% of the read bandwidth, and the
# one-core FMA peak the products are held to; about 40 s), the GEMM
# micro-kernel unrolled against rolled (the k_unroll step), the products of
# a BERT-base layer in PyTorch alone at 1 and MAX_THREADS
# (reports/pytorch_gemm.py, when a Python has torch; about 20 s),
# reports/many_cores.sh at 1..MAX_THREADS (default: every core), one round
# (about 3 minutes on 16 cores), `attnbench tune` of the encoder layers at
# MAX_THREADS (TUNE_BUDGET seconds, default 200), the encoder at L 128
# (B 1 and 2) with the weights streamed (the default) and with
# stream_rows=0 in alternating processes (about a minute), and
# reports/decode_prefetch.sh at 1
# thread, one round (about 2 minutes). Every step's output goes to
# OUTDIR/<step>.log as well as to the terminal, its JSON under
# OUTDIR/<step>/, and a step that fails or runs out of time is named in
# OUTDIR/summary.txt while the next step still runs. Logged through plain
# redirections (no `tee` in a process substitution: bash's `wait` would
# wait on it too, and an earlier lent session lost its run that way).
# A step's limit: STEP_LIMIT seconds (default 240). ONLY="k_unroll
# many_cores" runs just the steps named (the build always): all of them
# take longer than one device call may (600 s), so a lease runs them in two
# calls, or only those it most needs.
set -u
out=$1
max=${2:-$(nproc)}
limit=${STEP_LIMIT:-240}
cd "$(dirname "$0")/.."
mkdir -p "$out"
: >"$out/summary.txt"

step() {   # step NAME COMMAND...: run it under the limit, log it, record how it ended
    name=$1; shift
    case " ${ONLY:-$name} build " in *" $name "*) ;; *) return 0 ;; esac
    start=$(date +%s)
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    rc=$?
    cat "$out/$name.log"
    echo "$name: exit $rc after $(( $(date +%s) - start )) s$( [ $rc -eq 124 ] && echo ' (timed out)')" \
        | tee -a "$out/summary.txt"
    return $rc
}

lscpu >"$out/lscpu.txt" 2>&1
step build make -j"$(nproc)" BUILD=bdev HWLOC=0 PAPI=0 SQLITE=0 POSTGRES=0 OPENBLAS=0 ONEDNN=0 \
    bdev/attnbench || exit 1
step info ./bdev/attnbench info --no-peaks
# The micro-kernel's depth loop unrolled 4 steps (kernels/frame/simd.h:
# SIMD_K_UNROLL, 4 on AVX2 since a Zen 3 ran the encoder 5-8% faster with
# it; 1 on AVX-512, never timed there): a second library built with
# -DATTN_GEMM_K_UNROLL=4, timed beside this one in the same rounds (--lib)
# on both encoder rows and SDPA L 2048 at 1 and MAX_THREADS (about 2
# minutes with its build).
EP='op=encoder,D=768,H=12,F=3072,norm=post,act=gelu,mask=none'
step k_unroll sh -c 'make -j"$(nproc)" BUILD=bdev-u4 CFLAGS=-DATTN_GEMM_K_UNROLL=4 HWLOC=0 PAPI=0 \
        SQLITE=0 POSTGRES=0 OPENBLAS=0 ONEDNN=0 bdev-u4/libattn.so >/dev/null &&
    ./bdev/attnbench run --no-peaks --kernel "${ATTN_KERNEL:-avx512}" --lib u4=bdev-u4/libattn.so \
        --threads "1,$0" --max-time 1 --json "$1/k_unroll.json" \
        --shape "$2,B=1,L=512;$2,B=8,L=128;op=sdpa,B=1,H=12,L=2048,Dh=64"' "$max" "$out" "$EP"
S='op=sdpa,B=1,Lq=1,Lk=16384,H=32,Dh=128,mask=causal-br'
S4='op=sdpa,B=1,Lq=1,Lk=4096,H=32,Dh=128,mask=causal-br'
step decode_types ./bdev/attnbench run --kernel "${ATTN_KERNEL:-avx512}" --threads 1,2 --max-time 1 \
    --shape "$S;$S,kv=f16;$S,kv=i8;$S,Hkv=8;$S,Hkv=8,kv=f16;$S4;$S4,kv=f16;$S4,kv=i8" \
    --json "$out/decode_types.json"
python=/usr/bin/python3
"$python" -c 'import torch' 2>/dev/null || python=python3
"$python" -c 'import torch' 2>/dev/null && step pytorch_gemm "$python" reports/pytorch_gemm.py "1,$max"
step many_cores sh reports/many_cores.sh bdev/attnbench "$out/many_cores" "$max" 1
# The tuner at MAX_THREADS on both encoder rows: whether parameters other
# than the defaults (mc, kc, nc, the split; ½x and 2x each) beat them at
# many threads, head to head (its table's tuned, default and speedup
# columns; about 5 minutes at most). The split alone was measured by the
# fourth lease: columns 1.3x slower, rows within auto's spread.
E512='op=encoder,B=1,L=512,D=768,H=12,F=3072,norm=post,act=gelu,mask=none'
E8='op=encoder,B=8,L=128,D=768,H=12,F=3072,norm=post,act=gelu,mask=none'
step tune_many ./bdev/attnbench tune --shape "$E8;$E512" --threads "$max" --budget "${TUNE_BUDGET:-200}" \
    --wisdom "$out/wisdom"
# Whether the blocked loops beat streaming the weights at <= 256 rows now
# that run packs them once (measured on Zen 1 only: a tie at 128 rows):
# encoder L 128 at B 1 and 2, the default against stream_rows=0, each in
# a process of its own, alternating twice (about a minute).
E1='op=encoder,B=1,L=128,D=768,H=12,F=3072,norm=post,act=gelu,mask=none'
step stream_rows sh -c 'for r in 1 2; do for p in "" "--param stream_rows=0"; do
    "$0" run --no-peaks --kernel "${ATTN_KERNEL:-avx512}" --threads "1,$1" --max-time 1 $p \
        --shape "$2;$3" --json "$4/stream_rows-$r${p:+-0}.json"; done; done' \
    ./bdev/attnbench "$max" "$E1" "$(echo "$E1" | sed 's/B=1,/B=2,/')" "$out"
step decode_prefetch env SETTINGS="${SETTINGS:-prefetch=0 prefetch=16,row_prefetch=0 prefetch=16,row_prefetch=1 prefetch=32,row_prefetch=1 prefetch=64,row_prefetch=1}" \
    sh reports/decode_prefetch.sh bdev/attnbench "$out/decode_prefetch" 1 1
cat "$out/summary.txt"
