#!/usr/bin/env bash
# gate.sh — the CI regression gate: is the working tree's build slower than
# BASE's? Two independent checks, each on the `gate` suite (one small shape
# per op), 1 thread:
#
#  1. Time, in one process: the new attnbench loads both builds' shared
#     libraries (`run --lib new=NEW/libattn.so --lib base=BASE/libattn.so`:
#     both loaded alike, so that static-against-shared code placement,
#     which put the two copies of one build 1% apart on some rows, cannot
#     bias the verdict) and times every kernel of both in the same shuffled
#     rounds, on the same inputs, contexts made anew every few rounds;
#     `attnbench compare FILE --base-build base --new-build new` judges each
#     kernel and op from its per-round ratios new/base (a paired t-test at
#     alpha 0.01 over the pairs; a regression needs new/base > 1.05 and
#     p below that; a row whose data could not see 10% is inconclusive,
#     which does not fail the gate). The machine's drift between rounds
#     cancels out of those ratios, which separate processes cannot offer
#     (docs/verdicts.md). A base older than contract 0.3 (no attn_version)
#     falls back to interleaved processes: the two binaries alternating
#     ABBA for --rounds rounds, each file a run, and `attnbench compare
#     BASE,.. NEW,..` on the run medians (a moderated t-test). Either way,
#     what this screen flags is timed again on its own and counts only when
#     confirmed. Ratios from one job, never absolute times of separate runs.
#  2. Instructions, deterministic: callgrind counts the instructions spent
#     inside the library's entry points for a fixed number of calls
#     (`run --iterations`), per kernel and op, on both sides (the two sides
#     at once, one valgrind per core); more than 2% more is a regression.
#     It counts the portable `blocked` kernel (10 calls) and `avx2` (1 call:
#     valgrind emulates its FMAs lane by lane, ~3 s a call against 0.1 s of
#     blocked's, so 10 calls took 37-63 s a count; a count is exact at any
#     number of calls). valgrind cannot run AVX-512 code at all; the timed
#     check covers every kernel.
#
# usage: tests/gate.sh [--base REF | --base-bin PATH] [--new-bin PATH]
#                      [--rounds R] [--inject KERNEL:F[:spin]] [--no-callgrind]
#                      [--no-avx2-counts] [--cross-process]
#   --base REF       git commit to compare against (default HEAD~1); built in
#                    build/gate/base (a git worktree)
#   --base-bin PATH  an already built base attnbench instead (its libattn.so
#                    beside it, for the in-process timing)
#   --new-bin PATH   the new attnbench (default build/attnbench, built by make)
#   --rounds R       in process: 3·R rounds (default 6: 18); across
#                    processes: R interleaved rounds of each side
#   --inject K:F     test hook: the NEW side runs kernel K F slower
#                    (ATTNBENCH_INJECT_SLOWDOWN, harness/measure/bench.c;
#                    :spin for a slowdown only time can see)
#   --no-avx2-counts count blocked's instructions only (~25 s less)
#   --cross-process  time in separate processes even when in-process works
# Exit status: 0 no regression, 1 a regression, 2 unusable setup. A base
# that cannot be had (no such commit, a shallow clone, or a commit older
# than the gate) is reported and skipped with status 0.
set -euo pipefail
cd "$(dirname "$0")/.."

base_ref=HEAD~1 base_bin= new_bin=build/attnbench rounds=6 inject= callgrind=1 avx2_counts=1
cross=0
while [ $# -gt 0 ]; do
    case $1 in
    --base) base_ref=$2; shift 2 ;;
    --base-bin) base_bin=$2; shift 2 ;;
    --new-bin) new_bin=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --inject) inject=$2; shift 2 ;;
    --no-callgrind) callgrind=0; shift ;;
    --count-avx2) avx2_counts=1; shift ;;   # the default; kept for older callers
    --no-avx2-counts) avx2_counts=0; shift ;;
    --cross-process) cross=1; shift ;;
    *) echo "gate: unknown argument '$1' (see the head of tests/gate.sh)" >&2; exit 2 ;;
    esac
done

work=build/gate
mkdir -p "$work"
# Hermetic: no tuning of the user's, pinned OpenMP without attnbench's
# re-exec (which valgrind cannot follow).
export ATTN_WISDOM=/nonexistent/attnbench-gate/wisdom OMP_PROC_BIND=close OMP_PLACES=cores

if [ -z "$base_bin" ]; then
    if ! sha=$(git rev-parse --verify --quiet "$base_ref^{commit}"); then
        echo "gate: skip: no base commit '$base_ref' here (shallow clone?)"
        exit 0
    fi
    src=$work/base-src
    git worktree remove --force "$src" >/dev/null 2>&1 || rm -rf "$src"
    git worktree prune
    git worktree add --detach --quiet "$src" "$sha"
    echo "gate: building the base, $(git log -1 --format='%h %s' "$sha" | cut -c1-70)"
    make -C "$src" -j2 --no-print-directory build/attnbench build/libattn.so \
        >"$work/base-build.log" 2>&1 \
        || { echo "gate: the base does not build (see $work/base-build.log)"; exit 2; }
    base_bin=$src/build/attnbench
fi
base_lib=$(dirname "$base_bin")/libattn.so new_lib=$(dirname "$new_bin")/libattn.so
[ -x "$new_bin" ] || { echo "gate: no new binary $new_bin (run make)"; exit 2; }
# (grep reads captured text: with pipefail, grep -q closing a pipe early
# would fail the pipeline.)
if ! grep -q '^suite gate:' <<<"$("$base_bin" list --suites 2>/dev/null)"; then
    echo "gate: skip: the base predates the gate (no 'gate' suite)"
    exit 0
fi

# The fast kernels both sides run here.
kernels= new_list=$("$new_bin" list) base_list=$("$base_bin" list)
for k in avx512 avx2 neon blocked; do
    if grep -q "^$k  *yes" <<<"$new_list" && grep -q "^$k  *yes" <<<"$base_list"; then
        kernels=${kernels:+$kernels,}$k
    fi
done
[ -n "$kernels" ] || { echo "gate: no kernel runs on both sides"; exit 2; }

run_side() {   # side tag args...: one run of the gate suite, JSON into $work/SIDE-TAG.json
    local bin=$base_bin env= side=$1 tag=$2
    shift 2
    if [ "$side" = new ]; then bin=$new_bin; env=$inject; fi
    # A fresh copy of the binary for every run, at a path of the same length
    # for both sides: a binary's code stays in the same physical pages (the
    # page cache) for the whole job, and where it sits can make identical
    # code run a few % apart for as long, a bias that alternating the order
    # does not cancel; copied anew, its placement is a per-run chance that
    # the repetitions average out. (The A/B runs of one build seemed to
    # show such a bias once: 5.5% in confirmation, identical code.)
    local copy=$work/run-${side%"${side#?}"}       # run-b, run-n
    rm -f "$copy"
    cp "$bin" "$copy"
    # Exactly 3 repetitions a run (--precision 0; a binary from before the
    # adaptive repetitions has no such flag and takes 3 anyway).
    local fixed=
    if "$bin" run --help 2>&1 | grep -q -- --precision; then fixed="--precision 0"; fi
    # shellcheck disable=SC2086
    ATTNBENCH_INJECT_SLOWDOWN=$env "$copy" run --suite gate --threads 1 --repetitions 3 $fixed \
        --min-time 0.05 --json "$work/$side-$tag.json" "$@" >/dev/null
}

# Interleaved rounds of run_side (ABBA...), then compare on the pooled
# repetitions; the verdict table goes to $work/NAME.txt. Returns compare's
# status (0 nothing regressed, 1 a regression, 2 unusable).
timed() {   # name args...
    local name=$1 r base_files= new_files= rc=0
    shift
    rm -f "$work/base-$name-"*.json "$work/new-$name-"*.json
    for r in $(seq 1 "$rounds"); do
        if [ $((r % 2)) -eq 1 ]; then run_side base "$name-$r" "$@"; run_side new "$name-$r" "$@"
        else run_side new "$name-$r" "$@"; run_side base "$name-$r" "$@"; fi
        base_files=${base_files:+$base_files,}$work/base-$name-$r.json
        new_files=${new_files:+$new_files,}$work/new-$name-$r.json
    done
    "$new_bin" compare "$base_files" "$new_files" >"$work/$name.txt" || rc=$?
    sed 's/^/  /' "$work/$name.txt"
    return $rc
}

# In process when the new binary can load the base's library (contract 0.3
# on both sides).
inproc=0
if [ "$cross" = 0 ] && [ -f "$base_lib" ] && [ -f "$new_lib" ] \
    && "$new_bin" run --lib base="$base_lib" --lib new="$new_lib" --kernel blocked --threads 1 --no-peaks \
        --shape op=sdpa,B=1,H=1,L=8,Dh=8 --repetitions 1 --precision 0 --min-time 0.001 \
        >"$work/lib-check.txt" 2>&1; then
    inproc=1
    timed() {   # name args...: one in-process run of both builds, judged by compare
        local name=$1 rc=0
        shift
        rm -f "$work/$name.json"
        # The injection names the new build's kernel: K@new.
        local env=${inject:+${inject%%:*}@new:${inject#*:}}
        ATTNBENCH_INJECT_SLOWDOWN=$env "$new_bin" run --lib base="$base_lib" --lib new="$new_lib" \
            --suite gate --threads 1 --repetitions $((3 * rounds)) --precision 0 --min-time 0.05 \
            --json "$work/$name.json" "$@" >"$work/$name.run.txt" 2>&1 || true
        [ -f "$work/$name.json" ] || { echo "gate: run --lib failed: $(tail -n 3 "$work/$name.run.txt")"; return 2; }
        "$new_bin" compare "$work/$name.json" --base-build base --new-build new >"$work/$name.txt" \
            || rc=$?
        sed 's/^/  /' "$work/$name.txt"
        return $rc
    }
fi

status=0 fired=
if [ $inproc = 1 ]; then
    echo "gate: timing $kernels in one process ($new_lib and $base_lib loaded side by side), $((3 * rounds)) rounds${inject:+ (injected: $inject on the new side)}"
else
    echo "gate: timing $kernels, $rounds interleaved rounds of separate processes${inject:+ (injected: $inject on the new side)}"
    [ "$cross" = 1 ] || echo "gate: (not in process: $(tail -n 1 "$work/lib-check.txt" 2>/dev/null || echo "no $base_lib or $new_lib"))"
fi
rc=0
timed screen --kernel "$kernels" || rc=$?
case $rc in 0 | 1) ;; *) echo "gate: compare could not judge (status $rc)"; exit 2 ;; esac
# A kernel that failed on the new side is no noise to confirm: it fails the
# gate as it is (compare's "FAILED" line; the in-process screen said exit 1
# with no REGRESSION row, and the gate passed it).
for failed in $(awk '/ FAILED/ { print $1 }' "$work/screen.txt"); do
    status=1 fired="$fired $failed(failed)"
done
# Confirmation: under load this VM's times vary by 5-20% (CV) for seconds at
# a time, enough for one benchmark in a dozen to pass the screen by chance
# now and then; a real slowdown reproduces. Every kernel and op the screen
# flagged is timed again, in fresh interleaved rounds of its own, and only
# a regression confirmed there counts.
for pair in $(awk '$1 ~ /\/threads:/ && / REGRESSION/ { split($1, f, "/"); sub(/@.*/, "", f[2]);
                                                         print f[1] "/" f[2] }' \
                  "$work/screen.txt" | sort -u); do
    op=${pair%/*} k=${pair#*/}
    echo "gate: confirming $k $op"
    rc=0
    timed "confirm-$k-$op" --kernel "$k" --op "$op" || rc=$?
    case $rc in
    0) ;;
    1) status=1 fired="$fired $k/$op(time)" ;;
    *) echo "gate: compare could not judge (status $rc)"; exit 2 ;;
    esac
done

if [ "$callgrind" = 1 ] && command -v valgrind >/dev/null 2>&1; then
    count_kernels=blocked
    if [ "$avx2_counts" = 1 ] && grep -q ",avx2" <<<",$kernels"; then count_kernels="blocked avx2"; fi
    echo "gate: counting instructions (callgrind) of: $count_kernels (AVX-512 code is beyond valgrind)"
    count() {   # side bin kernel op env: the count into $work/cg-SIDE.n (0: not counted)
        local out=$work/cg-$1.out calls=10
        [ "$3" = avx2 ] && calls=1
        echo 0 >"$work/cg-$1.n"
        ATTNBENCH_INJECT_SLOWDOWN=$5 valgrind --tool=callgrind --callgrind-out-file="$out" \
            --toggle-collect=attn_sdpa --toggle-collect=attn_mha \
            --toggle-collect=attn_encoder_layer \
            "$2" run --suite gate --op "$4" --kernel "$3" --threads 1 --iterations $calls \
            --repetitions 1 --no-peaks >/dev/null 2>&1 || return 0
        sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out" >"$work/cg-$1.n"
    }
    for k in $count_kernels; do
        for op in sdpa mha encoder; do
            count base "$base_bin" "$k" "$op" "" &
            count new "$new_bin" "$k" "$op" "$inject" &
            wait
            b=$(cat "$work/cg-base.n") n=$(cat "$work/cg-new.n")
            if [ "${b:-0}" -eq 0 ] || [ "${n:-0}" -eq 0 ]; then
                echo "  $k $op: not counted (valgrind cannot run it here)"
                continue
            fi
            verdict=$(awk -v b="$b" -v n="$n" 'BEGIN { r = n / b;
                printf "%.4f %s", r, (r > 1.02 ? "REGRESSION" : r < 0.98 ? "improvement" : "no change") }')
            echo "  $k $op: $n / $b instructions = $verdict"
            case $verdict in *REGRESSION*) status=1 fired="$fired $k/$op(instructions)" ;; esac
        done
    done
else
    echo "gate: instruction counts skipped (no valgrind, or --no-callgrind)"
fi
if [ $status -eq 0 ]; then echo "gate: no regression"; else echo "gate: REGRESSION:$fired"; fi
exit $status
