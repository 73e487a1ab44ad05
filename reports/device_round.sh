#!/bin/sh
# reports/device_round.sh — everything a lent many-core machine is asked
# for, in one command that cannot hang past its budget:
#
#     sh reports/device_round.sh OUTDIR [MAX_THREADS]
#
# Builds this tree with only what such a machine has (no hwloc, PAPI,
# SQLite, PostgreSQL, OpenBLAS or oneDNN), then runs, each under its own
# `timeout`: reports/many_cores.sh at 1..MAX_THREADS (default: every core),
# one round (about 3 minutes on 16 cores), and reports/decode_prefetch.sh
# at 1 thread, one round (about 90 s). Every step's output goes to
# OUTDIR/<step>.log as well as to the terminal, its JSON under
# OUTDIR/<step>/, and a step that fails or runs out of time is named in
# OUTDIR/summary.txt while the next step still runs. Logged through plain
# redirections (no `tee` in a process substitution: bash's `wait` would
# wait on it too, and an earlier lent session lost its run that way).
# A step's limit: STEP_LIMIT seconds (default 240).
set -u
out=$1
max=${2:-$(nproc)}
limit=${STEP_LIMIT:-240}
cd "$(dirname "$0")/.."
mkdir -p "$out"
: >"$out/summary.txt"

step() {   # step NAME COMMAND...: run it under the limit, log it, record how it ended
    name=$1; shift
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
step many_cores sh reports/many_cores.sh bdev/attnbench "$out/many_cores" "$max" 1
step decode_prefetch sh reports/decode_prefetch.sh bdev/attnbench "$out/decode_prefetch" 1 1
cat "$out/summary.txt"
