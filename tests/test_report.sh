#!/bin/sh
# test_report.sh — reports/report.py end to end: renders the report from the
# committed samples (tests/report_samples: real runs of this project, plus
# one synthetic file that only differs in its machine) and a history
# database made from them (and, with $ATTN_TEST_POSTGRES, the same history
# on PostgreSQL: the same figures), then checks the page:
#   * every figure and table it references exists (PNG and SVG of each);
#   * the expected figures are there, one per machine: the synthetic machine
#     gets its own, each caption names one machine only, and the PyTorch
#     files (no machine_key) join the real machine alone;
#   * decoding (decode.json: attnbench's decode and generate suites, one
#     run of summary-sample.json's machine; decode-pytorch.json: PyTorch's
#     on the same machine): the figure "Decoding: GB/s
#     against the read bandwidth" is drawn for that machine only, its table
#     lists every decoding step (op=sdpa, Lq=1) of both files with its GB/s
#     (bytes / median time) and, where the JSON gives one, its % of the read
#     bandwidth, PyTorch's rows in the same figure; the read-only bandwidth
#     is drawn; the generate rows get a table with tokens/s;
#   * speedup over each peer (peers.json: attnbench's avx512, onednn and
#     openblas; PyTorch's and ONNX Runtime's anchor files): one figure and
#     table per peer, each giving peer time / kernel time for exactly the
#     attnbench kernels (not the peers) on the peer's shapes and thread
#     counts; ONNX Runtime is an anchor like PyTorch (its own colour, its
#     pct_peak_isa names the ISA of its peaks);
#   * the answer ("On this machine, use …") comes first, drawn and written as
#     CSV for the machine of summary-sample.json (a newer attnbench's run,
#     with a "summary"; a third machine) and naming the best kernels of its
#     summary, while the machines whose files have no summary get no figure
#     or table there; its roofline draws the read-only bandwidth ceiling
#     (context read_gbs), the older samples' do not;
#   * where two files of a machine answer for the same shapes, the answer
#     shows the latest file's rows and says so;
#   * inputs as an older attnbench wrote them (no summary; causal FLOPs
#     counted dense, which puts causal rows above 100% of peak) plus one
#     whose peak was measured low: the answer is omitted with a note, the
#     rows above 100% of peak are flagged under their figures and in the
#     tables, and a failed benchmark (error_occurred, zero times) is skipped
#     without error and drawn nowhere;
#   * nothing is fetched from outside (the page works offline);
#   * in headless Chromium, every <img> of the page loads (naturalWidth > 0)
#     and so does every SVG it links; and the same check, run on a copy
#     with one PNG deleted, must report that image broken (so the check is
#     known to detect one);
#   * inputs it cannot use (another program's JSON, a file that is not
#     JSON, a damaged wisdom, a history that is not a database) are skipped
#     with a message, and every figure is then omitted with a note.
# Usage: [REPORT_PART=binary] tests/test_report.sh [path/to/attnbench]
#   REPORT_PART=binary stops after the history (what the binary changes).
#   With an attnbench built with SQLite, the history database is made by
#   `attnbench history add` (six faked commits of a sample, the avx2 kernel
#   30% slower from the fourth on, plus the samples) and figure 11 is
#   expected; without one, figure 11 must be omitted.
# Skips (exit 0) when matplotlib or Chromium is missing. Last line:
# "report: N passed, N failed"; exit 1 on a failure.
set -u
AB=${1:-}
case $AB in "" | /*) ;; *) AB=$(pwd)/$AB ;; esac       # the test runs from the top folder
cd "$(dirname "$0")/.." || exit 1
PY=${PYTHON:-/usr/bin/python3}
SAMPLES=tests/report_samples
MACHINE=9dfb60aeddca0480        # the samples' machine
SYNTHETIC=90daece05efc282d      # synthetic-other-machine.json's
NEWER=$SAMPLES/summary-sample.json   # a newer attnbench's run: summary, read_gbs, peak_error
DECODE=$SAMPLES/decode.json          # decode + generate suites, summary-sample.json's machine
DECODE_TORCH=$SAMPLES/decode-pytorch.json   # PyTorch's decode + generate, same machine

if ! "$PY" -c 'import matplotlib' 2>/dev/null; then
    echo "skip: $PY cannot import matplotlib (Debian: python3-matplotlib)"
    echo "report: 0 passed, 0 failed"
    exit 0
fi
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ]; then
    echo "skip: no chromium to load the page in (Debian: chromium)"
    echo "report: 0 passed, 0 failed"
    exit 0
fi

TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL report: $*"; }
check() { if eval "$2"; then ok; else bad "$1"; fi; }
# A python block's verdicts, one per line: "ok TEXT" or "FAIL TEXT".
tally() {
    while read -r word rest; do
        case $word in
            ok) ok ;;
            FAIL) bad "$rest" ;;
        esac
    done <"$1"
}
# The third machine: summary-sample.json's (read from it: it is another
# machine than the older samples').
NEW_MACHINE=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["context"]["machine_id"])' \
    "$NEWER" 2>/dev/null)
check "summary-sample.json names a machine of its own (${NEW_MACHINE:-none})" \
    '[ -n "$NEW_MACHINE" ] && [ "$NEW_MACHINE" != "$MACHINE" ] && [ "$NEW_MACHINE" != "$SYNTHETIC" ]'

# ---- The history database ----------------------------------------------------------------
HISTORY=
if [ -n "$AB" ]; then
    mkdir -p "$TMP/fake"
    # Six commits of one sample, each with a little (fixed) noise, avx2 30%
    # slower from the fourth commit on: a step that the history must show.
    "$PY" - "$SAMPLES/sdpa-lengths.json" "$TMP/fake" <<'EOF'
import json, sys
src = json.load(open(sys.argv[1]))
for i in range(6):
    d = json.loads(json.dumps(src))
    d["context"].update(git_commit=f"fake{i:08d}", date=f"2026-01-0{i + 1}T00:00:00+0000")
    for j, b in enumerate(d["benchmarks"]):
        f = 1 + 0.004 * ((i * 7 + j * 3) % 5 - 2)
        f *= 1.3 if i >= 3 and b.get("kernel") == "avx2" else 1
        if b.get("aggregate_name") != "cv":
            b["real_time"] *= f
            b["cpu_time"] *= f
    json.dump(d, open(f"{sys.argv[2]}/commit{i}.json", "w"))
EOF
    if "$AB" history add "$TMP"/fake/*.json "$SAMPLES"/*.json --db "$TMP/history.db" \
        >"$TMP/history.out" 2>&1; then
        HISTORY="--history $TMP/history.db"
        ok
    elif grep -q "without SQLite" "$TMP/history.out"; then
        echo "note: $AB was built without SQLite: no history, figure 11 must be omitted"
    else
        bad "attnbench history add failed: $(cat "$TMP/history.out")"
    fi
fi

# ---- Render ------------------------------------------------------------------------------
# shellcheck disable=SC2086  # $HISTORY is two words or none
if "$PY" reports/report.py --out "$TMP/out" --wisdom "$SAMPLES/wisdom" $HISTORY "$SAMPLES" \
    >"$TMP/report.out" 2>"$TMP/report.err"; then
    ok
else
    bad "report.py failed: $(cat "$TMP/report.err")"
fi

# ---- The page's references and figures ---------------------------------------------------
# One line per check: "ok TEXT" or "FAIL TEXT"; then "images N" (the count
# the browser must see).
"$PY" - "$TMP/out" "${HISTORY:+history}" "$MACHINE" "$SYNTHETIC" "$NEW_MACHINE" \
    >"$TMP/page.out" <<'EOF'
import os, sys
from html.parser import HTMLParser
out, with_history, machine, synthetic, newer = sys.argv[1:6]
machines = (machine, synthetic, newer)

class Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.links, self.sections, self.omitted = [], [], [], []
        self.captions = {}          # image -> its figcaption's text
        self.section = self.img = self.caption = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.section = a.get("id")
            self.sections.append(self.section)
        if tag == "img":
            self.img = a.get("src", "")
            self.imgs.append((self.section, self.img))
        if tag == "figcaption":
            self.caption = self.captions[self.img] = ""
        if tag == "a":
            self.links.append(a.get("href", ""))
        if tag == "p" and a.get("class") == "omitted":
            self.omitted.append(self.section)
        for k in ("src", "href"):
            v = a.get(k, "") or ""
            if v.startswith(("http:", "https:", "//")):
                print(f"FAIL external reference {v}")
    def handle_endtag(self, tag):
        if tag == "figcaption":
            self.caption = None
    def handle_data(self, data):
        if self.caption is not None:
            self.captions[self.img] += data

def check(cond, text):
    print(("ok " if cond else "FAIL ") + text)

try:
    page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
except OSError as e:
    print(f"FAIL no page: {e}")
    sys.exit()
p = Refs()
p.feed(page)
check("<script" not in page.lower(), "the page has no script")
for ref in [s for _, s in p.imgs] + [h for h in p.links if not h.startswith("#")]:
    f = os.path.join(out, ref)
    check(os.path.isfile(f) and os.path.getsize(f) > 0, f"referenced file {ref} exists")
for _, src in p.imgs:
    check(src.endswith(".png") and src[:-4] + ".svg" in p.links, f"{src} has its SVG linked")
expected = ["answer", "gflops-vs-length", "roofline", "decode-bandwidth", "pct-peak-bert-base",
            "speedup-vs-peers", "einsum-spread", "thread-scaling", "tuned-vs-default",
            "counters", "noise", "history"]
check(p.sections == expected, f"the answer and the eleven figures in order: {p.sections}")
for key in expected:
    drawn = [s for sec, s in p.imgs if sec == key]
    if key == "history" and not with_history:
        check(not drawn and key in p.omitted, "no history: figure 11 omitted with a note")
    else:
        check(bool(drawn) and key not in p.omitted, f"figure {key} drawn")
# Machines apart: the synthetic machine has its own figures, PyTorch (no
# machine_key, same host, CPU and caches) goes with the real machine only.
for key in ("gflops-vs-length", "roofline", "noise"):
    for m in (machine, synthetic):
        check(f"figures/{key}-{m}.png" in [s for _, s in p.imgs], f"{key} of machine {m}")
for key in ("answer", "roofline", "noise"):
    check(f"figures/{key}-{newer}.png" in [s for _, s in p.imgs], f"{key} of machine {newer}")
for _, src in p.imgs:
    for m in machines:
        if m in src:
            caption = p.captions.get(src, "")
            check(m in caption and not any(o in caption for o in machines if o != m),
                  f"{src}: its caption names machine {m} only")
# PyTorch is the samples' only peer; the synthetic machine has no PyTorch file.
check(sorted(s for sec, s in p.imgs if sec == "speedup-vs-peers")
      == sorted(f"figures/speedup-vs-peers-pytorch-{m}.png" for m in (machine, newer)),
      "speedup over PyTorch only, on the machines with PyTorch files only")
check("SYNTHETIC TEST DATA" in page, "the synthetic machine is labelled as test data")
if with_history:
    check("step at fake00000003" in open(os.path.join(out, f"figures/history-{machine}.svg")).read()
          or "fake00000003" in open(os.path.join(out, f"tables/history-{machine}.csv")).read(),
          "the faked step is marked with its commit")
print(f"images {len(p.imgs)}")
EOF
while read -r word rest; do
    case $word in
        ok) ok ;;
        FAIL) bad "$rest" ;;
        images) N_IMAGES=$rest ;;
    esac
done <"$TMP/page.out"
: "${N_IMAGES:=0}"

# ---- The history on PostgreSQL ---------------------------------------------------------------
# With $ATTN_TEST_POSTGRES (the URL of a scratch database, with its password,
# on a server that checks passwords) and an attnbench built with PostgreSQL:
# the same history, written to the server in a schema of its own (dropped
# after), gives the same history figures and tables as the SQLite file; its
# password is nowhere (page, figures, tables, stderr), the page names the URL
# with *** for it; a wrong password is one warning, redacted, and the report
# renders without the history.
pg() {      # SQL on the scratch database, through psycopg2 as report.py reads it
    "$PY" -c 'import sys, psycopg2
db = psycopg2.connect(sys.argv[1]); db.autocommit = True; db.cursor().execute(sys.argv[2])' \
        "$ATTN_TEST_POSTGRES" "$1"
}
if [ -n "${ATTN_TEST_POSTGRES:-}" ] && [ -n "$HISTORY" ]; then
    PG_SCHEMA=report_test_$$
    case $ATTN_TEST_POSTGRES in *\?*) PG_URL="$ATTN_TEST_POSTGRES&" ;; *) PG_URL="$ATTN_TEST_POSTGRES?" ;; esac
    PG_URL="${PG_URL}options=-csearch_path%3D$PG_SCHEMA"
    # The password as libpq reads it, and the URL with a wrong one.
    "$PY" - "$ATTN_TEST_POSTGRES" "wrong-$$" >"$TMP/pg.urls" <<'PYEOF'
import sys, urllib.parse as u
s = u.urlsplit(sys.argv[1])
print(s.password or "")
print(s._replace(netloc=f"{s.username or 'postgres'}:{sys.argv[2]}@{s.netloc.rpartition('@')[2]}",
                 query="").geturl())
PYEOF
    { read -r PG_SECRET; read -r PG_BAD; } <"$TMP/pg.urls"
    if ! pg "CREATE SCHEMA $PG_SCHEMA" 2>"$TMP/pg.err"; then
        bad "cannot make a schema on \$ATTN_TEST_POSTGRES: $(cat "$TMP/pg.err")"
    elif ! "$AB" history add "$TMP"/fake/*.json "$SAMPLES"/*.json --db "$PG_URL" \
        >"$TMP/pg-add.out" 2>&1; then
        if grep -q "without PostgreSQL" "$TMP/pg-add.out"; then
            echo "note: $AB was built without PostgreSQL: no PostgreSQL history checked"
        else
            bad "attnbench history add --db postgresql://… failed: $(cat "$TMP/pg-add.out")"
        fi
    else
        if "$PY" reports/report.py --out "$TMP/pg" --wisdom "$SAMPLES/wisdom" \
            --history "$PG_URL" "$SAMPLES" >/dev/null 2>"$TMP/pg-report.err"; then
            ok
        else
            bad "report.py failed on the PostgreSQL history: $(cat "$TMP/pg-report.err")"
        fi
        check "the PostgreSQL history draws the SQLite file's history figures and tables" \
            '[ -f "$TMP/pg/tables/history-$MACHINE.csv" ] &&
             [ "$(cd "$TMP/out" && ls figures/history-* tables/history-*)" = \
               "$(cd "$TMP/pg" && ls figures/history-* tables/history-*)" ] &&
             (cd "$TMP/out" && for f in figures/history-*.svg tables/history-*.csv; do
                  cmp -s "$f" "$TMP/pg/$f" || exit 1; done)'
        check "the page names the PostgreSQL history with its password as ***" \
            'grep -q "History: postgres[a-z]*://[^<]*\*\*\*" "$TMP/pg/index.html"'
        check "the password of \$ATTN_TEST_POSTGRES is in no output of the report" \
            '[ -n "$PG_SECRET" ] && ! grep -rqF -- "$PG_SECRET" "$TMP/pg" "$TMP/pg-report.err"'
        if "$PY" reports/report.py --out "$TMP/pg-bad" --history "$PG_BAD" "$SAMPLES" \
            >/dev/null 2>"$TMP/pg-bad.err"; then
            ok
        else
            bad "report.py failed on a wrong password: $(cat "$TMP/pg-bad.err")"
        fi
        check "a wrong password: one warning, redacted, and no history" \
            '[ "$(grep -c "^report: history postgres" "$TMP/pg-bad.err")" = 1 ] &&
             grep -q "^report: history postgres[a-z]*://[^ ]*\*\*\*@[^ ]*: skipped: " \
                 "$TMP/pg-bad.err" &&
             ! grep -rqF "wrong-$$" "$TMP/pg-bad.err" "$TMP/pg-bad" &&
             grep -q "History: none\." "$TMP/pg-bad/index.html" &&
             [ -z "$(ls "$TMP/pg-bad/figures" | grep "^history-")" ]'
    fi
    pg "DROP SCHEMA IF EXISTS $PG_SCHEMA CASCADE" || bad "cannot drop schema $PG_SCHEMA"
fi

# REPORT_PART=binary: only what depends on the attnbench given (its history
# database, with or without SQLite and libpq), for a second build
# configuration (make test REPORT_PART=binary). Everything below is
# report.py on the committed samples, the same whatever the build.
if [ "${REPORT_PART:-all}" = binary ]; then
    echo "note: REPORT_PART=binary: the sections on the committed samples alone are not repeated"
    echo "report: $pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit
fi

# ---- The answer and the read-only bandwidth ------------------------------------------------
# What the answer must say, from summary-sample.json itself: per (op, shape,
# threads) of its summary, the best kernel, the runner-up and the verdict.
"$PY" - "$TMP/out" "$NEWER" "$MACHINE" "$SYNTHETIC" >"$TMP/answer.out" <<'EOF'
import csv, glob, json, os, re, sys
out, sample, *older = sys.argv[1:]
def check(cond, text):
    print(("ok " if cond else "FAIL ") + text)
d = json.load(open(sample))
ctx, want = d["context"], d["summary"]
m = ctx["machine_id"]
page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
section = re.search(r"<section id='answer'>(.*?)</section>", page, re.S)
section = section.group(1) if section else ""
check("On this machine, use" in section and "class='omitted'" not in section,
      "the answer section is drawn, titled “On this machine, use …”")
table = os.path.join(out, f"tables/answer-{m}.csv")
rows = list(csv.DictReader(open(table, encoding="utf-8"))) if os.path.isfile(table) else []
check(len(want) >= 1 and len(rows) == len(want),
      f"the answer's CSV of machine {m} has one row per summary row ({len(rows)} of {len(want)})")
for w in want:
    label = w["shape"].split("/")[1]
    got = [r for r in rows if (r["op"], r["shape"], r["threads"]) == (w["op"], label,
                                                                       str(w["threads"]))]
    check(len(got) == 1 and got[0]["use (best)"] == w["best"]
          and got[0]["runner-up"] == w["runner_up"] and got[0]["verdict"] == w["verdict"],
          f"the answer names {w['best']} over {w['runner_up']} ({w['verdict']}) on {w['shape']}")
    check(f"<td>{w['best']}</td><td>{w['runner_up']}</td>" in section,
          f"the page's answer table names {w['best']} over {w['runner_up']} on {w['shape']}")
for o in older:
    check(not os.path.exists(os.path.join(out, f"figures/answer-{o}.png"))
          and not os.path.exists(os.path.join(out, f"tables/answer-{o}.csv"))
          and f"answer-{o}" not in section,
          f"machine {o} (files without a summary): no figure or table in the answer")
check(section.count("<figure>") == 1 and section.count("<table>") == 1,
      "the answer holds one figure and one table: the machine that has a summary")
# The read-only bandwidth: its line in the roofline (matplotlib's SVG keeps
# each text as a comment) and its ceiling in the table, where the context
# has read_gbs; never in the roofline of a file without it.
read = f"read-only {ctx['read_gbs']:.1f} GB/s"
svg = os.path.join(out, f"figures/roofline-{m}.svg")
check(os.path.isfile(svg) and read in open(svg, encoding="utf-8").read(),
      f"the roofline of {m} draws the read-only ceiling ({read})")
roof = list(csv.DictReader(open(os.path.join(out, f"tables/roofline-{m}.csv"), encoding="utf-8")))
col = "read-only bandwidth ceiling GFLOP/s"
# The machine's read_gbs per thread count: a context gives it at its own
# thread count (summary-sample.json at 1 thread, decode.json at 2).
read_at = {}
for f in sorted(glob.glob(os.path.join(os.path.dirname(sample), "*.json"))):
    c = json.load(open(f, encoding="utf-8")).get("context", {})
    if c.get("machine_id") == m and c.get("read_gbs"):
        read_at[c["threads"]] = c["read_gbs"]
check(roof and all(int(r["threads"]) in read_at
                   and abs(float(r[col]) - read_at[int(r["threads"])] * float(r["FLOP/byte"]))
                   <= 0.1 + 0.06 * float(r[col]) for r in roof),
      "the roofline table gives each row's read-only ceiling, read_gbs (at the row's thread "
      f"count: {read_at}) × intensity")
for o in older:
    check("read-only" not in open(os.path.join(out, f"figures/roofline-{o}.svg"),
                                  encoding="utf-8").read(),
          f"the roofline of {o} (no read_gbs) has no read-only ceiling")
# Causal FLOPs counted over the visible pairs (this sample): nothing above 100%.
captions = re.findall(rf"<figcaption>machine {m} .*?</figcaption>", page, re.S)
check(captions and not any("above 100% of peak" in c for c in captions),
      f"no row of machine {m} (causal FLOPs counted over the visible pairs) is flagged "
      "above 100% of peak")
EOF
tally "$TMP/answer.out"

# ---- Decoding: GB/s against the read bandwidth -------------------------------------------
# What the section must show, from decode.json and decode-pytorch.json
# themselves: every decoding step (op=sdpa, Lq=1) of both files in one
# table of their machine, with GB/s = bytes / median time and the JSON's
# pct_read_bw ("–" where it is null, and for PyTorch, whose JSON has none);
# the read-only bandwidth the rows are against drawn in the figure; the
# generate rows of both in a table with tokens/s.
"$PY" - "$TMP/out" "$DECODE" "$DECODE_TORCH" "$MACHINE" "$SYNTHETIC" >"$TMP/decode.out" <<'EOF'
import csv, json, os, re, sys
out, ours_path, torch_path, *others = sys.argv[1:]
UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
def check(cond, text):
    print(("ok " if cond else "FAIL ") + text)
def medians(path):
    d = json.load(open(path, encoding="utf-8"))
    return d["context"], [e for e in d["benchmarks"] if e.get("run_type") == "aggregate"
                          and e.get("aggregate_name") == "median"]
def shape(e):
    return dict(kv.split("=", 1) for kv in e["shape"].split(","))
def key(e):     # (threads, kernel, shape label), as the tables give them
    _, kernel, label, threads = e["run_name"].split("/")
    return threads.split(":")[1], kernel, label
def table(name):
    f = os.path.join(out, f"tables/{name}.csv")
    return list(csv.DictReader(open(f, encoding="utf-8"))) if os.path.isfile(f) else []
ctx, ours = medians(ours_path)
tctx, theirs = medians(torch_path)
m = ctx["machine_id"]
dec = [e for e in ours + theirs if shape(e)["op"] == "sdpa" and shape(e).get("Lq") == "1"]
gen = [e for e in ours + theirs if shape(e)["op"] == "generate"]
mine = [e for e in dec if e["kernel"] != "pytorch"]
torch = [e for e in dec if e["kernel"] == "pytorch"]
check(tctx.get("machine_id") in (None, m) and len(torch) >= 8 and len(mine) >= 8
      and any(e.get("pct_read_bw") is not None for e in mine)
      and any(e.get("pct_read_bw") is None for e in mine)
      and {e["kernel"] for e in gen} >= {"pytorch", mine[0]["kernel"]},
      f"the decode samples: {len(mine)} attnbench and {len(torch)} PyTorch decoding steps "
      "(PyTorch's of the same machine, or of none), some with and some without pct_read_bw, "
      "generate rows of both")
page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
section = re.search(r"<section id='decode-bandwidth'>(.*?)</section>", page, re.S)
section = section.group(1) if section else ""
check("Decoding: GB/s against the read bandwidth" in section, "the decode section is titled")
for ext in ("png", "svg"):
    f = os.path.join(out, f"figures/decode-bandwidth-{m}.{ext}")
    check(os.path.isfile(f) and os.path.getsize(f) > 0,
          f"the decode figure of machine {m} exists ({ext.upper()})")
imgs = set(re.findall(r"<img src='figures/([^']+)\.png'", section))
check(imgs == {f"decode-bandwidth-{m}", f"decode-bandwidth-generate-{m}"},
      f"the decode section draws machine {m} only, PyTorch's rows with it (no machine of "
      f"their own): {sorted(imgs)}")
for o in others:
    check(re.search(rf"<li>machine {o} [^<]*: no decoding step", section),
          f"machine {o} (no decoding step) gets a note in the decode section")
rows = table(f"decode-bandwidth-{m}")
got = {(r["threads"], r["kernel"], r["shape"]): r for r in rows}
check(len(rows) == len(dec) and "<th>% of read bandwidth</th>" in section,
      f"the decode table has one row per decoding step of both files ({len(rows)} of "
      f"{len(dec)}), shown on the page with its % of read bandwidth")
for who, es in (("attnbench's", mine), ("PyTorch's", torch)):
    wrong = []
    for e in es:
        r = got.get(key(e))
        gbps = e["bytes"] / (e["real_time"] * UNIT[e["time_unit"]]) / 1e9
        pct = "–" if e.get("pct_read_bw") is None else f"{e['pct_read_bw']:.1f}"
        if not (r and r["op"] == "sdpa" and r["Lk"] == shape(e)["Lk"]
                and r["Hkv"] == shape(e).get("Hkv", shape(e)["H"])
                and r["GB/s"] == f"{gbps:.1f}" and r["% of read bandwidth"] == pct):
            wrong.append(f"{e['run_name']}: want GB/s {gbps:.1f}, % {pct}; got "
                         + (f"{r['GB/s']}, {r['% of read bandwidth']}" if r else "no row"))
    check(es and not wrong, f"the decode table gives {who} {len(es)} decoding steps with their "
          f"GB/s and % of read bandwidth ({len(wrong)} wrong: {wrong[:2]})")
# The read-only bandwidth the rows' pct_read_bw is against (GB/s / pct),
# per thread count, as the figure's line (matplotlib's SVG keeps each text).
svg = os.path.join(out, f"figures/decode-bandwidth-{m}.svg")
svg = open(svg, encoding="utf-8").read() if os.path.isfile(svg) else ""
for t in sorted({key(e)[0] for e in mine if e.get("pct_read_bw") is not None}):
    implied = {f"{e['bytes'] / (e['real_time'] * UNIT[e['time_unit']]) / 1e9 * 100 / e['pct_read_bw']:.1f}"
               for e in mine if key(e)[0] == t and e.get("pct_read_bw") is not None}
    check(any(f"read-only {x} GB/s" in svg for x in implied),
          f"the decode figure draws the read-only bandwidth at {t} thread(s) ({implied} GB/s)")
check(f"read-only {ctx['read_gbs']:.1f} GB/s" in svg,
      f"the read-only bandwidth of the context ({ctx['read_gbs']:.1f} GB/s, "
      f"{ctx['threads']} threads) is drawn")
rows = table(f"decode-bandwidth-generate-{m}")
got = {(r["threads"], r["kernel"], r["shape"]): r for r in rows}
wrong = [e["run_name"] for e in gen
         if not (key(e) in got and got[key(e)]["tokens/s"] == f"{e['tokens_per_second']:.1f}"
                 and got[key(e)]["ms/token"] == f"{e['ms_per_token']:.3g}")]
check(gen and len(rows) == len(gen) and not wrong and "<th>tokens/s</th>" in section,
      f"the generate table gives the {len(gen)} generate rows of both files with their "
      f"tokens/s and ms/token (wrong: {wrong})")
check(not any("tokens_per_second" in r for r in table(f"counters-{m}")[:1]),
      "tokens_per_second is not drawn as a hardware counter")
EOF
tally "$TMP/decode.out"

# ---- In a browser ------------------------------------------------------------------------
# A wrapper page frames the report and writes what it finds into its own
# DOM, which --dump-dom prints: "IMAGES n BROKEN b SVG s BROKEN_SVG t" and
# the broken ones. File pages may read each other only with
# --allow-file-access-from-files; without it the wrapper says ERROR.
browser_check() {   # DIR (holding out/index.html) -> prints the result line and broken names
    cat >"$1/check.html" <<'EOF'
<!DOCTYPE html><html><body>
<iframe id="f" src="out/index.html" width="1200" height="800"></iframe>
<script>
function report(text) {
  const p = document.createElement("pre");
  p.id = "result";
  p.textContent = text;
  document.body.appendChild(p);
}
document.getElementById("f").addEventListener("load", () => {
  let doc = null;
  try { doc = document.getElementById("f").contentDocument; } catch (e) { }
  if (!doc || !doc.images) { report("ERROR the report cannot be read"); return; }
  const imgs = Array.from(doc.images);
  const broken = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);
  const svgs = [...new Set(Array.from(doc.querySelectorAll('a[href$=".svg"]')).map(a => a.href))];
  const badSvg = [];
  let pending = svgs.length;
  const done = () => report(`IMAGES ${imgs.length} BROKEN ${broken.length} SVG ${svgs.length} ` +
                            `BROKEN_SVG ${badSvg.length}\n` + broken.concat(badSvg).join("\n"));
  if (pending === 0) done();
  for (const u of svgs) {
    const im = new Image();
    const settle = ok => { if (!ok) badSvg.push(u); if (--pending === 0) done(); };
    im.onload = () => settle(im.naturalWidth > 0);
    im.onerror = () => settle(false);
    im.src = u;
  }
});
</script></body></html>
EOF
    timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --allow-file-access-from-files --user-data-dir="$(mktemp -d "$TMP/chrome.XXXXXX")" \
        --virtual-time-budget=5000 --dump-dom "file://$1/check.html" 2>"$1/chromium.err" |
        "$PY" -c 'import re, sys, html
m = re.search(r"<pre id=\"result\">(.*?)</pre>", sys.stdin.read(), re.S)
print(html.unescape(m.group(1)) if m else "ERROR no result from the browser")'
}

if [ -f "$TMP/out/index.html" ]; then
    browser_check "$TMP" >"$TMP/browser.out"
    read -r _ images _ broken _ svgs _ broken_svg <"$TMP/browser.out"
    check "the browser sees every image ($(head -n 1 "$TMP/browser.out"); the page has $N_IMAGES)" \
        '[ "${images:-x}" = "$N_IMAGES" ] && [ "$N_IMAGES" -gt 0 ]'
    check "every image loads: $(tr '\n' ' ' <"$TMP/browser.out")" '[ "${broken:-x}" = 0 ]'
    check "every SVG loads: $(tr '\n' ' ' <"$TMP/browser.out")" \
        '[ "${broken_svg:-x}" = 0 ] && [ "${svgs:-0}" -eq "$N_IMAGES" ]'

    # The same check must notice a missing PNG.
    mkdir -p "$TMP/broken"
    cp -R "$TMP/out" "$TMP/broken/out"
    rm -f "$TMP/broken/out/figures/roofline-$MACHINE.png"
    browser_check "$TMP/broken" >"$TMP/broken.out"
    read -r _ _ _ broken _ <"$TMP/broken.out"
    check "a deleted PNG is caught: $(tr '\n' ' ' <"$TMP/broken.out")" \
        '[ "${broken:-x}" = 1 ] && grep -q "roofline-$MACHINE.png" "$TMP/broken.out"'
else
    bad "no page to load in the browser"
fi

# ---- Two answers for the same shapes: the latest file's is shown -------------------------
# rerun.json: summary-sample.json a day later, with the best and the
# runner-up of its summary swapped (a tie that went the other way).
mkdir -p "$TMP/later"
"$PY" - "$NEWER" "$TMP/later/rerun.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["context"]["date"] = "2026-12-01T00:00:00+0000"
for x in d["summary"]:
    x["best"], x["runner_up"], x["verdict"] = x["runner_up"], x["best"], "tie"
json.dump(d, open(sys.argv[2], "w"))
EOF
if "$PY" reports/report.py --out "$TMP/later/out" "$NEWER" "$TMP/later/rerun.json" \
    >/dev/null 2>"$TMP/later.err"; then
    ok
else
    bad "report.py failed on two answers: $(cat "$TMP/later.err")"
fi
"$PY" - "$TMP/later/out" "$TMP/later/rerun.json" >"$TMP/later.out" <<'EOF'
import csv, json, os, re, sys
out, rerun = sys.argv[1:]
def check(cond, text):
    print(("ok " if cond else "FAIL ") + text)
d = json.load(open(rerun))
m, want = d["context"]["machine_id"], d["summary"]
table = os.path.join(out, f"tables/answer-{m}.csv")
rows = list(csv.DictReader(open(table, encoding="utf-8"))) if os.path.isfile(table) else []
check(len(rows) == len(want) and all(r["file"] == "rerun.json" for r in rows)
      and sorted(r["use (best)"] for r in rows) == sorted(x["best"] for x in want),
      "two files answer for the same shapes: one row each, the latest file's")
page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
check(f"{len(want)} row(s) of older files superseded" in page and "the latest file" in page,
      "the page says the latest file's rows are shown and how many were superseded")
EOF
tally "$TMP/later.out"

# ---- Speedup over each peer --------------------------------------------------------------
# Made here from bert-base.json and bert-base-pytorch.json (one machine):
#   * peers.json: attnbench's avx512 rows, plus onednn (its sdpa rows only,
#     1.5× avx512's times) and openblas (2× avx512's times): library-backed
#     attnbench kernels, peers that are not anchors;
#   * pytorch.json: bert-base-pytorch.json as it is;
#   * ort.json: PyTorch's file as reports/ort_anchor.py would write it, kernel
#     onnxruntime, its 1-thread rows only, at 0.7× PyTorch's times;
#   * in all three, op=bert rows (the whole model: 12 layers, mask=padding)
#     made from each file's post-LN encoder rows, at 12× their times, with
#     sequences_per_second and ms_per_sequence as attnbench writes them: the
#     speedup tables pair them like any row, report_data reads the rates, and
#     neither is drawn as a counter.
# The peers cover different shapes and thread counts, so a dropped peer, a
# wrong pairing or a peer drawn over another changes the tables, whose
# expected rows and ratios are computed here from the files.
mkdir -p "$TMP/peers"
"$PY" - "$SAMPLES/bert-base.json" "$SAMPLES/bert-base-pytorch.json" "$TMP/peers" <<'EOF'
import json, sys
ours, torch, out = sys.argv[1:]
def renamed(e, kernel, scale):
    e = json.loads(json.dumps(e))
    for k in ("name", "run_name"):
        parts = e[k].split("/")
        parts[1] = kernel
        e[k] = "/".join(parts)
    e["kernel"] = kernel
    if e.get("aggregate_name") != "cv":         # a ratio: unchanged by scaling
        for k in ("real_time", "cpu_time"):
            e[k] *= scale
    if "sequences_per_second" in e:             # op=bert's rates, with the time
        e["sequences_per_second"] /= scale
        e["ms_per_sequence"] *= scale
    return e
UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
def with_bert(entries):
    """entries plus op=bert rows made from the post-LN B=1 encoder rows: 12 layers
    (12x the time and FLOPs), the rates per sequence (report.c json_counters)."""
    out = list(entries)
    for e in entries:
        if not e["shape"].startswith("op=encoder,B=1,") or "norm=post" not in e["shape"]:
            continue
        e = json.loads(json.dumps(e))
        op, kernel, label, threads = e["run_name"].split("/")
        lab = label.replace("_F", "_layers12_F", 1) + "_padding"
        e["run_name"] = f"bert/{kernel}/{lab}/{threads}"
        e["name"] = e["run_name"] + (f"_{e['aggregate_name']}" if e.get("aggregate_name") else "")
        e["shape"] = (e["shape"].replace("op=encoder", "op=bert").replace(",D=", ",layers=12,D=")
                      .replace("mask=none", "mask=padding"))
        if e.get("aggregate_name") != "cv":
            for k in ("real_time", "cpu_time"):
                e[k] *= 12
        if "GFLOPS" in e:                       # the entries with counters
            e["flops"] *= 12
            s = e["real_time"] * UNIT[e["time_unit"]]
            e["sequences_per_second"] = 1 / s
            e["ms_per_sequence"] = 1e3 * s
        out.append(e)
    return out
d = json.load(open(ours))
mine = with_bert([e for e in d["benchmarks"] if e["kernel"] == "avx512"])
d["benchmarks"] = (mine + [renamed(e, "onednn", 1.5) for e in mine if "op=sdpa" in e["shape"]]
                   + [renamed(e, "openblas", 2.0) for e in mine])
json.dump(d, open(f"{out}/peers.json", "w"))
t = json.load(open(torch))
t["benchmarks"] = with_bert(t["benchmarks"])
json.dump(t, open(f"{out}/pytorch.json", "w"))
t["context"]["executable"] = "ort_anchor.py"
t["benchmarks"] = [renamed(e, "onnxruntime", 0.7) for e in t["benchmarks"]
                   if e["run_name"].endswith("/threads:1")]
json.dump(t, open(f"{out}/ort.json", "w"))
EOF
if "$PY" reports/report.py --out "$TMP/peers/out" "$TMP/peers" >/dev/null 2>"$TMP/peers.err"; then
    ok
else
    bad "report.py failed on the peers' files: $(cat "$TMP/peers.err")"
fi
"$PY" - "$TMP/peers" >"$TMP/peers.out" <<'EOF'
import csv, glob, json, os, re, sys
d = sys.argv[1]
out = os.path.join(d, "out")
UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
NAMES = {"pytorch": "PyTorch", "onnxruntime": "ONNX Runtime", "onednn": "oneDNN",
         "openblas": "OpenBLAS"}
def check(cond, text):
    print(("ok " if cond else "FAIL ") + text)
medians, machine = {}, None       # (op, shape label, threads, kernel) -> seconds
for f in glob.glob(os.path.join(d, "*.json")):
    j = json.load(open(f))
    machine = j["context"].get("machine_id") or machine
    for e in j["benchmarks"]:
        if e.get("aggregate_name") == "median":
            op, kernel, label, threads = e["run_name"].split("/")
            medians[(op, label, threads.split(":")[1], kernel)] = (
                e["real_time"] * UNIT[e["time_unit"]])
page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
section = re.search(r"<section id='speedup-vs-peers'>(.*?)</section>", page, re.S)
section = section.group(1) if section else ""
imgs = re.findall(r"<img src='figures/([^']+)\.png'", section)
check(sorted(imgs) == sorted(f"speedup-vs-peers-{p}-{machine}" for p in NAMES),
      f"one speedup figure per peer, all four present: {imgs}")
for peer, name in NAMES.items():
    # attnbench's own kernels (not the peers) on the peer's shapes and threads.
    want = {(op, lab, t, k): f"{medians[(op, lab, t, peer)] / s:.2f}"
            for (op, lab, t, k), s in medians.items()
            if k not in NAMES and (op, lab, t, peer) in medians}
    f = os.path.join(out, f"tables/speedup-vs-peers-{peer}-{machine}.csv")
    rows = list(csv.DictReader(open(f, encoding="utf-8"))) if os.path.isfile(f) else []
    got = {(r["op"], r["shape"], r["threads"], r["kernel"]): r["speedup (peer / kernel)"]
           for r in rows}
    check(want and got == want and len(rows) == len(want)
          and all(r["peer"] == name for r in rows),
          f"over {name}: {len(want)} rows of attnbench's kernels, each {name}'s median / the "
          f"kernel's ({len(rows)} rows; wrong: "
          f"{sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))[:3]})")
    caption = re.search(rf"<img src='figures/speedup-vs-peers-{peer}-{machine}\.png'.*?"
                        r"<figcaption>(.*?)</figcaption>", section, re.S)
    kind = "an external anchor" if peer in ("pytorch", "onnxruntime") else "backed by"
    check(caption and f"Over {name} (kernel {peer}, " in caption.group(1)
          and kind in caption.group(1) and "above 1, attnbench" in caption.group(1),
          f"the caption of the figure over {name} names it, its kind and how to read it")
check("time / kernel time" in section and "above 1" in section,
      "the section says what the ratio is and which way is faster")
# op=bert: paired over every peer like any row (above), its rates read, not counters.
bert = {k: s for k, s in medians.items() if k[0] == "bert"}
check({k[3] for k in bert} == {"avx512", "openblas", "pytorch", "onnxruntime"},
      "op=bert rows for attnbench and every peer but oneDNN (its rows are sdpa's): "
      f"{sorted({k[3] for k in bert})}")
sys.path.insert(0, "reports")
import report_data
bm = report_data.load_benchmarks(sorted(glob.glob(os.path.join(d, "*.json"))))
rs = [r for r in bm.results if r.op == "bert"]
check(rs and len(rs) == len(bert)
      and all(r.sequences_per_second and abs(r.sequences_per_second * r.median_s - 1) < 1e-6
              and abs(r.ms_per_sequence / 1e3 / r.median_s - 1) < 1e-6 for r in rs)
      and not any("sequences_per_second" in r.counters or "ms_per_sequence" in r.counters
                  for r in bm.results),
      f"report_data reads op=bert's {len(rs)} rows' sequences_per_second and ms_per_sequence "
      "(B=1: 1 / median), not as counters")
f = os.path.join(out, f"tables/counters-{machine}.csv")
head = open(f, encoding="utf-8").readline() if os.path.isfile(f) else ""
check(head and "sequences_per_second" not in head and "ms_per_sequence" not in head,
      f"sequences_per_second is not drawn as a hardware counter: {head.strip()[:80]}")
# ONNX Runtime is an anchor: its fixed colour, as PyTorch has black.
svg = os.path.join(out, f"figures/gflops-vs-length-{machine}.svg")
check(os.path.isfile(svg) and "#8b008b" in open(svg, encoding="utf-8").read(),
      "ONNX Runtime is drawn in its anchor colour (darkmagenta) in GFLOP/s vs length")
EOF
tally "$TMP/peers.out"

# The anchor's ISA: ort.json alone, its context's peaks 1% off the ones its
# pct_peak is against, so that only context.pct_peak_isa names the ISA; its
# 1-thread rows then give that ISA's 1-thread peak (marked * on the page).
mkdir -p "$TMP/ort-alone"
"$PY" - "$TMP/peers/ort.json" "$TMP/ort-alone/ort.json" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1]))
t["context"]["peak_gflops"] = {k: v * 1.01 for k, v in t["context"]["peak_gflops"].items()}
json.dump(t, open(sys.argv[2], "w"))
EOF
"$PY" reports/report.py --out "$TMP/ort-alone/out" "$TMP/ort-alone/ort.json" >/dev/null 2>&1
check "ONNX Runtime's pct_peak_isa names its ISA: its 1-thread avx512 peak is derived" \
    'grep -Eq "1 thr: avx512 [0-9]+\*" "$TMP/ort-alone/out/index.html"'

# A figure that cannot be written (a folder where its PNG goes), by a child
# process (figures are saved beside the building of the next) and in
# process (ATTN_REPORT_JOBS=1): exit 1, the figure named, no page.
first_png=$(ls "$TMP/ort-alone/out/figures" | grep '\.png$' | head -n 1)
for jobs in 2 1; do
    mkdir -p "$TMP/unwritable-$jobs/figures/$first_png"
    ATTN_REPORT_JOBS=$jobs "$PY" reports/report.py --out "$TMP/unwritable-$jobs" \
        "$TMP/ort-alone/ort.json" >/dev/null 2>"$TMP/unwritable-$jobs.err"
    rc=$?
    check "a figure not written, $jobs job(s): exit 1 and said, no page (exit $rc: $(tail -n 1 "$TMP/unwritable-$jobs.err"))" \
        '[ $rc -eq 1 ] && grep -q "report: .*\(${first_png%.png}\|cannot write\)" "$TMP/unwritable-$jobs.err" &&
         ! grep -q Traceback "$TMP/unwritable-$jobs.err" && [ ! -e "$TMP/unwritable-$jobs/index.html" ]'
done

# ---- Older inputs: no summary, rows above 100% of peak, a failed benchmark ---------------
# The older samples, plus two files made here:
#   * dense-causal.json: summary-sample.json as an older attnbench wrote it:
#     no summary nor the newer fields, and causal FLOPs counted dense (all
#     Lq·Lk pairs: twice the visible ones), which puts its fast causal rows
#     above 100% of peak; plus one benchmark that failed in the run, as
#     report.c writes it (error_occurred, zero times);
#   * peak-low.json: bert-base.json with the peaks of its context measured
#     20% low, so that its best rows are above 100% (on the bar figure).
# The numbers the page must give are computed here from the files.
mkdir -p "$TMP/older"
for f in "$SAMPLES"/*.json; do
    [ "$f" = "$NEWER" ] || cp "$f" "$TMP/older/"
done
"$PY" - "$NEWER" "$SAMPLES/bert-base.json" "$TMP/older" >"$TMP/older.expect" <<'EOF'
import json, sys
newer, bert, out = sys.argv[1:]
d = json.load(open(newer))
del d["summary"]
for k in ("read_gbs", "peak_error", "machine_noise", "peaks_load_avg", "precision", "max_time",
          "shuffle_seed", "max_repetitions"):
    d["context"].pop(k, None)
above = set()
for e in d["benchmarks"]:
    for k in ("GBps", "pct_read_bw", "read_bw_error", "peak_gflops", "peak_error",
              "median_ci_low", "median_ci_high", "median_precision", "median_ci_rho"):
        e.pop(k, None)
    if "mask=causal" in e.get("shape", "") and e.get("aggregate_name") not in ("stddev", "cv"):
        for k in ("flops", "GFLOPS", "pct_peak", "arith_intensity"):
            if isinstance(e.get(k), (int, float)):
                e[k] *= 2
        if e.get("aggregate_name") == "median" and e["pct_peak"] > 100:
            above.add(e["run_name"])
failed = "sdpa/naive/B1_H4_L256_Dh64/threads:1"
d["benchmarks"].append({
    "name": failed, "family_index": 99, "per_family_instance_index": 0, "run_name": failed,
    "run_type": "iteration", "repetitions": 1, "threads": 1, "repetition_index": 0,
    "error_occurred": True, "error_message": "warm-up call took 0.61 s (over --max-call-time)",
    "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ns", "kernel": "naive",
    "shape": "op=sdpa,B=1,L=256,H=4,Dh=64,mask=none"})
json.dump(d, open(f"{out}/dense-causal.json", "w"))
b = json.load(open(bert))
b["context"]["date"] = "2026-11-23T02:00:00+0000"       # newer than the samples it replaces
b["context"]["peak_gflops"] = {k: v * 0.8 for k, v in b["context"]["peak_gflops"].items()}
low = set()
for e in b["benchmarks"]:
    if isinstance(e.get("pct_peak"), (int, float)):
        e["pct_peak"] /= 0.8
        if e.get("aggregate_name") == "median" and e["pct_peak"] > 100:
            low.add(e["run_name"])
json.dump(b, open(f"{out}/peak-low.json", "w"))
print(d["context"]["machine_id"], len(above), len(low), failed)
EOF
read -r OLD_NEW_MACHINE N_DENSE N_LOW FAILED <"$TMP/older.expect"
if "$PY" reports/report.py --out "$TMP/older/out" "$TMP/older" >/dev/null 2>"$TMP/older.err"; then
    ok
else
    bad "report.py failed on the older inputs: $(cat "$TMP/older.err")"
fi
"$PY" - "$TMP/older/out" "$OLD_NEW_MACHINE" "$MACHINE" "$N_DENSE" "$N_LOW" "$FAILED" \
    >"$TMP/older.out" <<'EOF'
import csv, glob, os, re, sys
out, dense_m, low_m, n_dense, n_low, failed = sys.argv[1:]
n_dense, n_low = int(n_dense), int(n_low)
def check(cond, text):
    print(("ok " if cond else "FAIL ") + text)
def rows(n):
    return f"{n} row{'s' if n != 1 else ''} above 100% of peak"
page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
section = re.search(r"<section id='answer'>(.*?)</section>", page, re.S)
section = section.group(1) if section else ""
check("class='omitted'>Omitted" in section and "<figure>" not in section
      and "<table>" not in section and not glob.glob(os.path.join(out, "*/answer-*")),
      "no file with a summary: the answer is omitted with a note, no figure, table or CSV")
check(n_dense >= 1 and n_low >= 1, f"the made inputs have rows above 100% of peak "
      f"({n_dense} dense causal, {n_low} with the peak measured low)")
for key, m, n in (("roofline", dense_m, n_dense), ("pct-peak-bert-base", low_m, n_low)):
    caption = re.search(rf"<img src='figures/{key}-{m}.png'.*?<figcaption>(.*?)</figcaption>",
                        page, re.S)
    check(caption and rows(n) in caption.group(1),
          f"{key} of {m}: the note under it says “{rows(n)}”")
    table = list(csv.DictReader(open(os.path.join(out, f"tables/{key}-{m}.csv"),
                                     encoding="utf-8")))
    flagged = {(r["threads"], r["op"], r["kernel"], r["shape"])
               for r in table if r["flag"] == "ABOVE PEAK"}
    check(len(flagged) == n and all(float(r["% peak"]) > 100 for r in table
                                    if r["flag"] == "ABOVE PEAK"),
          f"{key} of {m}: the table flags the {n} rows above 100% ({len(flagged)} flagged)")
caption = re.search(rf"<img src='figures/roofline-{dense_m}.png'.*?<figcaption>(.*?)</figcaption>",
                    page, re.S)
check(caption and "counted dense" in caption.group(1),
      "the dense causal rows are explained as an older file's dense count")
tables = [open(f, encoding="utf-8").read() for f in glob.glob(os.path.join(out, "tables/*.csv"))]
roof = list(csv.DictReader(open(os.path.join(out, f"tables/roofline-{dense_m}.csv"),
                               encoding="utf-8")))
check(tables and not any(failed in t for t in tables)
      and roof and not any(r["kernel"] == failed.split("/")[1] for r in roof),
      f"the failed benchmark {failed} is in no figure's table (not drawn)")
EOF
tally "$TMP/older.out"
check "the failed benchmark is reported, not fatal" \
    'grep -qF "dense-causal.json: 1 benchmark(s) failed in the run, e.g. $FAILED" "$TMP/older.err"'

# ---- Inputs it cannot use ----------------------------------------------------------------
mkdir -p "$TMP/bad"
cat >"$TMP/bad/other-program.json" <<'EOF'
{"context": {"date": "2026-01-01T00:00:00+00:00", "host_name": "elsewhere"},
 "benchmarks": [{"name": "BM_memcpy/8", "run_name": "BM_memcpy/8", "run_type": "iteration",
                 "iterations": 1000, "real_time": 12.5, "cpu_time": 12.4, "time_unit": "ns"}]}
EOF
echo '{"context": {}, "benchmarks": [' >"$TMP/bad/truncated.json"
# Fields of the wrong type (found by fuzz/fuzz_report.py: they raised
# TypeError): a list as time unit, a dict as aggregate name, a list as ISA.
"$PY" - "$SAMPLES/sdpa-lengths-pytorch.json" "$TMP/bad/odd-types.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["context"]["pct_peak_isa"] = ["avx512"]
for e in d["benchmarks"]:
    e["time_unit"] = ["ms"]
    if e.get("run_type") == "aggregate":
        e["aggregate_name"] = {"median": 1}
json.dump(d, open(sys.argv[2], "w"))
PYEOF
printf 'attnbench-wisdom 7\n' >"$TMP/bad/wisdom"
echo "not a database" >"$TMP/bad/history.db"
if "$PY" reports/report.py --out "$TMP/bad/out" --wisdom "$TMP/bad/wisdom" \
    --history "$TMP/bad/history.db" "$TMP/bad" >/dev/null 2>"$TMP/bad.err"; then
    ok
else
    bad "report.py failed on unusable inputs: $(cat "$TMP/bad.err")"
fi
for what in "other-program.json: 1 benchmark(s) skipped" "truncated.json: skipped" \
    "odd-types.json: " \
    "wisdom $TMP/bad/wisdom: skipped" "history $TMP/bad/history.db: skipped"; do
    check "unusable input reported: $what" 'grep -qF "$what" "$TMP/bad.err"'
done
check "with nothing usable the answer and every figure are omitted with a note" \
    '[ "$(grep -c "class='"'"'omitted'"'"'>Omitted" "$TMP/bad/out/index.html")" = 12 ] &&
     [ -z "$(ls "$TMP/bad/out/figures")" ]'

# Times that are not positive and a GFLOPS far past any machine's (a
# damaged field): the benchmarks skipped or the field not drawn. A negative
# time was kept as a median (numpy printed warnings over its logarithm), and
# the peak derived from GFLOPS / pct_peak was unbounded: an infinite axis
# raised ValueError and no page was written.
mkdir -p "$TMP/hostile"
"$PY" - "$SAMPLES/bert-base.json" "$TMP/hostile" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
neg, huge = json.loads(json.dumps(d)), json.loads(json.dumps(d))
for e in neg["benchmarks"][:20]:
    e["real_time"] = -5
for e in huge["benchmarks"][:20]:
    e["GFLOPS"] = 1e308
json.dump(neg, open(sys.argv[2] + "/negative.json", "w"))
json.dump(huge, open(sys.argv[2] + "/huge.json", "w"))
PYEOF
for f in negative huge; do
    if "$PY" reports/report.py --out "$TMP/hostile/out-$f" "$TMP/hostile/$f.json" >/dev/null \
        2>"$TMP/hostile/$f.err" && ! grep -qE "Traceback|Warning" "$TMP/hostile/$f.err"; then
        ok
    else
        bad "report.py on $f.json: $(grep -E "Error|Warning" "$TMP/hostile/$f.err" | head -n 3)"
    fi
done
check "times that are not positive: the benchmarks skipped, said" \
    'grep -q "negative.json: .*skipped (no time)" "$TMP/hostile/negative.err"'

echo "report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
