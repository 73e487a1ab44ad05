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
#   lib-aa N [run args]  N runs of this build beside a copy of itself in one
#                        process (run --lib copy=LIBATTN.so: the copy is its
#                        shared library, the other the static code; with
#                        BASE_LIB=A NEW_LIB=B in the environment, two shared
#                        libraries, as the gate loads them): at most 1 trial
#                        may call any row different, and the intervals must
#                        cover 1 in >= 95% of rows.
#   lib-inject N [run args]  the same with a spin-only 10% slowdown of one
#                        kernel of the copy (cycling): every row of that
#                        kernel whose MDE is <= 10% must be caught in >= 95%
#                        of the trials, never a row of another kernel.
#   scaled [run args]    one run, and a copy of its file with every time
#                        x1.3, one file a side: no row may say "no change"
#                        unless its MDE is within 10%.
#   mde N [run args]     N pairs of separate runs, one file a side (cross-run
#                        compare): regressions called, and the share of rows
#                        whose MDE is within 10% (the rows it can judge).
#   reference N [run args]  calibrated units: N separate runs with
#                        --reference; per row, the spread across them (sd of
#                        log) of its median time, and of that time divided by
#                        the FMA and by the read reference of its rounds, per
#                        class of row (small, compute, memory).
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
suite_shapes() {   # suite_shapes NAME: the suite's shapes, one a line
    "$AB" list --suites | sed -n "/^suite $1/,/^\$/p" | awk 'NR > 1 && NF { print $1 }'
}
# The smoke suite but its ops that hold this build's KV caches (decoder,
# generate), which run --lib cannot give another build.
SMOKE_NO_CACHES=$(suite_shapes smoke \
    | grep -v 'op=decoder\|op=generate' | paste -sd ';' -)

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
lib-aa | lib-inject)
    n=${1:-20}
    shift || true
    [ $# -gt 0 ] || set -- --kernel avx2,blocked --threads 1 --repetitions 9 --precision 0 \
        --min-time 0.02 --shape "$SMOKE_NO_CACHES"
    # Two builds' shared libraries side by side (BASE_LIB and NEW_LIB, as the
    # gate loads them), else this build's static code against its own
    # shared library.
    lib=$(dirname "$AB")/libattn.so libs=(--lib copy="$lib") judge=()
    if [ -n "${BASE_LIB:-}" ] && [ -n "${NEW_LIB:-}" ]; then
        libs=(--lib base="$BASE_LIB" --lib copy="$NEW_LIB") judge=(--base-build base --new-build copy)
    fi
    kernels=$(printf '%s\n' "$@" | awk 'prev == "--kernel" { print } { prev = $0 }' | tr , ' ')
    read -r -a ks <<<"${kernels:-avx2 blocked}"
    for i in $(seq 1 "$n"); do
        k=${ks[$(((i - 1) % ${#ks[@]}))]} env=
        [ "$part" = lib-aa ] || env="$k@copy:0.1:spin"
        run "$work/$part-$i.json" "$env" "${libs[@]}" "$@"
        "$AB" compare "$work/$part-$i.json" "${judge[@]}" --json "$work/$part-$i.v.json" \
            >"$work/$part-$i.txt" || true
        echo "$k" >"$work/$part-$i.kernel"
    done
    /usr/bin/python3 - "$part" "$n" "$work" <<'EOF'
import json, sys
part, n, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
trials_called = rows = covered = 0
own_small = own_caught = own_large = own_large_unclear = other_rows = other_fired = 0
for i in range(1, n + 1):
    k = open(f"{work}/{part}-{i}.kernel").read().strip()
    v = json.load(open(f"{work}/{part}-{i}.v.json"))["rows"]
    called = [r for r in v if r["verdict"] in ("REGRESSION", "improvement")]
    trials_called += bool(called)
    rows += len(v)
    covered += sum(r["ci_low"] <= 1.0 <= r["ci_high"] for r in v)
    for r in v:
        mine = f"/{k}@copy/" in r["name"]
        if part == "lib-inject" and mine:
            if r["mde"] <= 0.10:
                own_small += 1
                own_caught += r["verdict"] == "REGRESSION"
            else:
                own_large += 1
                own_large_unclear += r["verdict"] == "inconclusive"
        elif part == "lib-inject":
            other_rows += 1
            other_fired += r["verdict"] == "REGRESSION"
    print(f"{part} {i} ({k}): " + ", ".join(f"{r['name'].split('/')[1]} {r['name'].split('/')[2]} "
          f"{r['ratio']:.3f} MDE {100 * r['mde']:.0f}% {r['verdict']}" for r in v))
if part == "lib-aa":
    print(f"in-process A/A evidence: {n} trials, {trials_called} with any row called different; "
          f"intervals cover 1 in {covered} of {rows} rows ({100 * covered / rows:.1f}%)")
    sys.exit(0 if trials_called <= 1 and covered >= 0.95 * rows else 1)
print(f"in-process injection evidence: {n} trials of a spin-only 10% on one kernel: "
      f"{own_caught} of {own_small} of its rows with MDE <= 10% caught; {own_large} rows with a "
      f"larger MDE, {own_large_unclear} of them inconclusive; {other_fired} of {other_rows} rows "
      f"of other kernels fired")
sys.exit(0 if other_fired == 0 and own_caught >= 0.95 * own_small else 1)
EOF
    ;;
scaled)
    [ $# -gt 0 ] || set -- --kernel avx2,blocked --threads 1 --repetitions 9 --min-time 0.02 \
        --suite smoke
    run "$work/scaled-a.json" "" "$@"
    /usr/bin/python3 - "$work/scaled-a.json" "$work/scaled-b.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["benchmarks"]:
    for key in ("real_time", "cpu_time"):
        if isinstance(b.get(key), (int, float)):
            b[key] *= 1.3
json.dump(d, open(sys.argv[2], "w"))
EOF
    "$AB" compare "$work/scaled-a.json" "$work/scaled-b.json" --json "$work/scaled.v.json" \
        >"$work/scaled.txt" || true
    /usr/bin/python3 - "$work/scaled.v.json" <<'EOF'
import collections, json, sys
d = json.load(open(sys.argv[1]))
v = d["rows"]
c = collections.Counter(r["verdict"] for r in v)
bad = [r for r in v if r["verdict"] == "no change" and r["mde"] > 0.10]
whole = d.get("whole_run", [])
print(f"x1.3 evidence: {len(v)} rows, one file a side: " + ", ".join(f"{n} {k}" for k, n in c.items())
      + f"; MDE {min(r['mde'] for r in v):.2f}-{max(r['mde'] for r in v):.2f}; whole run: "
      + (whole[0]["verdict"] if whole else "not computed (too few calls of 200 us)")
      + f"; 'no change' with an MDE above 10%: {len(bad)}")
sys.exit(1 if bad else 0)
EOF
    ;;
mde)
    n=${1:-20}
    shift || true
    [ $# -gt 0 ] || set -- --suite gate --threads 1 --kernel avx2,blocked
    for i in $(seq 1 "$n"); do
        run "$work/mde-$i-a.json" "" "$@"
        run "$work/mde-$i-b.json" "" "$@"
        "$AB" compare "$work/mde-$i-a.json" "$work/mde-$i-b.json" --json "$work/mde-$i.v.json" \
            >"$work/mde-$i.txt" || true
    done
    /usr/bin/python3 - "$n" "$work" <<'EOF'
import json, sys
n, work = int(sys.argv[1]), sys.argv[2]
fired = rows = small = 0
for i in range(1, n + 1):
    v = json.load(open(f"{work}/mde-{i}.v.json"))["rows"]
    fired += any(r["verdict"] == "REGRESSION" for r in v)
    rows += len(v)
    small += sum(r["mde"] <= 0.10 for r in v)
print(f"cross-run evidence: {n} A/A pairs of separate runs, one file a side: {fired} called a "
      f"regression; {small} of {rows} rows ({100 * small / rows:.0f}%) could see 10% (MDE <= 10%)")
sys.exit(1 if fired else 0)
EOF
    ;;
reference)
    n=${1:-20}
    shift || true
    # Three classes of row: the smoke suite (small, in cache), one encoder
    # layer (compute), one decoding step from an fp32 cache (memory).
    [ $# -gt 0 ] || set -- --kernel avx512,blocked --threads 1 --max-time 0.5 --shape \
        "$(suite_shapes smoke | paste -sd ';' -);op=encoder,B=1,L=128,D=768,H=12,F=3072,norm=post,act=gelu,mask=none;op=sdpa,B=1,H=32,Lq=1,Lk=16384,Dh=128,mask=causal-br"
    for i in $(seq 1 "$n"); do
        run "$work/ref-$i.json" "" --reference "$@"
        echo "reference run $i of $n done"
    done
    /usr/bin/python3 - "$n" "$work" <<'EOF'
import json, math, statistics, sys
n, work = int(sys.argv[1]), sys.argv[2]
rows, refs = {}, {"compute": [], "read": []}
for i in range(1, n + 1):
    seen = False
    for b in json.load(open(f"{work}/ref-{i}.json"))["benchmarks"]:
        if b.get("aggregate_name") != "median" or "reference_compute_time" not in b:
            continue
        rows.setdefault(b["run_name"], []).append(
            (b["real_time"], b["real_time_per_compute_reference"], b["real_time_per_read_reference"]))
        if not seen:   # the process's first group of rounds stands for its references
            refs["compute"].append(b["reference_compute_time"])
            refs["read"].append(b["reference_read_time"])
            seen = True

def sd_log(xs):
    return statistics.stdev(math.log(x) for x in xs)

def kind(name):
    return ("memory (decode, fp32 cache)" if "_Lq1_" in name else
            "compute (encoder, L 128, D 768)" if "D768" in name else "small (smoke suite, in cache)")

for what, xs in refs.items():
    if len(xs) > 1:
        print(f"the {what} reference across the {len(xs)} processes: sd of log {sd_log(xs):.3f}")
classes = {}
for name, v in sorted(rows.items()):
    if len(v) < n:
        continue
    sd = [sd_log([x[k] for x in v]) for k in range(3)]
    classes.setdefault(kind(name), []).append(sd)
    print(f"{name:60s} sd of log: time {sd[0]:.3f}, / compute ref {sd[1]:.3f}, / read ref {sd[2]:.3f}")
for k, sds in sorted(classes.items()):
    med = [statistics.median(s[i] for s in sds) for i in range(3)]
    best = min((med[1], "compute"), (med[2], "read"))
    verdict = "adopt" if best[0] <= 0.6 * med[0] else "do not adopt"
    print(f"{k}: {len(sds)} rows, median sd of log(time) {med[0]:.3f}; divided by the compute "
          f"reference {med[1]:.3f} ({med[1] / med[0]:.2f}x), by the read reference {med[2]:.3f} "
          f"({med[2] / med[0]:.2f}x): {verdict} (adopt only at <= 0.6x)")
EOF
    ;;
*)
    echo "usage: tests/verdict_evidence.sh aa|inject|gross|rank|unstable|lib-aa|lib-inject|scaled|mde|reference [N] [run args]" >&2

    exit 2
    ;;
esac
