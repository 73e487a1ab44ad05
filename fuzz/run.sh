#!/bin/sh
# run.sh — runs the libFuzzer targets (make fuzz): each for SECONDS from a
# scratch copy of its committed corpus (fuzz/corpus/NAME; the committed
# seeds are never rewritten), then prints per target the executions, the
# coverage and the corpus size. Exit 1 when a target crashed, leaked or
# hung (the input is saved as build/fuzz/crash-*, to be added to the
# corpus with its fix).
# usage: fuzz/run.sh BUILD_DIR SECONDS TARGET...
set -u
dir=$1 seconds=$2
shift 2
status=0
# Broken calls ask for absurd sizes and expect ATTN_ERR_NO_MEMORY.
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
export ATTN_WISDOM=/nonexistent/attnbench-fuzz/wisdom
printf '%-8s %8s %12s %8s %8s %8s %8s  %s\n' target seconds executions exec/s cov ft corpus result
for t in "$@"; do
    work=$dir/corpus-$t
    rm -rf "$work"
    mkdir -p "$work"
    cp fuzz/corpus/"$t"/* "$work"/ 2>/dev/null
    dict=
    [ -f fuzz/"$t".dict ] && dict=-dict=$(pwd)/fuzz/$t.dict
    # -close_fd_mask=1: the commands' stdout is noise; errors stay visible.
    (cd "$dir" && ./fuzz_"$t" -max_total_time="$seconds" -print_final_stats=1 -close_fd_mask=1 \
        -timeout=20 -rss_limit_mb=4096 -artifact_prefix=./ $dict \
        "corpus-$t") >"$dir/fuzz-$t.log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/fuzz-$t.log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/fuzz-$t.log")
    cov=$(grep -o 'cov: [0-9]*' "$dir/fuzz-$t.log" | tail -n 1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$dir/fuzz-$t.log" | tail -n 1 | cut -d' ' -f2)
    corpus=$(ls "$work" | wc -l)
    result=ok
    if [ $rc -ne 0 ]; then
        result="FAILED (exit $rc; see $dir/fuzz-$t.log)"
        status=1
    fi
    printf '%-8s %8s %12s %8s %8s %8s %8s  %s\n' "$t" "$seconds" "${execs:-?}" "${rate:-?}" \
        "${cov:-?}" "${ft:-?}" "$corpus" "$result"
done
exit $status
