#!/usr/bin/python3
"""report.py — attnbench's results as a static HTML page with figures.

    /usr/bin/python3 reports/report.py [--out DIR] [--history DB|URL] [--wisdom FILE]...
                                       [FILE.json | DIR]...

Reads benchmark JSON (`attnbench run --json`, the anchors
reports/pytorch_anchor.py and reports/ort_anchor.py, or any Google Benchmark
file: what it cannot use is skipped and said on stderr), the tuner's wisdom
and the results history (an SQLite file or a postgresql:// URL; its
password is never printed), and writes DIR
(default reports/out): index.html, figures/*.png and *.svg, tables/*.csv.
The page works offline (no scripts, no external resources, relative paths).

With no file named, the inputs are every results/*.json, the history at
attnbench's default ($ATTN_HISTORY_DB, else results/history.db when present)
and the wisdom at attnbench's default path when present
($ATTN_WISDOM, $XDG_CACHE_HOME/attnbench/wisdom or ~/.cache/attnbench/wisdom).
With files named, only those are read, plus --history and --wisdom: a test
or a reader of someone else's results does not pick up this machine's.

The sections (reports/report_figures.py): first the answer, "On this
machine, use …" (the best kernel per op, shape and thread count, from the
"summary" of the results files), then the figures: GFLOP/s vs length,
roofline, decoding GB/s against the read bandwidth (and generation's
tokens/s), % of peak on BERT-base, speedup over each peer (PyTorch, ONNX
Runtime, oneDNN, OpenBLAS: report_data.PEERS), einsum loop-order spread,
thread scaling, tuned vs default, counters, noise, history. Each is drawn
per machine; one without data is left out with a note.

Needs Python 3 and matplotlib (Debian python3-matplotlib), and for a
PostgreSQL history psycopg2 (python3-psycopg2); run it with /usr/bin/python3,
whose site packages have them.
"""
import argparse
import csv
import datetime
import html
import os
import sys
from pathlib import Path

try:
    import matplotlib
except ImportError:
    sys.exit("report: matplotlib is missing (Debian: apt-get install python3-matplotlib; "
             "run with /usr/bin/python3)")
matplotlib.use("Agg")
# Identical inputs give identical SVG (ids from a fixed salt, no date).
matplotlib.rcParams["svg.hashsalt"] = "attnbench-report"

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report_data  # noqa: E402
import report_figures  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DPI = 100

STYLE = """
body { font-family: sans-serif; max-width: 1200px; margin: 1em auto; padding: 0 1em;
       color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em;
       border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.8em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
figure { margin: 1em 0; } img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #444; }
.about { color: #333; } .omitted { color: #a33; font-style: italic; }
.notes li { font-size: 0.85em; } code { font-size: 0.9em; }
"""


def default_wisdom_path():
    """attnbench's own default (kernels/wisdom.c, attn_wisdom_default_path)."""
    if os.environ.get("ATTN_WISDOM"):
        return Path(os.environ["ATTN_WISDOM"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "attnbench" / "wisdom"
    if os.environ.get("HOME"):
        return Path(os.environ["HOME"]) / ".cache" / "attnbench" / "wisdom"
    return None


def default_history():
    """attnbench's own default (harness/cli/cmd_history.c): $ATTN_HISTORY_DB,
    a file or a URL, else results/history.db when it exists."""
    if os.environ.get("ATTN_HISTORY_DB"):
        return os.environ["ATTN_HISTORY_DB"]
    db = ROOT / "results" / "history.db"
    return str(db) if db.is_file() else None


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="report.py", description="attnbench's results as a static HTML page.")
    p.add_argument("inputs", nargs="*", help="benchmark JSON files, or folders of them "
                   "(default: results/*.json, the default history and the default wisdom)")
    p.add_argument("--out", default=str(ROOT / "reports" / "out"),
                   help="output folder (default reports/out)")
    p.add_argument("--history", help="results history of attnbench history add: an SQLite "
                   "file or a postgresql:// URL (default: $ATTN_HISTORY_DB, else "
                   "results/history.db, when no file is named)")
    p.add_argument("--wisdom", action="append", default=[],
                   help="a wisdom file of attnbench tune (repeatable)")
    args = p.parse_args(argv)
    if not args.inputs:
        args.inputs = sorted(str(f) for f in (ROOT / "results").glob("*.json"))
        wisdom = default_wisdom_path()
        if args.history is None:
            args.history = default_history()
        if not args.wisdom and wisdom and wisdom.is_file():
            args.wisdom = [str(wisdom)]
    else:
        files = []
        for arg in args.inputs:
            found = sorted(Path(arg).glob("*.json")) if Path(arg).is_dir() else [arg]
            if not found:
                report_data.warn(f"{arg}: no *.json in this folder")
            files += map(str, found)
        args.inputs = files
    return args


# ---- Output ------------------------------------------------------------------------------


def esc(x):
    return html.escape(str(x))


def html_table(header, rows):
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def prepare_out(out):
    """Creates the folders; removes the figures and tables of an earlier
    report, which may name machines or figures this one does not have."""
    for sub, exts in (("figures", (".png", ".svg")), ("tables", (".csv",))):
        d = out / sub
        d.mkdir(parents=True, exist_ok=True)
        for f in d.iterdir():
            if f.suffix in exts and f.is_file():
                f.unlink()


class Savers:
    """Writes the figures' files in child processes, up to one per CPU at
    once, while the next figures are built: drawing a figure twice (PNG and
    SVG) is nine tenths of a report's time (20 s of 25 on a 2-vCPU EPYC),
    and figures do not depend on each other. A child is a fork of this
    process, so it saves the figure as it was built, with nothing pickled.
    Without fork (or with ATTN_REPORT_JOBS=1) the files are written here."""

    def __init__(self):
        jobs = os.environ.get("ATTN_REPORT_JOBS", "")
        self.jobs = (int(jobs) if jobs.isdigit() and int(jobs) > 0
                     else min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                              else os.cpu_count() or 1, 8))
        self.running = {}          # pid -> the figure's stem
        self.failed = []

    def save(self, out, f):
        """PNG and SVG of the figure and the CSV of its table; returns their
        paths relative to the page. The figure is released afterwards. The
        name is made file-safe: it holds machine ids read from the inputs."""
        stem = report_data.slug(f.stem)
        paths = (f"figures/{stem}.png", f"figures/{stem}.svg", f"tables/{stem}.csv")
        if self.jobs <= 1 or not hasattr(os, "fork"):
            write_figure(out, f, paths)
            return paths
        while len(self.running) >= self.jobs:
            self._reap()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                write_figure(out, f, paths)
            except OSError as e:
                print(f"report: cannot write {out}: {e}", file=sys.stderr)
                code = 1
            except BaseException:               # noqa: BLE001 - said, and the parent fails
                import traceback
                traceback.print_exc()
                code = 2
            finally:
                sys.stderr.flush()
                os._exit(code)
        self.running[pid] = stem
        f.fig = None
        return paths

    def _reap(self):
        pid, status = os.wait()
        stem = self.running.pop(pid, None)
        if stem is not None and os.waitstatus_to_exitcode(status) != 0:
            self.failed.append(stem)

    def finish(self):
        """Waits for every figure; the stems of those not written."""
        while self.running:
            self._reap()
        return self.failed


def write_figure(out, f, paths):
    png, svg, tab = paths
    f.fig.savefig(out / png, dpi=DPI, metadata={"Software": None})
    f.fig.savefig(out / svg, metadata={"Date": None})
    f.fig = None
    with open(out / tab, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(f.table.header)
        w.writerows(f.table.rows)


def inputs_html(bm, wisdom, history):
    rows = [[bf.path.name, bf.program, bf.machine.label, bf.commit, bf.context.get("date", "?"),
             len(bf.results), "-" if bf.summary is None else len(bf.summary),
             "; ".join(bf.notes)]
            for bf in sorted(bm.files, key=lambda b: b.sort_key)]
    header = ["file", "program", "machine", "commit", "date", "benchmarks", "summary rows",
              "notes"]
    parts = [html_table(header, rows) if rows
             else "<p class='omitted'>No benchmark file could be read.</p>"]
    read = ", ".join(f"{p} ({len(recs)} records)" for p, recs in wisdom)
    parts.append(f"<p>Wisdom: {esc(read or 'none')}. "
                 f"History: {esc(history.path if history else 'none')}.</p>")
    return "\n".join(parts)


def machines_html(bm):
    rows = []
    for m in bm.machines:
        counts = sorted({t for (mid, t) in bm.peaks.gflops if mid == m.id})
        def peak(t, isa, g):
            err = bm.peaks.error.get((m.id, t), {}).get(isa)
            return (f"{isa} {g:.0f}" + (f" ±{100 * err:.1f}%" if err is not None else "")
                    + ("*" if (m.id, t, isa) in bm.peaks.derived else ""))
        peaks = "; ".join(
            f"{t} thr: " + ", ".join(peak(t, isa, g)
                                     for isa, g in sorted(bm.peaks.at(m.id, t).items()))
            for t in counts)
        triad, read = ("; ".join(f"{t} thr: {g:.1f}" for (mid, t), g in sorted(bw.items())
                                 if mid == m.id) for bw in (bm.peaks.triad, bm.peaks.read))
        rows.append([m.label, m.key or "(none)", peaks or "-", triad or "-", read or "-"])
    return (html_table(["machine", "machine_key",
                        "peak GFLOP/s (± its measured error; * from pct_peak)",
                        "triad GB/s", "read-only GB/s"], rows)
            + "<p>Figures never mix machines: each figure below is one machine's.</p>")


def section_html(n, sec, saved):
    parts = [f"<section id='{esc(sec.key)}'><h2>{n}. {esc(sec.title)}</h2>",
             f"<p class='about'>{esc(sec.about)}</p>"]
    if not saved:
        parts.append("<p class='omitted'>Omitted: no data. "
                     + esc(" ".join(sec.notes) or "Nothing in the inputs.") + "</p>")
    for f, (png, svg, tab) in saved:
        parts.append(f"<figure><a href='{esc(svg)}'><img src='{esc(png)}' "
                     f"alt='{esc(sec.title)}: {esc(f.machine_label)}'></a>"
                     f"<figcaption>{esc(f.machine_label)} · <a href='{esc(svg)}'>SVG</a> · "
                     f"<a href='{esc(png)}'>PNG</a> · <a href='{esc(tab)}'>CSV</a>"
                     + "".join(f"<br>{esc(x)}" for x in f.notes) + "</figcaption></figure>")
        parts.append(f"<details{' open' if sec.open_tables else ''}>"
                     f"<summary>Table ({len(f.table.rows)} rows)</summary>"
                     f"{html_table(f.table.header, f.table.rows)}</details>")
    if saved and sec.notes:
        parts.append("<ul class='notes'>" + "".join(f"<li>{esc(x)}</li>" for x in sec.notes)
                     + "</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def write_page(out, body):
    """index.html, replaced in one rename so that a reader never sees half."""
    tmp = out / "index.html.tmp"
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(out / "index.html")


def main(argv):
    args = parse_args(argv)
    out = Path(args.out)
    bm = report_data.load_benchmarks(args.inputs)
    wisdom = [(Path(p), recs) for p in args.wisdom
              if (recs := report_data.read_wisdom(p)) is not None]
    history = report_data.read_history(args.history) if args.history else None
    if not bm.files:
        report_data.warn("no benchmark file could be read: the figures from them are omitted")
    savers = Savers()
    try:
        prepare_out(out)
        sections, contents = [], []
        for n, sec in enumerate(report_figures.all_sections(bm, wisdom, history), 1):
            saved = [(f, savers.save(out, f)) for f in sec.figures]
            sections.append(section_html(n, sec, saved))
            contents.append(f"<li><a href='#{esc(sec.key)}'>{esc(sec.title)}</a>"
                            + ("" if saved else " (omitted)") + "</li>")
            drawn = f"{len(saved)} figure(s)" if saved else "omitted: " + "; ".join(sec.notes)
            print(f"report: {n}. {sec.title}: {drawn}", file=sys.stderr)
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        notes = bm.notes + report_data.WARNINGS
        page = "\n".join([
            "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
            "<title>attnbench report</title>", f"<style>{STYLE}</style></head><body>",
            "<h1>attnbench report</h1>", f"<p>Generated {esc(now)} by reports/report.py.</p>",
            "<ol>", *contents, "</ol>",
            "<h2>Inputs</h2>", inputs_html(bm, wisdom, history),
            "<h2>Machines</h2>", machines_html(bm),
            "<h2>Notes</h2>",
            ("<ul class='notes'>" + "".join(f"<li>{esc(x)}</li>" for x in notes) + "</ul>"
             if notes else "<p>None.</p>"),
            *sections, "</body></html>"])
        if savers.finish():
            print(f"report: figures not written: {', '.join(savers.failed)}", file=sys.stderr)
            return 1
        write_page(out, page)
    except OSError as e:
        savers.finish()
        print(f"report: cannot write {out}: {e}", file=sys.stderr)
        return 1
    print(f"report: wrote {out / 'index.html'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
