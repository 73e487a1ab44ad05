#!/bin/sh
# run.sh — runs the libFuzzer targets (make fuzz): each for SECONDS from a
# scratch copy of its committed corpus (fuzz/corpus/NAME; the committed
# seeds are never rewritten), then prints per target the executions, the
# coverage and the corpus size. Exit 1 when a target crashed, leaked or
# hung (the input is saved as build/fuzz/crash-*, to be added to the
# corpus with its fix).
# usage: fuzz/run.sh BUILD_DIR SECONDS TARGET...   (FUZZ_JOBS=N: N at a time)
set -u
dir=$1 seconds=$2
shift 2
status=0
# Broken calls ask for absurd sizes and expect ATTN_ERR_NO_MEMORY.
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
export ATTN_WISDOM=/nonexistent/attnbench-fuzz/wisdom
# One target: its run, then its line of the table into $dir/fuzz-NAME.line
# and its exit status into $dir/fuzz-NAME.rc.
run_target() {
    t=$1
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
    [ $rc -eq 0 ] || result="FAILED (exit $rc; see $dir/fuzz-$t.log)"
    printf '%-8s %8s %12s %8s %8s %8s %8s  %s\n' "$t" "$seconds" "${execs:-?}" "${rate:-?}" \
        "${cov:-?}" "${ft:-?}" "$corpus" "$result" >"$dir/fuzz-$t.line"
    echo $rc >"$dir/fuzz-$t.rc"
}

# The targets run FUZZ_JOBS at a time (default: the CPUs, at most 4), each
# on one core, so that every target still gets its SECONDS of fuzzing.
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -gt 4 ] && jobs=4
[ "$jobs" -ge 1 ] || jobs=1
running=0
for t in "$@"; do
    run_target "$t" &
    running=$((running + 1))
    if [ $running -ge "$jobs" ]; then
        wait
        running=0
    fi
done
wait
printf '%-8s %8s %12s %8s %8s %8s %8s  %s\n' target seconds executions exec/s cov ft corpus result
for t in "$@"; do
    cat "$dir/fuzz-$t.line"
    [ "$(cat "$dir/fuzz-$t.rc")" = 0 ] || status=1
done
exit $status
