#!/bin/sh
# crash.sh — the files attnbench writes survive crashes, races and full or
# read-only disks (run by make test):
#   1. kill -9 at random moments of `attnbench tune`: the wisdom still parses
#      and keeps every record stored before; a stray temporary file does not
#      disturb the next tune;
#   2. kill -9 at random moments of `attnbench history add` (one
#      transaction per file): the database opens, keeps every run stored
#      before, and every run in it is whole;
#   3. two tuners at once on one wisdom file: both records are kept;
#   4. a full disk and a read-only one (tmpfs mounts; skipped with the
#      reason when this system does not let us mount): a clear one-line
#      error naming the file, exit status 1 or 2, the old file unchanged.
# Usage: tests/crash.sh path/to/attnbench. Last line "crash: N passed, N failed".
set -u
AB=$1
case $AB in /*) ;; *) AB=$(pwd)/$AB ;; esac
PY=${PYTHON:-python3}
TMP=$(mktemp -d) || exit 1
MOUNTS=
cleanup() {
    for m in $MOUNTS; do umount "$m" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
export ATTN_WISDOM="$TMP/unused-wisdom" OMP_PROC_BIND=close OMP_PLACES=cores
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# Milliseconds in [0, max): the kill moments.
random_ms() { awk -v max="$1" -v seed="$2" 'BEGIN { srand(seed); printf "%d", rand() * max }'; }

# The record lines of a wisdom file, without their timing fields.
records() { grep '^record ' "$1" | cut -d' ' -f1-8 | sort; }

# ---- 1. kill -9 during tune --------------------------------------------------
W=$TMP/w1/wisdom
"$AB" tune --shape 'op=sdpa,B=1,H=1,L=16,Dh=8;op=mha,B=1,L=16,D=16,H=2;op=sdpa,B=1,H=2,L=40,Dh=8,mask=causal' \
    --level estimate --threads 1 --wisdom "$W" >/dev/null 2>&1
records "$W" >"$TMP/before1"
if [ "$(wc -l <"$TMP/before1")" -ne 3 ]; then
    bad "tune: the first tune stored $(wc -l <"$TMP/before1") records, not 3"
fi
lost=0 unreadable=0
for trial in 1 2 3 4 5 6 7 8; do
    "$AB" tune --shape 'op=sdpa,B=1,H=2,L=64,Dh=16,mask=causal' --level measure --threads 1 \
        --budget 1 --rounds 3 --min-time 0.01 --wisdom "$W" >/dev/null 2>&1 &
    pid=$!
    sleep "$(awk -v ms="$(random_ms 1500 "$trial")" 'BEGIN { print ms / 1000 }')"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if ! "$AB" tune --export "$TMP/export1" --wisdom "$W" >/dev/null 2>&1; then
        unreadable=$((unreadable + 1))
    elif [ -n "$(records "$W" | comm -23 "$TMP/before1" -)" ]; then
        lost=$((lost + 1))
    fi
done
if [ $unreadable -eq 0 ] && [ $lost -eq 0 ]; then
    ok "tune: 8 kills at random moments, the wisdom readable and its 3 records kept each time"
else
    bad "tune: after kills, $unreadable unreadable wisdom file(s), $lost time(s) records lost"
fi
if "$AB" tune --shape 'op=sdpa,B=1,H=1,L=200,Dh=8' --level estimate --threads 1 --wisdom "$W" \
        >/dev/null 2>&1 && [ -z "$(records "$W" | comm -23 "$TMP/before1" -)" ]; then
    ok "tune: a tune after the kills works ($(ls "$TMP/w1" | grep -c '\.tmp\.') stray temporary file(s) ignored)"
else
    bad "tune: a tune after the kills failed or lost records"
fi

# ---- 2. kill -9 during history add -------------------------------------------
HISTORY=yes
printf '{"context": {}, "benchmarks": [{"name": "x", "run_type": "iteration", "real_time": 1, "time_unit": "ns"}]}\n' \
    >"$TMP/probe.json"
if ! "$AB" history add --db "$TMP/probe.db" "$TMP/probe.json" >/dev/null 2>&1; then
    HISTORY=
    echo "skip: history: this attnbench has no SQLite"
else
    mkdir -p "$TMP/h"
    "$AB" run --suite gate --kernel blocked --op sdpa --iterations 2 --repetitions 2 --no-peaks \
        --json "$TMP/h/base.json" >/dev/null 2>&1
    # Forty commits of that file: forty transactions for the kills to hit.
    "$PY" - "$TMP/h" <<'EOF'
import json, sys
d = sys.argv[1]
src = json.load(open(f"{d}/base.json"))
for i in range(40):
    src["context"]["git_commit"] = f"crash{i:04d}"
    src["context"]["date"] = f"2026-02-{1 + i % 28:02d}T{i % 24:02d}:00:00+0000"
    json.dump(src, open(f"{d}/c{i:02d}.json", "w"))
EOF
    DB=$TMP/h/history.db
    "$AB" history add "$TMP/h/c00.json" --db "$DB" >/dev/null 2>&1
    per_run=$("$PY" -c 'import json, sys; b = json.load(open(sys.argv[1]))["benchmarks"]
print(len({x["run_name"] for x in b if x.get("run_type") != "aggregate"}))' "$TMP/h/base.json")
    check_db() {   # prints "runs broken" or "error"
        "$PY" - "$DB" "$per_run" <<'EOF'
import sqlite3, sys
try:
    # Read-write, as the next attnbench would open it: a killed transaction
    # leaves a hot journal that opening rolls back (read-only cannot).
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=rw", uri=True)
    runs = db.execute("SELECT id FROM runs").fetchall()
    broken = sum(1 for (r,) in runs
                 if db.execute("SELECT COUNT(*) FROM results WHERE run_id = ?", (r,)).fetchone()[0]
                 != int(sys.argv[2]))
    print(len(runs), broken)
except Exception as e:
    print("error", e)
EOF
    }
    # How long adding all forty takes here: the kills land within it.
    cp "$DB" "$TMP/h/base.db"
    t0=$(date +%s%N)
    "$AB" history add "$TMP"/h/c*.json --db "$TMP/h/timing.db" >/dev/null 2>&1
    span=$(( ($(date +%s%N) - t0) / 1000000 ))
    worse=0 seen=
    for trial in 1 2 3 4 5 6 7 8; do
        rm -f "$DB-journal" "$DB-wal" "$DB-shm"   # (a stale journal would apply to the copy)
        cp "$TMP/h/base.db" "$DB"
        "$AB" history add "$TMP"/h/c*.json --db "$DB" >/dev/null 2>&1 &
        pid=$!
        sleep "$(awk -v ms="$(random_ms "$span" "$trial")" 'BEGIN { print ms / 1000 }')"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        set -- $(check_db)
        if [ "$1" = error ] || [ "$2" -ne 0 ] || [ "$1" -lt 1 ] ||
           ! "$AB" history show --db "$DB" >/dev/null 2>&1; then
            worse=$((worse + 1))
            echo "  trial $trial: $*"
        fi
        seen="$seen $1"
    done
    if [ $worse -eq 0 ]; then
        ok "history add: 8 kills within the ${span} ms of adding 40 runs: the stored run kept, every run whole (runs in after each kill:$seen)"
    else
        bad "history add: $worse kill(s) lost runs, left a partial run or a database that does not open"
    fi
fi

# ---- 3. two tuners at once ---------------------------------------------------
W=$TMP/w3/wisdom
for round in 1 2 3; do
    rm -f "$W"
    "$AB" tune --shape 'op=sdpa,B=1,H=1,L=16,Dh=8' --level measure --threads 1 --budget 1 \
        --rounds 3 --min-time 0.01 --wisdom "$W" >/dev/null 2>&1 &
    a=$!
    "$AB" tune --shape 'op=mha,B=1,L=16,D=16,H=2' --level measure --threads 1 --budget 1 \
        --rounds 3 --min-time 0.01 --wisdom "$W" >/dev/null 2>&1 &
    b=$!
    wait $a
    wait $b
    n=$(records "$W" 2>/dev/null | wc -l)
    [ "$n" -eq 2 ] || break
done
if [ "$n" -eq 2 ]; then
    ok "two tuners at once on one file, 3 times: both records kept"
else
    bad "two tuners at once: $n record(s) in the file, not 2"
fi

# ---- 4. full and read-only disks ---------------------------------------------
mounted() {   # DIR OPTIONS: a small tmpfs, or why not
    mkdir -p "$1"
    if mount -t tmpfs -o "$2" tmpfs "$1" 2>"$TMP/mount.err"; then
        MOUNTS="$MOUNTS $1"
        return 0
    fi
    return 1
}
# A tune that cannot write WISDOM must fail with a message naming it and
# leave it as BEFORE (a copy) was.
tune_refused() {   # LABEL WISDOM BEFORE
    rc=0
    "$AB" tune --shape 'op=mha,B=1,L=16,D=16,H=2' --level estimate --threads 1 \
        --wisdom "$2" >/dev/null 2>"$TMP/refused.err" || rc=$?
    if [ $rc -ne 0 ] && grep -q "$2" "$TMP/refused.err" && cmp -s "$2" "$3"; then
        ok "$1: tune fails (exit $rc: $(head -n 1 "$TMP/refused.err" | cut -c1-100)...), the wisdom unchanged"
    else
        bad "$1: tune exit $rc, message '$(head -n 1 "$TMP/refused.err")', file unchanged: $(cmp -s "$2" "$3" && echo yes || echo no)"
    fi
}
if mounted "$TMP/full" size=64k; then
    "$AB" tune --shape 'op=sdpa,B=1,H=1,L=16,Dh=8' --level estimate --threads 1 \
        --wisdom "$TMP/full/wisdom" >/dev/null 2>&1
    cp "$TMP/full/wisdom" "$TMP/full-before"
    dd if=/dev/zero of="$TMP/full/filler" bs=1k count=1000 2>/dev/null   # fills it
    tune_refused "full disk" "$TMP/full/wisdom" "$TMP/full-before"
    rc=0
    "$AB" run --suite gate --kernel blocked --op sdpa --iterations 1 --repetitions 1 --no-peaks \
        --json "$TMP/full/r.json" >/dev/null 2>"$TMP/full-run.err" || rc=$?
    if [ $rc -ne 0 ] && grep -q "$TMP/full/r.json" "$TMP/full-run.err" && [ ! -e "$TMP/full/r.json" ]; then
        ok "full disk: run --json fails (exit $rc) naming the file, and leaves no partial file"
    else
        bad "full disk: run --json exit $rc, message '$(head -n 1 "$TMP/full-run.err")'"
    fi
    if [ -n "$(ls "$TMP/full" | grep '\.tmp\.')" ]; then
        bad "full disk: temporary files left behind: $(ls "$TMP/full")"
    fi
else
    echo "skip: full disk: cannot mount a tmpfs here ($(cat "$TMP/mount.err"))"
fi
if mounted "$TMP/romount" size=64k; then
    "$AB" tune --shape 'op=sdpa,B=1,H=1,L=16,Dh=8' --level estimate --threads 1 \
        --wisdom "$TMP/romount/wisdom" >/dev/null 2>&1
    cp "$TMP/romount/wisdom" "$TMP/ro-before"
    mount -o remount,ro "$TMP/romount"
    tune_refused "read-only disk" "$TMP/romount/wisdom" "$TMP/ro-before"
    if [ -z "$HISTORY" ]; then
        echo "skip: read-only disk: history add (no SQLite)"
    else
        rc=0
        "$AB" history add "$TMP/h/c01.json" --db "$TMP/romount/history.db" >/dev/null \
            2>"$TMP/ro-h.err" || rc=$?
        if [ $rc -ne 0 ] && grep -q "$TMP/romount/history.db" "$TMP/ro-h.err"; then
            ok "read-only disk: history add fails (exit $rc) naming the database"
        else
            bad "read-only disk: history add exit $rc, message '$(head -n 1 "$TMP/ro-h.err")'"
        fi
    fi
else
    echo "skip: read-only disk: cannot mount a tmpfs here ($(cat "$TMP/mount.err"))"
fi

echo "crash: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
