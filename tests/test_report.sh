#!/bin/sh
# test_report.sh — reports/report.py end to end: renders the report from the
# committed samples (tests/report_samples: real runs of this project, plus
# one synthetic file that only differs in its machine) and a history
# database made from them, then checks the page:
#   * every figure and table it references exists (PNG and SVG of each);
#   * the expected figures are there, one per machine: the synthetic machine
#     gets its own, each caption names one machine only, and the PyTorch
#     files (no machine_key) join the real machine alone;
#   * nothing is fetched from outside (the page works offline);
#   * in headless Chromium, every <img> of the page loads (naturalWidth > 0)
#     and so does every SVG it links; and the same check, run on a copy
#     with one PNG deleted, must report that image broken (so the check is
#     known to detect one);
#   * inputs it cannot use (another program's JSON, a file that is not
#     JSON, a damaged wisdom, a history that is not a database) are skipped
#     with a message, and every figure is then omitted with a note.
# Usage: tests/test_report.sh [path/to/attnbench]
#   With an attnbench built with SQLite, the history database is made by
#   `attnbench history add` (six faked commits of a sample, the avx2 kernel
#   30% slower from the fourth on, plus the samples) and figure 10 is
#   expected; without one, figure 10 must be omitted.
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
        echo "note: $AB was built without SQLite: no history, figure 10 must be omitted"
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
"$PY" - "$TMP/out" "${HISTORY:+history}" "$MACHINE" "$SYNTHETIC" >"$TMP/page.out" <<'EOF'
import os, sys
from html.parser import HTMLParser
out, with_history, machine, synthetic = sys.argv[1:5]

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
expected = ["gflops-vs-length", "roofline", "pct-peak-bert-base", "speedup-vs-pytorch",
            "einsum-spread", "thread-scaling", "tuned-vs-default", "counters", "noise", "history"]
check(p.sections == expected, f"the ten sections in order: {p.sections}")
for key in expected:
    drawn = [s for sec, s in p.imgs if sec == key]
    if key == "history" and not with_history:
        check(not drawn and key in p.omitted, "no history: figure 10 omitted with a note")
    else:
        check(bool(drawn) and key not in p.omitted, f"figure {key} drawn")
# Machines apart: the synthetic machine has its own figures, PyTorch (no
# machine_key, same host, CPU and caches) goes with the real machine only.
for key in ("gflops-vs-length", "roofline", "noise"):
    for m in (machine, synthetic):
        check(f"figures/{key}-{m}.png" in [s for _, s in p.imgs], f"{key} of machine {m}")
for _, src in p.imgs:
    for m, other in ((machine, synthetic), (synthetic, machine)):
        if m in src:
            check(m in p.captions.get(src, "") and other not in p.captions.get(src, ""),
                  f"{src}: its caption names machine {m} only")
check(f"figures/speedup-vs-pytorch-{machine}.png" in [s for _, s in p.imgs]
      and not any(synthetic in s for sec, s in p.imgs if sec == "speedup-vs-pytorch"),
      "speedup over PyTorch on the real machine only")
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
check "with nothing usable every figure is omitted with a note" \
    '[ "$(grep -c "class='"'"'omitted'"'"'>Omitted" "$TMP/bad/out/index.html")" = 10 ] &&
     [ -z "$(ls "$TMP/bad/out/figures")" ]'

echo "report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
