#!/bin/sh
# history.sh — `attnbench history` and the fleet's wisdom from the command
# line, the same tests on each store built in: an SQLite file, and the
# PostgreSQL database named by $ATTN_TEST_POSTGRES (a postgresql:// URL of a
# database these tests may wipe; skipped, saying so, when unset).
#   - add, show --machine all, steps --since (exit 1 when a series got
#     slower, 2 for a commit the history lacks), a hostile benchmark name
#     round-tripped, the JSON files untouched;
#   - tune --publish on one "machine", tune --pull and `run --kernel auto`
#     with $ATTN_WISDOM_DB on a fresh wisdom file of the same key;
#   - faults: a server that is down, a refused login, a URL scheme that is
#     no store, a build without libpq: one line, exit 2, no password in it,
#     nothing written (the bug of old: the URL taken for a path);
#   - PostgreSQL: kill -9 of adds at random moments (each file whole or
#     absent).
# Usage: tests/history.sh path/to/attnbench
set -u
AB=${1:?usage: tests/history.sh path/to/attnbench}
case $AB in /*) ;; *) AB=$PWD/$AB ;; esac   # the fault tests run it from elsewhere
PY=${PYTHON:-python3}
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL history: $*"; }
check() { if eval "$1"; then ok; else bad "$2"; fi; }

# Eight commits on two machines of two benchmarks, one of them a name full
# of SQL: both 30% slower on machine A from commit 5 on.
mkdir -p "$TMP/files"
"$PY" - "$TMP/files" <<'EOF'
import json, sys
hostile = "sdpa/x'); DROP TABLE runs; --/caf\u00e9 \u20ac $1 ?/threads:1"
for m in ("a", "b"):
    for i in range(8):
        t = 1e6 * (1.3 if m == "a" and i >= 5 else 1.0) * (1 + 0.003 * ((i * 7) % 3 - 1))
        b = [{"name": n, "run_name": n, "run_type": "iteration", "threads": 1, "iterations": 10,
              "real_time": t * (1 + 0.001 * r), "cpu_time": t, "time_unit": "ns"}
             for n in ("sdpa/avx2/B1_H2_L64_Dh16/threads:1", hostile) for r in range(5)]
        ctx = {"machine_key": f"vendor=Test id={m}", "machine_id": f"00000000000000{m}{m}",
               "git_commit": f"commit{i:02d}", "date": f"2026-03-{i + 1:02d}T10:00:00+0000"}
        json.dump({"context": ctx, "benchmarks": b},
                  open(f"{sys.argv[1]}/{m}{i}.json", "w", encoding="utf-8"), ensure_ascii=False)
EOF
sums() { cat "$TMP"/files/*.json | cksum; }
before=$(sums)

# With PostgreSQL built in, a server that is not there says "cannot
# connect"; without, "without PostgreSQL".
"$AB" history show --db "postgresql://u:hunter2@127.0.0.1:1/none" >"$TMP/probe.out" 2>&1
HAVE_PG=; grep -q "cannot connect" "$TMP/probe.out" && HAVE_PG=1
HAVE_LITE=1
"$AB" history add --db "$TMP/probe.db" "$TMP/files/a0.json" >/dev/null 2>"$TMP/probe.err" || HAVE_LITE=

# Reading a store that is not there is an error that creates nothing (a
# mistyped --db read as an empty history, and made the file and its folder).
"$AB" history show --db "$TMP/nowhere/h.db" >"$TMP/missing.out" 2>&1
check '[ $? -eq 2 ] && [ ! -e "$TMP/nowhere" ] && grep -q "no history there" "$TMP/missing.out"' \
    "history show of a missing store: $(cat "$TMP/missing.out")"
"$AB" tune --pull "$TMP/nowhere/h.db" --wisdom "$TMP/pulled.w" >"$TMP/missing.out" 2>&1
check '[ $? -eq 2 ] && [ ! -e "$TMP/nowhere" ]' "tune --pull of a missing store: $(cat "$TMP/missing.out")"
# ... nor one that is there and empty, which it leaves empty (it once got a schema).
if [ -n "$HAVE_LITE" ]; then
    : >"$TMP/empty.db"
    "$AB" history show --db "$TMP/empty.db" >"$TMP/missing.out" 2>&1
    check '[ $? -eq 2 ] && [ ! -s "$TMP/empty.db" ] && grep -q "no history there" "$TMP/missing.out"' \
        "history show of an empty file: $(cat "$TMP/missing.out")"
fi

# ---- The same tests on each store ---------------------------------------------------------
store_tests() {   # NAME TARGET
    name=$1 db=$2
    "$AB" history add --db "$db" "$TMP"/files/a*.json "$TMP"/files/b*.json >"$TMP/add.out" 2>&1
    check '[ $? -eq 0 ] && [ "$(grep -c ": added" "$TMP/add.out")" -eq 16 ]' \
        "$name: add: $(cat "$TMP/add.out")"
    "$AB" history add --db "$db" "$TMP/files/a3.json" >"$TMP/add.out" 2>&1
    check 'grep -q "already in the history" "$TMP/add.out"' "$name: a file added twice: $(cat "$TMP/add.out")"
    "$AB" history show --db "$db" --machine all >"$TMP/show.out" 2>&1
    check '[ $? -eq 0 ] && grep -q "^machine 00000000000000aa (8 runs): vendor=Test id=a" "$TMP/show.out" &&
           grep -q "^machine 00000000000000bb (8 runs)" "$TMP/show.out" &&
           grep "avx2" "$TMP/show.out" | grep -q "slower +30.0% (commit05)"' \
        "$name: show --machine all: $(cat "$TMP/show.out")"
    "$AB" history show --db "$db" --benchmark "sdpa/x'); DROP TABLE runs; --/café € \$1 ?/threads:1" \
        --machine 00000000000000bb >"$TMP/show.out" 2>&1
    check '[ "$(grep -c "commit0" "$TMP/show.out")" -eq 8 ]' \
        "$name: the hostile name, read back: $(cat "$TMP/show.out")"
    # A name that is not UTF-8 (invalid JSON text): refused alike by both
    # stores (PostgreSQL could not hold it), nothing added.
    printf '{"context": {"machine_key": "k", "machine_id": "00000000000000ee", "git_commit": "u1"},
"benchmarks": [{"name": "bad\377name", "run_type": "iteration", "iterations": 1, "real_time": 1000,
"time_unit": "ns"}]}\n' >"$TMP/not-utf8.json"
    "$AB" history add --db "$db" "$TMP/not-utf8.json" >"$TMP/add.out" 2>&1
    check '[ $? -eq 2 ] && grep -q "a benchmark name is not UTF-8" "$TMP/add.out"' \
        "$name: a name that is not UTF-8: $(cat "$TMP/add.out")"
    # A file refused for what it holds is skipped like a file that does not
    # parse: the files after it are still added (they were dropped unsaid).
    sed 's/00000000000000aa/00000000000000dd/; s/commit00/after-bad/' "$TMP/files/a0.json" \
        >"$TMP/after-bad.json"
    "$AB" history add --db "$db" "$TMP/not-utf8.json" "$TMP/after-bad.json" >"$TMP/add.out" 2>&1
    check '[ $? -eq 2 ] && grep -q "after-bad.json: added" "$TMP/add.out"' \
        "$name: the file after a refused one: $(cat "$TMP/add.out")"
    "$AB" history steps --db "$db" --since commit03 >"$TMP/steps.out" 2>&1
    rc=$?
    check '[ $rc -eq 1 ] && grep -q "^machine 00000000000000aa" "$TMP/steps.out" &&
           ! grep -q "^machine 00000000000000bb" "$TMP/steps.out" &&
           grep -q "2 slower steps on 1 machine" "$TMP/steps.out"' \
        "$name: steps --since commit03 (exit $rc): $(cat "$TMP/steps.out")"
    "$AB" history steps --db "$db" --since commit05 >"$TMP/steps.out" 2>&1
    check '[ $? -eq 0 ] && grep -q "0 slower steps" "$TMP/steps.out"' \
        "$name: steps --since the step's own commit: $(cat "$TMP/steps.out")"
    "$AB" history steps --db "$db" --since nosuch >"$TMP/steps.out" 2>&1
    check '[ $? -eq 2 ] && grep -q "no run at commit nosuch" "$TMP/steps.out"' \
        "$name: steps --since an unknown commit: $(cat "$TMP/steps.out")"

    # The fleet's wisdom: one machine tunes and publishes, a fresh machine of
    # the same key (a new wisdom file) pulls, and `run --kernel auto` with
    # $ATTN_WISDOM_DB takes it unasked.
    SHAPE="op=sdpa,B=1,H=2,L=32,Dh=16"
    ATTN_WISDOM="$TMP/w-tuned" "$AB" tune --shape "$SHAPE" --level estimate --threads 1 \
        --publish "$db" >"$TMP/pub.out" 2>&1
    check '[ $? -eq 0 ] && grep -q "^published 1 records" "$TMP/pub.out"' "$name: tune --publish: $(cat "$TMP/pub.out")"
    rm -f "$TMP/w-new"
    ATTN_WISDOM="$TMP/w-new" "$AB" tune --pull "$db" >"$TMP/pull.out" 2>&1
    check '[ $? -eq 0 ] && grep -q "checked here" "$TMP/pull.out" && grep -q "^pulled 1 records" "$TMP/pull.out" &&
           ATTN_WISDOM="$TMP/w-new" "$AB" info | grep -q "1 records for this machine"' \
        "$name: tune --pull: $(cat "$TMP/pull.out")"
    rm -f "$TMP/w-auto"
    ATTN_WISDOM="$TMP/w-auto" ATTN_WISDOM_DB="$db" "$AB" run --kernel auto --shape "$SHAPE" \
        --threads 1 --repetitions 2 --precision 0 --min-time 0.001 --no-peaks --json "$TMP/auto.json" \
        >"$TMP/auto.out" 2>&1
    check '[ $? -eq 0 ] && grep -q "\"chosen_by\": \"wisdom\"" "$TMP/auto.json"' \
        "$name: run --kernel auto with ATTN_WISDOM_DB: $(cat "$TMP/auto.out")"
    check '[ "$(sums)" = "$before" ]' "$name: the JSON files changed"
}

if [ -n "$HAVE_LITE" ]; then
    store_tests sqlite "$TMP/lite/history.db"
else
    echo "skip: history sqlite: this attnbench has no SQLite"
fi

PG=${ATTN_TEST_POSTGRES:-}
wipe() { "$PY" - "$PG" <<'EOF'
import sys, psycopg2
c = psycopg2.connect(sys.argv[1]); c.autocommit = True
c.cursor().execute("DROP TABLE IF EXISTS steps, results, runs, machines, wisdom, meta CASCADE")
EOF
}
if [ -z "$HAVE_PG" ]; then
    echo "skip: history postgres: this attnbench was built without PostgreSQL (libpq-dev)"
elif [ -z "$PG" ]; then
    echo "skip: history postgres: ATTN_TEST_POSTGRES is not set (a postgresql:// URL of a database the tests may wipe)"
elif ! wipe 2>"$TMP/wipe.err"; then
    bad "postgres: cannot empty \$ATTN_TEST_POSTGRES's database: $(tail -n 1 "$TMP/wipe.err")"
else
    store_tests postgres "$PG"
    # kill -9 at random moments of adds: each file whole or absent.
    wipe
    per_file=2 worse=0
    for trial in 1 2 3 4 5; do
        "$AB" history add --db "$PG" "$TMP"/files/*.json >/dev/null 2>&1 &
        pid=$!
        sleep "0.0$((trial * 13 % 9 + 1))"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        partial=$("$PY" - "$PG" $per_file <<'EOF'
import sys, psycopg2
c = psycopg2.connect(sys.argv[1]).cursor()
c.execute("SELECT to_regclass('runs') IS NOT NULL")
if c.fetchone()[0]:     # (a kill before the schema was made leaves none)
    c.execute("SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM results x "
              "WHERE x.run_id = r.id) <> %s", (int(sys.argv[2]),))
    print(c.fetchone()[0])
else:
    print(0)
EOF
)
        [ "$partial" = 0 ] || { worse=$((worse + 1)); echo "  trial $trial: $partial partial runs"; }
    done
    "$AB" history add --db "$PG" "$TMP"/files/*.json >"$TMP/add.out" 2>&1
    check '[ $worse -eq 0 ] && [ $? -eq 0 ] && [ "$(grep -c ": added\|already in" "$TMP/add.out")" -eq 16 ]' \
        "postgres: kill -9 during adds: $worse trial(s) left a partial run; then: $(cat "$TMP/add.out")"
    wipe
fi

# ---- Faults: one line, exit 2, no password, nothing written ------------------------------
mkdir -p "$TMP/cwd"
for url in "postgresql://postgres:hunter2@127.0.0.1:1/none" "mysql://root:hunter2@127.0.0.1/db"; do
    (cd "$TMP/cwd" && "$AB" history add --db "$url" "$TMP/files/a0.json") >"$TMP/out" 2>"$TMP/err"
    rc=$?
    check '[ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && ! grep -q hunter2 "$TMP/err" "$TMP/out" &&
           [ -z "$(ls -A "$TMP/cwd")" ]' \
        "add --db $url: exit $rc, stderr '$(cat "$TMP/err")', left: $(ls -A "$TMP/cwd")"
done
if [ -n "$HAVE_PG" ] && [ -n "$PG" ]; then
    # The same server, a wrong password: the login is refused.
    wrong=$(printf '%s' "$PG" | sed 's|^\(postgres[a-z]*://[^:/@]*\):[^@]*@|\1:Wr0ngPassw0rd@|')
    case $wrong in *Wr0ngPassw0rd*) ;; *) wrong="postgresql://nosuchuser:Wr0ngPassw0rd@127.0.0.1/none" ;; esac
    "$AB" history add --db "$wrong" "$TMP/files/a0.json" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    check '[ $rc -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && ! grep -q Wr0ngPassw0rd "$TMP/err" &&
           grep -q "\*\*\*" "$TMP/err"' "a refused login: exit $rc: $(cat "$TMP/err")"
fi
# --help with --publish prints the help and publishes nothing.
"$AB" tune --publish "$TMP/help.db" --help >/dev/null 2>&1
check '[ ! -e "$TMP/help.db" ]' "tune --publish DB --help wrote $TMP/help.db"
check '[ "$(sums)" = "$before" ]' "the JSON files changed"

echo "history.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
