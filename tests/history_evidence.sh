#!/bin/sh
# history_evidence.sh — the figures of docs/regression-tracking.md's fleet
# section, on the PostgreSQL database $ATTN_TEST_POSTGRES (wiped: a scratch
# database) and SQLite files. Not part of make test (minutes, and part 2
# restarts the server: run it as root on a machine whose PostgreSQL is a
# Debian cluster only the tests use).
#   1. 8 writer processes x 50 result files each, from 4 machine keys, all
#      adding at once: every run present once, and the steps identical to
#      the same 400 files added one by one into SQLite.
#   2. kill -9 of an add at random moments, 20 times: each file whole or
#      absent; the server restarted during an add: that add fails cleanly
#      (exit 2, one line), the next one succeeds.
#   3. The time to add one `make bench` file, SQLite and PostgreSQL,
#      interleaved, 7 each (medians).
# Usage: tests/history_evidence.sh path/to/attnbench [BENCH.json]
set -u
AB=${1:?usage: tests/history_evidence.sh path/to/attnbench [BENCH.json]}
BENCH=${2:-$(ls -t results/*.json 2>/dev/null | head -n 1)}
PG=${ATTN_TEST_POSTGRES:?set ATTN_TEST_POSTGRES to a postgresql:// URL of a scratch database}
PY=${PYTHON:-/usr/bin/python3}
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT

sql() {   # QUERY: one value from the PostgreSQL store
    "$PY" - "$PG" "$1" <<'EOF'
import sys, psycopg2
c = psycopg2.connect(sys.argv[1]); c.autocommit = True
cur = c.cursor(); cur.execute(sys.argv[2])
print(cur.fetchone()[0] if cur.description else "")
EOF
}
wipe() { sql "DROP TABLE IF EXISTS steps, results, runs, machines, wisdom, meta CASCADE" >/dev/null; }
steps_of() {   # TARGET: the steps table as sorted text
    if [ "${1#postgres}" != "$1" ]; then
        "$PY" - "$1" <<'EOF'
import sys, psycopg2
c = psycopg2.connect(sys.argv[1]).cursor()
c.execute("SELECT machine_id, name, git_commit, before_s, after_s FROM steps ORDER BY 1, 2, 3")
for r in c.fetchall(): print(*r)
EOF
    else
        "$PY" - "$1" <<'EOF'
import sys, sqlite3
c = sqlite3.connect(sys.argv[1])
for r in c.execute("SELECT machine_id, name, git_commit, before_s, after_s FROM steps ORDER BY 1, 2, 3"):
    print(*r)
EOF
    fi
}

# ---- 1. 8 writers x 50 files, 4 machine keys ------------------------------------------------
echo "== 1. 8 writers x 50 files from 4 machine keys, at once"
mkdir -p "$TMP/f"
"$PY" - "$TMP/f" <<'EOF'
import json, random, sys
rnd = random.Random(34)
names = [f"{op}/{k}/B1_H12_L{L}_Dh64/threads:{t}" for op in ("sdpa", "mha") for k in ("avx2", "blocked")
         for L in (128, 512, 2048) for t in (1, 2)]          # 24 series per machine
for i in range(400):
    m, c = i % 4, i // 4                                   # 100 commits per machine
    bench = []
    for n in names:
        slow = 1.25 if m in (0, 2) and c >= 60 and "avx2" in n else 1.0
        t = 1e6 * (1 + names.index(n)) * slow
        bench += [{"name": n, "run_name": n, "run_type": "iteration", "threads": 1,
                   "iterations": 10, "real_time": t * (1 + rnd.gauss(0, 0.01)), "cpu_time": t,
                   "time_unit": "ns"} for _ in range(5)]
    ctx = {"machine_key": f"vendor=Fleet id={m}", "machine_id": f"{m:016x}",
           "git_commit": f"{c:04d}{'f' * 36}", "date": f"2026-06-{1 + c // 4:02d}T{c % 4 * 6:02d}:{m:02d}:00+0000"}
    json.dump({"context": ctx, "benchmarks": bench}, open(f"{sys.argv[1]}/r{i:03d}.json", "w"))
EOF
wipe
"$AB" history show --db "$PG" >/dev/null   # the schema, made once
t0=$(date +%s%N)
for w in 0 1 2 3 4 5 6 7; do
    # Writer w: files w, w+8, ...: each writer spans all four machines, so
    # every series has several writers at once.
    files=$(seq "$w" 8 399 | awk -v d="$TMP/f" '{ printf "%s/r%03d.json ", d, $1 }')
    # shellcheck disable=SC2086
    "$AB" history add --db "$PG" $files >"$TMP/w$w.out" 2>&1 &
done
wait
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
failed=$(cat "$TMP"/w*.out | grep -vc ": added")
echo "  8 writers done in $ms ms; lines other than 'added': $failed"
echo "  runs: $(sql 'SELECT count(*) FROM runs'), distinct files: $(sql 'SELECT count(DISTINCT content_sha256) FROM runs'), results: $(sql 'SELECT count(*) FROM results') (want 400, 400, 9600)"
"$AB" history add --db "$TMP/one.db" "$TMP"/f/r*.json >/dev/null 2>&1
steps_of "$PG" >"$TMP/steps.pg"
steps_of "$TMP/one.db" >"$TMP/steps.lite"
if cmp -s "$TMP/steps.pg" "$TMP/steps.lite"; then
    echo "  steps: $(wc -l <"$TMP/steps.pg") found, identical (bit for bit) to the 400 files added one by one into SQLite"
else
    echo "  steps DIFFER from one-by-one SQLite:"; diff "$TMP/steps.pg" "$TMP/steps.lite" | head
fi
# The same adds again from 8 writers: all skipped, nothing added twice.
for w in 0 1 2 3 4 5 6 7; do
    "$AB" history add --db "$PG" "$TMP"/f/r*.json >"$TMP/again$w.out" 2>&1 &
done
wait
echo "  all 400 again from each of 8 writers: $(cat "$TMP"/again*.out | grep -c 'already in the history') of 3200 skipped; runs $(sql 'SELECT count(*) FROM runs')"

# ---- 2. kill -9, and a restart ---------------------------------------------------------------
echo "== 2. kill -9 of an add at random moments, 20 times"
per=24 worse=0 seen=
for trial in $(seq 1 20); do
    wipe
    "$AB" history add --db "$PG" "$TMP"/f/r00*.json "$TMP"/f/r01*.json >/dev/null 2>&1 &
    pid=$!
    sleep "$(awk -v t="$trial" 'BEGIN { srand(t); printf "%.3f", 0.02 + rand() * 0.5 }')"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    # (a kill before the schema is made leaves no table)
    runs=$(sql "SELECT CASE WHEN to_regclass('runs') IS NULL THEN 0 ELSE (SELECT count(*) FROM runs) END")
    partial=$(sql "SELECT CASE WHEN to_regclass('runs') IS NULL THEN 0 ELSE (SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM results x WHERE x.run_id = r.id) <> $per) END")
    [ "$partial" = 0 ] || worse=$((worse + 1))
    seen="$seen $runs"
done
echo "  runs in after each kill:$seen; trials with a partial run: $worse of 20"
if "$AB" history add --db "$PG" "$TMP"/f/r00*.json "$TMP"/f/r01*.json >"$TMP/after.out" 2>&1; then
    echo "  the next add: $(grep -c ': added' "$TMP/after.out") added, $(grep -c 'already' "$TMP/after.out") already there"
fi

echo "== 2b. the server restarted during an add"
ver=$(pg_lsclusters -h | awk 'NR == 1 { print $1 }')
wipe
"$AB" history add --db "$PG" "$TMP"/f/r*.json >"$TMP/restart.out" 2>"$TMP/restart.err" &
pid=$!
sleep 1
pg_ctlcluster "$ver" main restart -m fast
wait "$pid"
rc=$?
echo "  the add: exit $rc; stderr ($(wc -l <"$TMP/restart.err") line): $(cat "$TMP/restart.err")"
echo "  files added before the restart: $(grep -c ': added' "$TMP/restart.out"); runs stored: $(sql 'SELECT count(*) FROM runs'); partial runs: $(sql "SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM results x WHERE x.run_id = r.id) <> 24")"
"$AB" history add --db "$PG" "$TMP"/f/r*.json >"$TMP/next.out" 2>&1
echo "  the next add: exit $?; $(grep -c ': added' "$TMP/next.out") added, $(grep -c 'already' "$TMP/next.out") already there; runs $(sql 'SELECT count(*) FROM runs')"

# ---- 3. the time to add one make-bench file ---------------------------------------------------
echo "== 3. adding one make-bench file ($BENCH), SQLite vs PostgreSQL, interleaved"
if [ -z "$BENCH" ] || [ ! -f "$BENCH" ]; then
    echo "  no benchmark file: give one (make bench writes results/bench-*.json)"
else
    lite= pg=
    for i in 1 2 3 4 5 6 7; do
        # A fresh file each time (its hash would be skipped otherwise), into a
        # store that already holds 10 commits of it.
        "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); d["context"]["git_commit"]=sys.argv[3]; json.dump(d,open(sys.argv[2],"w"))' \
            "$BENCH" "$TMP/b.json" "timing$i"
        for store in lite pg; do
            if [ $store = lite ]; then db=$TMP/t.db; else db=$PG; fi
            t0=$(date +%s%N)
            "$AB" history add --db "$db" "$TMP/b.json" >/dev/null 2>&1
            t=$(( ($(date +%s%N) - t0) / 1000000 ))
            if [ $store = lite ]; then lite="$lite $t"; else pg="$pg $t"; fi
        done
    done
    med() { printf '%s\n' $1 | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
    echo "  $(grep -o '"run_name"' "$BENCH" | wc -l) entries; ms per add: SQLite$lite (median $(med "$lite")), PostgreSQL$pg (median $(med "$pg"))"
fi
wipe
