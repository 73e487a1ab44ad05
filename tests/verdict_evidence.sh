#!/usr/bin/env bash
# verdict_evidence.sh — do attnbench's verdicts hold up on this machine, run
# the way a user runs them? Each part prints one line per trial and a tally
# (docs/verdicts.md quotes them); exit 1 when a trial went the wrong way.
#
#   aa N [run args]      N pairs of separate `attnbench run` processes of one
#                        binary, one after the other, one file a side:
#                        `attnbench compare` must call no regression.
#   inject N [run args]  N trials of two runs a side, interleaved A B A B, the
#                        new side with a 10% slowdown injected into one kernel
#                        (ATTNBENCH_INJECT_SLOWDOWN, cycling over the kernels
#                        asked): compare must fire, on that kernel only.
#   gross N [run args]   N pairs, one file a side, the new one 30% slower on
#                        every kernel: compare must fire.
#   rank [run args]      two runs in a row: the best kernel named by the two
#                        summaries must agree on every shape either calls
#                        "faster"; counts the ties.
#   unstable BIN [run args]  the fraction of rows BIN flags UNSTABLE (any
#                        binary: an older one flags CV > 5%).
#
# Run args default to the part's own (see each); BIN defaults to
# build/attnbench. Files go to build/verdict-evidence/.
set -euo pipefail
cd "$(dirname "$0")/.."
AB=${AB:-build/attnbench}
work=build/verdict-evidence
mkdir -p "$work"
part=${1:-}
shift || true

run() {   # run FILE ENV args...: one attnbench run, JSON into FILE, table into FILE.txt
    local file=$1 env=$2
    shift 2
    ATTNBENCH_INJECT_SLOWDOWN=$env "$AB" run --json "$file" "$@" >"$file.txt" 2>&1
}

pair() {   # pair NAME NEW_ENV args...: a run a side, the new one with NEW_ENV, then compare; rc: its exit
    local name=$1 env=$2
    shift 2
    run "$work/$name-a.json" "" "$@"
    run "$work/$name-b.json" "$env" "$@"
    rc=0
    "$AB" compare "$work/$name-a.json" "$work/$name-b.json" >"$work/$name.txt" || rc=$?
}

judged() {   # judged COMPARE_OUTPUT: "R regressions, J judged of T"
    awk '/ regressions?, / { r = $1; u = $5; t = $10 }
         END { printf "%s regression(s), %d judged of %d", r, t - u, t }' "$1"
}

case $part in
aa)
    n=${1:-20}
    shift || true
    [ $# -gt 0 ] || set -- --suite smoke --kernel avx512,blocked
    fired=0
    for i in $(seq 1 "$n"); do
        pair "aa-$i" "" "$@"
        [ $rc -eq 0 ] || fired=$((fired + 1))
        echo "A/A $i: exit $rc, $(judged "$work/aa-$i.txt")$(awk '/REGRESSION$/ { printf "; %s %s", $1, $2 }' "$work/aa-$i.txt")"
    done
    echo "A/A evidence ($*): $n pairs of separate runs, one file a side: $fired called a regression"
    [ "$fired" -eq 0 ]
    ;;
inject)
    n=${1:-20}
    shift || true
    [ $# -gt 0 ] || set -- --suite gate --threads 1 --kernel avx512,avx2,blocked
    kernels=$(printf '%s\n' "$@" | awk 'prev == "--kernel" { print } { prev = $0 }' | tr , ' ')
    read -r -a ks <<<"${kernels:-avx512 avx2 blocked}"
    caught=0 missed=0
    for i in $(seq 1 "$n"); do
        k=${ks[$(((i - 1) % ${#ks[@]}))]}
        run "$work/inj-$i-a1.json" "" "$@"
        run "$work/inj-$i-b1.json" "$k:0.1" "$@"
        run "$work/inj-$i-a2.json" "" "$@"
        run "$work/inj-$i-b2.json" "$k:0.1" "$@"
        rc=0
        "$AB" compare "$work/inj-$i-a1.json,$work/inj-$i-a2.json" \
            "$work/inj-$i-b1.json,$work/inj-$i-b2.json" >"$work/inj-$i.txt" || rc=$?
        # Caught: a regression, named on the slowed kernel only.
        fired=$(awk '/REGRESSION$/ { split($1, f, "/"); print f[2] }' "$work/inj-$i.txt" | sort -u)
        wrong=$(grep -vx "$k" <<<"$fired" || true)
        if [ $rc -eq 1 ] && [ -n "$fired" ] && [ -z "$wrong" ]; then
            caught=$((caught + 1)) verdict=caught
        else
            missed=$((missed + 1)) verdict=MISSED
        fi
        echo "inject $k:0.1 $i: exit $rc, $(judged "$work/inj-$i.txt"), fired on: $(echo $fired): $verdict"
    done
    echo "injection evidence ($*): $n trials of 10% on one kernel, two interleaved runs a side: $caught caught, $missed missed"
    [ "$missed" -eq 0 ]
    ;;
gross)
    n=${1:-5}
    shift || true
    [ $# -gt 0 ] || set -- --suite smoke --kernel avx512,blocked
    caught=0
    for i in $(seq 1 "$n"); do
        pair "gross-$i" "*:0.3" "$@"
        [ $rc -ne 1 ] || caught=$((caught + 1))
        echo "30% everywhere $i: exit $rc, $(judged "$work/gross-$i.txt")"
    done
    echo "gross-change evidence ($*): $n pairs, one file a side, 30% slower everywhere: $caught caught"
    [ "$caught" -eq "$n" ]
    ;;
rank)
    [ $# -gt 0 ] || set -- --suite default --kernel all
    run "$work/rank-1.json" "" "$@"
    run "$work/rank-2.json" "" "$@"
    /usr/bin/python3 - "$work/rank-1.json" "$work/rank-2.json" <<'EOF'
import json, sys
one, two = ({(s["shape"]): s for s in json.load(open(f))["summary"]} for f in sys.argv[1:3])
agree = disagree = ties = 0
for shape in sorted(set(one) & set(two)):
    a, b = one[shape], two[shape]
    ties += (a["verdict"] == "tie") + (b["verdict"] == "tie")
    if "faster" in (a["verdict"], b["verdict"]):
        same = a["best"] == b["best"]
        agree += same
        disagree += not same
        print(f"{shape}: {a['best']} {a['verdict']} {a['ratio']:.3f} / {b['best']} {b['verdict']} "
              f"{b['ratio']:.3f}{'' if same else '  DISAGREE'}")
    else:
        print(f"{shape}: tie both times ({a['best']} {a['ratio']:.3f} / {b['best']} {b['ratio']:.3f})")
print(f"ranking evidence: {len(set(one) & set(two))} shapes, two runs in a row: best kernel "
      f"agrees on {agree} of {agree + disagree} called faster; {ties} tie verdicts of "
      f"{2 * len(set(one) & set(two))}")
sys.exit(1 if disagree else 0)
EOF
    ;;
unstable)
    bin=${1:-$AB}
    shift || true
    [ $# -gt 0 ] || set -- --suite default --kernel all
    AB=$bin run "$work/unstable.json" "" "$@"
    awk -v bin="$bin" '$1 ~ /^[a-z0-9-]+$/ && $3 ~ /^B[0-9]/ { n++; u += /UNSTABLE/ }
        END { printf "unstable evidence (%s): %d of %d rows UNSTABLE (%.0f%%)\n", bin, u, n, 100 * u / n }' \
        "$work/unstable.json.txt"
    ;;
*)
    echo "usage: tests/verdict_evidence.sh aa|inject|gross|rank|unstable [N] [run args]" >&2
    exit 2
    ;;
esac
