#!/usr/bin/env bash
# gate_evidence.sh — does the regression gate (tests/gate.sh) hold up on this
# machine? Builds COMMIT (default HEAD) twice, in two separate worktrees, and
# runs the gate between the two builds:
#   * N times A/A (identical code): the gate must never fire;
#   * N times with a 10% slowdown injected into one kernel of the new side
#     (ATTNBENCH_INJECT_SLOWDOWN, cycling over the kernels this machine
#     runs; spin-only, KIND=spin, the default, or as extra calls, KIND=calls):
#     the gate must fire every time, on that kernel.
# Prints one line per run and a tally (docs/regression-tracking.md quotes it); exit 1 when a
# run went the wrong way. Takes about a minute per run.
# usage: tests/gate_evidence.sh [N] [COMMIT] [gate.sh options...]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20} commit=${2:-HEAD}
spin=$([ "${KIND:-spin}" = spin ] && echo :spin || true)
shift $(($# < 2 ? $# : 2))
work=build/gate-evidence
mkdir -p "$work"

sha=$(git rev-parse --verify "$commit^{commit}")
for side in a b; do
    src=$work/$side
    git worktree remove --force "$src" >/dev/null 2>&1 || rm -rf "$src"
    git worktree prune
    git worktree add --detach --quiet "$src" "$sha"
    make -C "$src" -j2 --no-print-directory build/attnbench build/libattn.so \
        >"$work/build-$side.log" 2>&1
done
a=$work/a/build/attnbench b=$work/b/build/attnbench

kernels=()
for k in avx512 avx2 neon blocked; do
    if grep -q "^$k  *yes" <<<"$("$b" list)"; then kernels+=("$k"); fi
done

false_alarms=0 caught=0 missed=0
for i in $(seq 1 "$n"); do
    rc=0
    tests/gate.sh --base-bin "$a" --new-bin "$b" "$@" >"$work/aa-$i.txt" 2>&1 || rc=$?
    worst=$(sed -n '/^gate: timing/,/^gate: /p' "$work/aa-$i.txt" |
            awk '$1 ~ /\/threads:/ && $2 > m { m = $2 } END { printf "%.3f", m }')
    echo "A/A $i: exit $rc (largest new/base of the screen $worst$(sed -n 's/^gate: REGRESSION:/; fired on:/p' "$work/aa-$i.txt"))"
    [ $rc -eq 0 ] || false_alarms=$((false_alarms + 1))

    k=${kernels[$(((i - 1) % ${#kernels[@]}))]}
    rc=0
    tests/gate.sh --base-bin "$a" --new-bin "$b" --inject "$k:0.1${spin}" "$@" \
        >"$work/inject-$i.txt" 2>&1 || rc=$?
    # Caught: the gate failed, and on the slowed kernel only ("gate:
    # REGRESSION: avx2/sdpa(time) blocked/mha(instructions) ...").
    fired=$(sed -n 's/^gate: REGRESSION://p' "$work/inject-$i.txt")
    wrong=0
    for f in $fired; do case $f in "$k"/*) ;; *) wrong=1 ;; esac; done
    if [ $rc -eq 1 ] && [ -n "$fired" ] && [ $wrong -eq 0 ]; then
        caught=$((caught + 1)); verdict=caught
    else
        missed=$((missed + 1)); verdict=MISSED
    fi
    echo "inject $k:0.1 $i: exit $rc, fired on:${fired:- nothing}: $verdict"
done
echo "gate evidence: $n A/A runs, $false_alarms fired; $n injected 10% slowdowns, $caught caught, $missed missed"
[ $false_alarms -eq 0 ] && [ $missed -eq 0 ]
