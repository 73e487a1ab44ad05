"""report_figures.py — the figures of reports/report.py, one function each.

Every function takes the report's inputs and returns a Section: the figures
(one per machine: machines are never drawn into one series) with the table
behind each, and notes. A machine without data for a figure gets a note,
not an empty plot; a Section without any figure is shown on the page as
omitted, with the notes saying why.

matplotlib is used through its object interface (no pyplot state), with
the Agg canvas, so nothing needs a display.
"""
import math
import re
import textwrap
import zlib
from dataclasses import dataclass, field

import numpy as np
from matplotlib.figure import Figure as MplFigure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from report_data import ANCHORS, PEERS

OP_ORDER = {"sdpa": 0, "mha": 1, "encoder": 2, "generate": 3}
OP_MARKER = {"sdpa": "o", "mha": "s", "encoder": "^", "generate": "D"}
READ_BW_COLOR = "darkgoldenrod"     # the read-only bandwidth ceiling of the roofline
PEAK_STYLE = {"avx512": "--", "avx2": "-.", "sse2": ":", "neon": "-."}
BERT_BASE_LENGTHS = (128, 512)
BERT_BASE_TOKENS = {"B1", "H12", "D768", "Dh64", "F3072"}    # dropped from its labels
# The anchors (report_data.ANCHORS: external programs) keep one colour each, outside
# the kernels' palette, and are drawn dashed: they are references, not contenders.
ANCHOR_COLOR = {"pytorch": "black", "onnxruntime": "darkmagenta"}
ANCHOR_LS = "--"
ANCHOR_NAMES = " and ".join(PEERS[k] for k in ANCHORS)     # for the captions


@dataclass
class Table:
    header: list
    rows: list


@dataclass
class Figure:
    stem: str               # file name without extension: stable across runs
    machine_label: str
    fig: MplFigure
    table: Table
    notes: list = field(default_factory=list)


@dataclass
class Section:
    key: str
    title: str
    about: str              # what the figure shows and how to read it
    figures: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    open_tables: bool = False   # the tables are the point: shown, not folded away


# ---- Helpers -----------------------------------------------------------------------------


class Palette:
    """One colour per kernel for the whole report, so that a kernel looks the
    same in every figure; the anchors have their fixed ones (ANCHOR_COLOR)."""

    def __init__(self, kernels):
        names = sorted(k for k in set(kernels) if k not in ANCHORS)
        # tab10, then the light tab20 tones for an eleventh kernel and on.
        cmap = [f"C{i}" for i in range(10)] + ["#aec7e8", "#ffbb78", "#98df8a", "#ff9896"]
        self.colors = {k: cmap[i % len(cmap)] for i, k in enumerate(names)}
        self.colors.update({k: ANCHOR_COLOR[k] for k in ANCHORS})    # a new anchor needs one

    def __call__(self, kernel):
        return self.colors.get(kernel, "grey")


def line_style(kernel):
    """An anchor's line is dashed, a kernel's solid."""
    return ANCHOR_LS if kernel in ANCHORS else "-"


def anchors_last(kernel):
    """Sort key: attnbench's kernels by name, then the anchors."""
    return (kernel in ANCHORS, kernel)


def fmt_time(s):
    """Seconds as report.c's ab_format_time prints them."""
    if s is None or not math.isfinite(s):
        return "-"
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.3g} us"
    if s < 1.0:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def fmt(x, spec=".3g"):
    return "-" if x is None else format(x, spec)


def shape_key(r):
    """Sort key of a result: op, then length, then the shape label."""
    return (OP_ORDER.get(r.op, 9), r.op, r.length or 0, r.label, r.threads, r.kernel)


def wrap(label, width=18):
    """A shape label ("B1_D768_H12_L128_F3072_post_gelu") on short lines, so
    that neighbouring tick labels do not run into each other."""
    return "\n".join(textwrap.wrap(label.replace("_", " "), width)) or label


def log_scale(ax, which="y"):
    """A logarithmic axis labelled in plain numbers at 1, 2 and 5 of each
    decade: "0.5" and "200" read faster than 10^-1 and 10^2 on ratios and
    GFLOP/s."""
    axis = ax.yaxis if which == "y" else ax.xaxis
    (ax.set_yscale if which == "y" else ax.set_xscale)("log")
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def legend_right(ax, handles=None, **kw):
    """The legend beside the panel, where it hides no data."""
    args = dict(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    args.update(kw)
    return ax.legend(handles=handles, **args) if handles else ax.legend(**args)


def by_machine(results):
    """{Machine: [results]} in first-seen order."""
    out = {}
    for r in results:
        out.setdefault(r.machine, []).append(r)
    return out


def new_figure(n_panels, ncols=2, width=11.0, panel_height=3.6):
    """A figure with n panels on a grid (at most ncols wide); returns the
    figure and the panels in reading order (surplus grid cells removed)."""
    ncols = max(1, min(ncols, n_panels))
    nrows = math.ceil(n_panels / ncols)
    fig = MplFigure(figsize=(width, panel_height * nrows + 0.6), layout="constrained")
    axes = list(fig.subplots(nrows, ncols, squeeze=False).ravel())
    for ax in axes[n_panels:]:
        ax.remove()
    return fig, axes[:n_panels]


def grouped_bars(ax, groups, series, value, color, log=False, flagged=None):
    """Bars of value(group, series) (None: no bar) with groups on the x axis
    and one bar per series within each group; the legend names the series.
    Bars for which flagged(group, series) is true are hatched and edged in
    red (ABOVE_PEAK_STYLE)."""
    width = 0.8 / max(1, len(series))
    for i, s in enumerate(series):
        xs, ys, flags = [], [], []
        for g_i, g in enumerate(groups):
            v = value(g, s)
            if v is not None:
                xs.append(g_i - 0.4 + width * (i + 0.5))
                ys.append(v)
                flags.append(bool(flagged and flagged(g, s)))
        if xs:
            bars = ax.bar(xs, ys, width, color=color(s), label=s)
            for bar, flag in zip(bars, flags):
                if flag:
                    bar.set(**ABOVE_PEAK_STYLE)
    ax.set_xticks(range(len(groups)))
    ax.set_xlim(-0.6, len(groups) - 0.4)
    if log:
        log_scale(ax)
    ax.grid(axis="y", alpha=0.3)


def kernel_op_legend(ax, pal, kernels, ops, extra=()):
    """A legend of kernel colours and op markers (hollow: they are shapes,
    not colours), then the extra handles, beside the panel."""
    handles = [Line2D([], [], color=pal(k), marker="o", ls="", label=k) for k in kernels]
    handles += [Line2D([], [], color="black", markerfacecolor="none",
                       marker=OP_MARKER.get(o, "x"), ls="", label=o) for o in ops]
    return legend_right(ax, handles + list(extra))


# Rows above 100% of their peak (Result.above_peak) are drawn, never dropped,
# and marked: hatched red-edged bars, red rings around points.
ABOVE_PEAK_STYLE = dict(hatch="///", edgecolor="red", linewidth=1.2)
ABOVE_PEAK_LABEL = "above 100% of peak (see the note)"


def above_peak_handle(bars=False):
    """The legend entry of the mark."""
    if bars:
        return Patch(facecolor="white", label=ABOVE_PEAK_LABEL, **ABOVE_PEAK_STYLE)
    return Line2D([], [], color="red", marker="o", markerfacecolor="none", markersize=9,
                  ls="", label=ABOVE_PEAK_LABEL)


def ring_above_peak(ax, xs, ys):
    """Red rings around the points that are above their peak."""
    if xs:
        ax.scatter(xs, ys, s=130, facecolors="none", edgecolors="red", linewidths=1.4, zorder=4)


def above_peak_notes(rows):
    """The note under a figure that draws rows above 100% of their peak:
    how many, and why they can be there, as far as their files tell."""
    over = sorted({r.run_name: r for r in rows if r.above_peak}.values(), key=shape_key)
    if not over:
        return []
    n = len(over)
    why = sorted({r.above_peak_reason for r in over})
    return [f"{n} row{'s' if n != 1 else ''} above 100% of peak: their FLOPs were counted with "
            "an older formula (dense causal) or the peak was measured low. Drawn and marked "
            "(red), not dropped; the threshold is 100% plus the peak's measured error where "
            "the file gives one. Here: " + "; ".join(why) + ". Rows: "
            + ", ".join(f"{r.run_name} ({r.pct_peak:.0f}%)" for r in over[:6])
            + (f" and {n - 6} more" if n > 6 else "") + "."]


def flag_text(r):
    return "ABOVE PEAK" if r.above_peak else ""


def peak_lines(ax, peaks, derived):
    """Horizontal lines at each ISA's measured peak, labelled at the right."""
    for isa, g in sorted(peaks.items(), key=lambda kv: kv[1]):
        ax.axhline(g, color="dimgrey", ls=PEAK_STYLE.get(isa, "--"), lw=1)
        ax.text(0.99, g, f"{isa} peak {g:.0f}" + (" (from pct_peak)" if isa in derived else ""),
                transform=ax.get_yaxis_transform(), ha="right", va="bottom", fontsize=7,
                color="dimgrey")


# ---- 0. The answer: which kernel to use -------------------------------------------------


ANSWER_COLOR = {"faster": "C2", "tie": "#bbbbbb"}


def latest_summaries(bm, machine):
    """The machine's summary rows, one per (op, shape, threads): the latest
    file's (by context date, as everywhere on the page), and how many rows
    of older files that superseded."""
    rows, superseded = {}, 0
    for bf in sorted((b for b in bm.files if b.machine is machine and b.summary),
                     key=lambda b: b.sort_key):
        for x in bf.summary:
            k = (x.op, x.shape, x.threads)
            superseded += k in rows and rows[k].source is not bf
            rows[k] = x
    return list(rows.values()), superseded


def summary_key(x):
    m = re.search(r"(?:^|_)Lq?(\d+)(?:_|$)", x.label)
    return (OP_ORDER.get(x.op, 9), x.op, int(m.group(1)) if m else 0, x.label, x.threads)


def fig_answer(bm, pal):
    sec = Section("answer", "On this machine, use …",
                  "The answer of each run (the “summary” of `attnbench run --json`): per op, "
                  "shape and thread count on which two or more kernels were timed, the fastest "
                  "kernel, the runner-up, and the runner-up's time over the best's with its "
                  "95% interval (taken round by round where the two were timed side by side: "
                  "“paired rounds”). “faster”: the interval lies above 1; “tie”: it reaches "
                  "1, and either kernel will do. A bar starts at 1 (no difference) and ends at "
                  "the ratio; the whisker is the interval. Where several files of one machine "
                  "answer for the same shape and thread count, the latest file's row (by its "
                  "date) is shown, as in the other figures; the table names the file. Files "
                  f"without a summary (older attnbench, the anchors: {ANCHOR_NAMES}) are "
                  "not in it.",
                  open_tables=True)
    without = []
    for m in bm.machines:
        files = [b for b in bm.files if b.machine is m and b.summary is not None]
        if not files:
            without.append(m.label)
            continue
        rows, superseded = latest_summaries(bm, m)
        if not rows:
            sec.notes.append(f"{m.label}: its files' summaries are empty (no shape was timed "
                             "with two or more kernels)")
            continue
        rows.sort(key=summary_key)
        n = len(rows)
        fig, axes = new_figure(1, ncols=1, width=11.0, panel_height=0.42 * n + 1.3)
        ax = axes[0]
        ends = [v for x in rows for v in (x.ratio, x.ci_low, x.ci_high) if v]
        lo_x, hi_x = min(ends + [1.0]), max(ends + [1.0])
        log = hi_x / lo_x > 4
        for y, x in enumerate(rows):
            if x.ratio is None:
                ax.text(1, y, "  no ratio (the run could not compare the two)", va="center",
                        fontsize=7, color="dimgrey")
                continue
            ax.barh(y, x.ratio - 1, left=1, height=0.6, color=ANSWER_COLOR[x.verdict],
                    edgecolor="black" if x.verdict == "faster" else "dimgrey", lw=0.6,
                    alpha=0.55 if x.unstable else 1.0)
            if x.ci_low is not None and x.ci_high is not None:
                ax.errorbar(x.ratio, y, xerr=[[max(0.0, x.ratio - x.ci_low)],
                                              [max(0.0, x.ci_high - x.ratio)]],
                            fmt="none", ecolor="black", elinewidth=1, capsize=3)
            right = max(v for v in (x.ratio, x.ci_high, 1.0) if v)
            ax.text(right, y, f"  {x.best} ×{x.ratio:.2f} " + (
                    "faster" if x.verdict == "faster" else "(tie)")
                    + (" · unstable" if x.unstable else ""), va="center", fontsize=7)
        ax.set_yticks(range(n))
        ax.set_yticklabels([f"{x.op} {x.label} · {x.threads} thr\n{x.best} vs {x.runner_up}"
                            for x in rows], fontsize=7)
        ax.invert_yaxis()
        ax.axvline(1, color="black", lw=1)
        if log:
            log_scale(ax, "x")
            ax.set_xlim(lo_x / 1.2, hi_x * 2.5)
        else:
            span = hi_x - min(lo_x, 1.0)
            ax.set_xlim(min(lo_x, 1.0) - 0.08 * span - 0.01, hi_x + 0.45 * span + 0.05)
        ax.set_xlabel("runner-up time / best time (1: no difference)")
        ax.grid(axis="x", alpha=0.3)
        legend_right(ax, [Patch(color=ANSWER_COLOR["faster"],
                                label="faster: the interval lies above 1"),
                          Patch(color=ANSWER_COLOR["tie"], label="tie: the interval reaches 1"),
                          Line2D([], [], color="black", marker="|", ls="-", lw=1,
                                 label="95% interval"),
                          Patch(color=ANSWER_COLOR["tie"], alpha=0.55,
                                label="pale: best or runner-up unstable")])
        fig.suptitle(f"On this machine, use … — {m.label}", fontsize=10)
        table = [[x.op, x.label, x.threads, x.best, x.runner_up, fmt(x.ratio, ".3f"),
                  fmt(x.ci_low, ".3f"), fmt(x.ci_high, ".3f"), x.verdict,
                  fmt(x.kernels, "d"), fmt(x.paired_rounds, "d"),
                  "UNSTABLE" if x.unstable else "", x.source.path.name,
                  x.source.context.get("date", "?")] for x in rows]
        notes = [f"One row per op, shape and thread count: the latest file's ({n} rows)"
                 + (f"; {superseded} row(s) of older files superseded" if superseded else "")
                 + "."]
        sec.figures.append(Figure(f"{sec.key}-{m.id}", m.label, fig, Table(
            ["op", "shape", "threads", "use (best)", "runner-up", "runner-up / best",
             "95% low", "95% high", "verdict", "kernels compared", "paired rounds", "unstable",
             "file", "file date"], table), notes))
    if without and len(without) < len(bm.machines):
        sec.notes.append("Not in this section (no results file with a summary): "
                         + "; ".join(without))
    elif without:
        sec.notes.append("no results file has a summary (written by newer `attnbench run "
                         f"--json`; older files and the anchors' ({ANCHOR_NAMES}) have none)")
    return sec


# ---- 1. GFLOP/s vs sequence length -------------------------------------------------------


def fig_gflops_vs_length(bm, pal):
    sec = Section("gflops-vs-length", "GFLOP/s vs sequence length",
                  "Median GFLOP/s of each kernel as the sequence length grows, one panel per "
                  "op and thread count; a series is one kernel on shapes that differ only in "
                  "length. Horizontal lines: the machine's measured FMA peak of each ISA at "
                  "that thread count (from the run's context; “from pct_peak” where the "
                  "context was measured at another thread count and the peak is the one the "
                  "kernel's % of peak is against).")
    for m, rs in by_machine(bm.results).items():
        panels = {}
        for r in rs:
            if r.length is None or r.gflops is None:
                continue
            rest = ",".join(f"{k}={v}" for k, v in r.shape.items()
                            if k not in ("op", "L", "Lq"))
            panels.setdefault((OP_ORDER.get(r.op, 9), r.op, r.threads), {}) \
                  .setdefault((r.kernel, rest), []).append(r)
        for k in list(panels):
            panels[k] = {s: pts for s, pts in panels[k].items()
                         if len({p.length for p in pts}) >= 2}
            if not panels[k]:
                del panels[k]
        if not panels:
            sec.notes.append(f"{m.label}: no kernel was measured at two or more lengths "
                             "of one shape")
            continue
        fig, axes = new_figure(len(panels), width=13.0)
        rows, drawn = [], []
        for ax, ((_, op, t), series) in zip(axes, sorted(panels.items())):
            several = len({rest for _, rest in series}) > 1
            over = []
            for (kernel, rest), pts in sorted(series.items(),
                                              key=lambda kv: (anchors_last(kv[0][0]), kv[0])):
                pts.sort(key=lambda p: p.length)
                ax.plot([p.length for p in pts], [p.gflops for p in pts],
                        marker=OP_MARKER.get(op, "o"), color=pal(kernel),
                        ls=line_style(kernel), label=kernel + (f" ({rest})" if several else ""))
                rows += [[op, t, kernel, p.label, p.length, fmt_time(p.median_s),
                          fmt(p.gflops, ".1f"), fmt(p.pct_peak, ".1f"), flag_text(p)]
                         for p in pts]
                over += [p for p in pts if p.above_peak]
                drawn += pts
            ring_above_peak(ax, [p.length for p in over], [p.gflops for p in over])
            peak_lines(ax, bm.peaks.at(m.id, t), bm.peaks.derived_at(m.id, t))
            ax.set_xscale("log", base=2)
            ax.set_xticks(sorted({p.length for pts in series.values() for p in pts}))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_formatter(NullFormatter())
            log_scale(ax)
            ax.set_xlabel("sequence length L")
            ax.set_ylabel("GFLOP/s (median)")
            ax.set_title(f"{op}, {t} thread{'s' if t > 1 else ''}", fontsize=10)
            ax.grid(alpha=0.3)
            if over:
                legend_right(ax, ax.get_legend_handles_labels()[0] + [above_peak_handle()])
            else:
                legend_right(ax)
        fig.suptitle(f"GFLOP/s vs sequence length — {m.label}", fontsize=10)
        sec.figures.append(Figure(f"{sec.key}-{m.id}", m.label, fig, Table(
            ["op", "threads", "kernel", "shape", "L", "median", "GFLOP/s", "% peak", "flag"],
            rows), above_peak_notes(drawn)))
    return sec


# ---- 2. Roofline -------------------------------------------------------------------------


def fig_roofline(bm, pal):
    sec = Section("roofline", "Roofline",
                  "Every benchmark at its arithmetic intensity (the flops and bytes counters: "
                  "attnbench's count of the compulsory memory traffic) and its median "
                  "GFLOP/s, one panel per thread count. Ceilings: each ISA's measured FMA "
                  "peak, the STREAM-triad bandwidth times intensity and, where the run "
                  "measured it (newer attnbench: context read_gbs), the read-only bandwidth "
                  "times intensity (brown: attention mostly reads, so its memory roof lies "
                  "between the two), each measured at the thread count named in the legend "
                  "when it is not the panel's. Points above their ISA's peak are ringed in "
                  "red.")
    for m, rs in by_machine(bm.results).items():
        pts = [r for r in rs if r.intensity and r.gflops]
        if not pts:
            sec.notes.append(f"{m.label}: no benchmark with flops and bytes counters")
            continue
        threads = sorted({r.threads for r in pts})
        fig, axes = new_figure(len(threads), ncols=1, width=10.0, panel_height=4.6)
        rows = []
        for ax, t in zip(axes, threads):
            here = sorted((r for r in pts if r.threads == t), key=shape_key)
            peaks = bm.peaks.at(m.id, t)
            bw, bw_t = bm.peaks.triad_at(m.id, t)
            rbw, rbw_t = bm.peaks.read_at(m.id, t)
            for r in here:
                ax.scatter(r.intensity, r.gflops, color=pal(r.kernel),
                           marker=OP_MARKER.get(r.op, "x"), s=28, zorder=3)
                # The kernel's own roof: its ISA's peak (the one pct_peak is
                # against) or the bandwidth ceiling, whichever is lower.
                ceilings = [c for c in (r.peak or max(peaks.values(), default=None),
                                        bw * r.intensity if bw else None) if c]
                roof = min(ceilings, default=None)
                rows.append([t, r.op, r.kernel, r.label, fmt(r.intensity, ".1f"),
                             fmt(r.gflops, ".1f"), fmt(roof, ".1f"),
                             fmt(100 * r.gflops / roof if roof else None, ".0f"),
                             fmt(rbw * r.intensity if rbw else None, ".1f"),
                             fmt(r.pct_peak, ".1f"), flag_text(r)])
            over = [r for r in here if r.above_peak]
            ring_above_peak(ax, [r.intensity for r in over], [r.gflops for r in over])
            bws = [b for b in (bw, rbw) if b]
            xs = [r.intensity for r in here] + [g / b for g in peaks.values() for b in bws]
            lo, hi = min(xs) / 2, max(xs) * 2
            for b, b_t, what, color in ((bw, bw_t, "triad", "dimgrey"),
                                        (rbw, rbw_t, "read-only", READ_BW_COLOR)):
                if b:
                    xx = np.geomspace(lo, max(peaks.values(), default=b * hi) / b, 50)
                    ax.plot(xx, b * xx, color=color, lw=1.2,
                            label=f"{what} {b:.1f} GB/s × intensity"
                                  + (f" (measured at {b_t} threads)" if b_t != t else ""))
            derived = bm.peaks.derived_at(m.id, t)
            for isa, g in sorted(peaks.items(), key=lambda kv: kv[1]):
                ax.hlines(g, g / max(bws) if bws else lo, hi, color="dimgrey",
                          ls=PEAK_STYLE.get(isa, "--"), lw=1.2,
                          label=f"{isa} peak {g:.0f} GFLOP/s"
                                + (" (from pct_peak)" if isa in derived else ""))
            log_scale(ax, "x")
            log_scale(ax)
            ax.set_xlim(lo, hi)
            ax.set_xlabel("arithmetic intensity (FLOP/byte)")
            ax.set_ylabel("GFLOP/s (median)")
            ax.set_title(f"{t} thread{'s' if t > 1 else ''}", fontsize=10)
            ax.grid(alpha=0.3)
            kernel_op_legend(ax, pal, sorted({r.kernel for r in here}, key=anchors_last),
                             sorted({r.op for r in here}, key=lambda o: OP_ORDER.get(o, 9)),
                             extra=ax.get_legend_handles_labels()[0]
                             + ([above_peak_handle()] if over else []))
            missing = [what for what, have in (("peak", peaks), ("triad bandwidth", bw))
                       if not have]
            if missing:
                sec.notes.append(f"{m.label}, {t} threads: no {' or '.join(missing)} in the "
                                 "inputs: that ceiling is not drawn")
        fig.suptitle(f"Roofline — {m.label}", fontsize=10)
        sec.figures.append(Figure(f"{sec.key}-{m.id}", m.label, fig, Table(
            ["threads", "op", "kernel", "shape", "FLOP/byte", "GFLOP/s", "roof GFLOP/s",
             "% of roof", "read-only bandwidth ceiling GFLOP/s", "% peak", "flag"], rows),
            above_peak_notes(pts)))
    return sec


# ---- 2b. Decoding: GB/s against the read bandwidth ---------------------------------------


HKV_MARKERS = ("o", "s", "^", "D", "v", "P")
NO_PCT = "–"        # a % of the read bandwidth the file does not give


def is_decode(r):
    """A decoding step: SDPA of one query (Lq=1) against Lk cached keys."""
    return r.op == "sdpa" and r.shape.get("Lq") == "1" and r.shape.get("Lk", "").isdigit()


def l3_bytes(ctx):
    """The L3 size in the context's caches (bytes), or None."""
    caches = ctx.get("caches") if isinstance(ctx.get("caches"), list) else []
    sizes = [c.get("size") for c in caches if isinstance(c, dict) and c.get("level") == 3]
    return max((x for x in sizes if isinstance(x, int) and not isinstance(x, bool) and x > 0),
               default=None)


def in_cache(r):
    """The call moves less than twice the L3 of its machine: it may be served
    from cache, and attnbench gives no % of read bandwidth for it."""
    l3 = l3_bytes(r.source.context)
    return bool(l3 and r.bytes and r.bytes < 2 * l3)


def above_read_bw(r):
    """More than 100% of the read bandwidth beyond that bandwidth's error."""
    return (r.pct_read_bw is not None
            and r.pct_read_bw > 100.0 * (1.0 + max(0.0, r.read_bw_error or 0.0)))


def read_bw_flags(r):
    return ", ".join(f for f in (flag_text(r), "ABOVE READ BW" if above_read_bw(r) else "",
                                 "UNSTABLE" if r.unstable else "") if f)


def fmt_pct_read(r):
    return NO_PCT if r.pct_read_bw is None else f"{r.pct_read_bw:.1f}"


def read_bw_of(bm, m, t, rows):
    """(GB/s, where it comes from) of the read-only bandwidth at t threads: the
    one the rows' pct_read_bw is against (GB/s ÷ pct_read_bw: the run's own
    measurement at that thread count), else the context's (read_at: the
    nearest thread count measured); (None, "") when no file has one."""
    implied = sorted(r.gbps * 100.0 / r.pct_read_bw for r in rows
                     if r.pct_read_bw and r.gbps and r.kernel not in ANCHORS)
    if implied:
        return implied[len(implied) // 2], "from pct_read_bw"
    bw, bw_t = bm.peaks.read_at(m.id, t)
    if bw is None:
        return None, ""
    return bw, "context" + (f", measured at {bw_t} threads" if bw_t != t else "")


def decode_series_key(r):
    """(kernel, Hkv, the rest of the shape): one line of the figure."""
    hkv = int(r.shape["Hkv"]) if r.shape.get("Hkv", "").isdigit() else (
        int(r.shape["H"]) if r.shape.get("H", "").isdigit() else 0)
    rest = ",".join(f"{k}={v}" for k, v in r.shape.items()
                    if k not in ("op", "Lq", "Lk", "Hkv"))
    return r.kernel, hkv, rest


def fig_decode_bandwidth(bm, pal):
    sec = Section("decode-bandwidth", "Decoding: GB/s against the read bandwidth",
                  "A decoding step is SDPA of one query (Lq=1) against Lk cached keys and "
                  "values (attnbench run --suite decode): it reads K and V once and does little "
                  "arithmetic, so its ceiling is the memory's read bandwidth, not the FMA peak. "
                  "Per thread count: GB/s (the bytes a call must move — K and V of the "
                  "key/value heads, q and the output — over its median time) against the "
                  "number of cached keys, one line per kernel, number of key/value heads "
                  "(Hkv < H: grouped-query attention) and storage of the cache (kv: f16 and i8 "
                  "hold half and about a quarter of fp32's bytes, which GB/s counts as stored), "
                  f"the anchors ({ANCHOR_NAMES}) dashed. "
                  "The brown line is the measured read-only bandwidth at that thread count "
                  "(the one pct_read_bw is against), the grey dashed one the STREAM triad. Hollow points move less than "
                  "twice the L3: they may be served from cache, can lie above the read "
                  "bandwidth, and attnbench gives them no % of read bandwidth (“–”). Under it, "
                  "where the inputs have op=generate (token-by-token generation through a "
                  "decoder stack, attnbench run --suite generate), its new tokens per second.",
                  open_tables=True)
    for m, rs in by_machine(bm.results).items():
        dec = sorted((r for r in rs if is_decode(r) and r.gbps), key=shape_key)
        gen = sorted((r for r in rs if r.op == "generate"), key=shape_key)
        if not dec:
            sec.notes.append(f"{m.label}: no decoding step (op=sdpa with Lq=1: attnbench run "
                             "--suite decode, reports/pytorch_anchor.py or ort_anchor.py "
                             "--suite decode)")
        else:
            sec.figures.append(decode_figure(sec, bm, pal, m, dec))
        if gen:
            sec.figures.append(generate_figure(sec, bm, pal, m, gen))
    return sec


def decode_figure(sec, bm, pal, m, dec):
    threads = sorted({r.threads for r in dec})
    fig, axes = new_figure(len(threads), ncols=1, width=11.0, panel_height=4.0)
    hkvs = sorted({decode_series_key(r)[1] for r in dec}, reverse=True)
    marker = {h: HKV_MARKERS[i % len(HKV_MARKERS)] for i, h in enumerate(hkvs)}
    rows, notes = [], []
    for ax, t in zip(axes, threads):
        here = [r for r in dec if r.threads == t]
        series = {}
        for r in here:
            series.setdefault(decode_series_key(r), []).append(r)
        several = len({rest for _, _, rest in series}) > 1
        # Lines that differ in more than kernel and Hkv (the storage type kv
        # of the cache, a mask) are told apart by the keys that differ only.
        rests = [dict(kv.split("=", 1) for kv in rest.split(",") if "=" in kv)
                 for _, _, rest in series]
        differ = sorted({k for d in rests for k in d if len({x.get(k) for x in rests}) > 1})
        top = []        # every value drawn: the y range
        for (kernel, hkv, rest), pts in sorted(series.items(),
                                               key=lambda kv: (anchors_last(kv[0][0]), kv[0])):
            pts.sort(key=lambda p: int(p.shape["Lk"]))
            xs, ys = [int(p.shape["Lk"]) for p in pts], [p.gbps for p in pts]
            own = dict(kv.split("=", 1) for kv in rest.split(",") if "=" in kv)
            what = ", ".join(f"{k}={own.get(k, '-')}" for k in differ)
            ax.plot(xs, ys, color=pal(kernel), marker=marker[hkv], ms=6,
                    ls=line_style(kernel),
                    label=f"{kernel}, Hkv={hkv}" + (f", {what}" if several and what else ""))
            hollow = [(x, y) for x, y, p in zip(xs, ys, pts) if in_cache(p)]
            if hollow:
                ax.scatter(*zip(*hollow), marker=marker[hkv], s=36, facecolors="white",
                           edgecolors=pal(kernel), linewidths=1.2, zorder=3)
            top += ys
        read, read_from = read_bw_of(bm, m, t, here)
        triad, triad_t = bm.peaks.triad_at(m.id, t)
        if read:
            ax.axhline(read, color=READ_BW_COLOR, lw=1.4,
                       label=f"read-only {read:.1f} GB/s ({read_from})")
            top.append(read)
            if read_from == "from pct_read_bw":
                ctx_bw, ctx_t = bm.peaks.read_at(m.id, t)
                if ctx_bw and ctx_t == t and abs(ctx_bw / read - 1) > 0.02:
                    notes.append(f"{t} thread{'s' if t > 1 else ''}: the read-only bandwidth "
                                 f"drawn ({read:.1f} GB/s) is the one the rows' pct_read_bw is "
                                 f"against; a context of another run gives {ctx_bw:.1f} GB/s at {t} "
                                 f"thread{'s' if t > 1 else ''}")
        else:
            notes.append(f"{t} thread{'s' if t > 1 else ''}: no read-only bandwidth in the "
                         "inputs (older attnbench): no ceiling drawn")
        if triad:
            ax.axhline(triad, color="dimgrey", ls="--", lw=1.0,
                       label=f"triad {triad:.1f} GB/s"
                             + (f" (measured at {triad_t} threads)" if triad_t != t else ""))
            top.append(triad)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted({int(r.shape["Lk"]) for r in here}))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        log_scale(ax)
        ax.set_ylim(min(top) / 1.5, max(top) * 1.5)
        ax.set_xlabel("cached keys Lk")
        ax.set_ylabel("GB/s (bytes / median time)")
        ax.set_title(f"{t} thread{'s' if t > 1 else ''}", fontsize=10)
        ax.grid(alpha=0.3)
        extra = ([Line2D([], [], color="grey", marker="o", markerfacecolor="white", ls="",
                         label="hollow: under 2× L3 (may run from cache)")]
                 if any(in_cache(r) for r in here) else [])
        legend_right(ax, ax.get_legend_handles_labels()[0] + extra)
        rows += [[r.op, t, r.kernel, r.label, r.shape["Lk"], decode_series_key(r)[1],
                  fmt_time(r.median_s), fmt(r.gbps, ".1f"), fmt_pct_read(r), read_bw_flags(r)]
                 for r in sorted(here, key=lambda r: (anchors_last(r.kernel),
                                                      -decode_series_key(r)[1],
                                                      int(r.shape["Lk"])))]
    with_pct = [r for r in dec if r.pct_read_bw is not None]
    cached = [r for r in dec if in_cache(r)]
    why = []
    if any(r.kernel not in ANCHORS and r.pct_read_bw is None for r in dec):
        why.append("the call moves less than twice the L3, so attnbench does not judge it by "
                   "the memory's bandwidth")
    anchors = [PEERS[k] for k in ANCHORS if any(r.kernel == k for r in dec)]
    if anchors:
        why.append(f"{' and '.join(anchors)}'s JSON has no pct_read_bw")
    notes.insert(0, f"{len(with_pct)} of {len(dec)} rows give a % of the read bandwidth "
                    "(pct_read_bw)" + (f"; “{NO_PCT}”: " + "; ".join(why) if why else "") + ".")
    over = [r for r in dec if above_read_bw(r)]
    if over:
        notes.append(f"{len(over)} row(s) above 100% of the read bandwidth beyond its error: "
                     + ", ".join(f"{r.run_name} ({r.pct_read_bw:.0f}%)" for r in over[:6]))
    if cached:
        l3 = l3_bytes(cached[0].source.context)
        notes.append(f"{len(cached)} row(s) move less than twice the L3 ({l3 / 2**20:.0f} MiB): "
                     "hollow points")
    fig.suptitle(f"Decoding: GB/s against the read bandwidth — {m.label}", fontsize=10)
    return Figure(f"{sec.key}-{m.id}", m.label, fig, Table(
        ["op", "threads", "kernel", "shape", "Lk", "Hkv", "median", "GB/s",
         "% of read bandwidth", "flag"], rows), notes)


def generate_figure(sec, bm, pal, m, gen):
    """op=generate: new tokens per second, a bar per kernel, shape and thread count."""
    gen = sorted(gen, key=lambda r: (r.label, r.threads, anchors_last(r.kernel)))
    fig, axes = new_figure(1, ncols=1, width=10.0, panel_height=0.45 * len(gen) + 1.2)
    ax = axes[0]
    ys = range(len(gen))
    vals = [r.tokens_per_second or 0.0 for r in gen]
    ax.barh(ys, vals, color=[pal(r.kernel) for r in gen], height=0.6)
    for y, r in zip(ys, gen):
        text = (f" {r.tokens_per_second:.0f} tokens/s" if r.tokens_per_second
                else " no tokens_per_second")
        if r.gbps:
            text += f" · {r.gbps:.1f} GB/s"
        if r.pct_read_bw is not None:
            text += f" ({r.pct_read_bw:.0f}% of read bw)"
        ax.text(r.tokens_per_second or 0.0, y, text, va="center", fontsize=7)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{r.kernel} · {r.threads} thr\n{wrap(r.label, 40)}" for r in gen],
                       fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.45 * max(vals + [1.0]))
    ax.set_xlabel("new tokens per second (median)")
    ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"Generation: tokens per second — {m.label}", fontsize=10)
    rows = [[r.kernel, r.label, r.threads, fmt_time(r.median_s), fmt(r.tokens_per_second, ".1f"),
             fmt(r.ms_per_token, ".3g"), fmt(r.gbps, ".1f"), fmt_pct_read(r), read_bw_flags(r)]
            for r in gen]
    notes = ["op=generate: a call processes the prompt, then makes N new tokens one at a "
             "time through the decoder stack; tokens/s is N over the call's median time (the "
             "prompt's time included), ms/token its inverse, GB/s the bytes of the whole call "
             "over its median time."]
    return Figure(f"{sec.key}-generate-{m.id}", m.label, fig, Table(
        ["kernel", "shape", "threads", "median", "tokens/s", "ms/token", "GB/s",
         "% of read bandwidth", "flag"], rows), notes)


# ---- 3. % of peak on BERT-base -----------------------------------------------------------


def is_bert_base(r):
    """B=1, D=768 (H=12 × Dh=64 for SDPA), H=12, F=3072 (encoder), L 128 or
    512, self-attention."""
    s = r.shape
    try:
        d = int(s["D"]) if "D" in s else int(s.get("H", 0)) * int(s.get("Dh", 0))
    except ValueError:
        return False
    return (s.get("B") == "1" and s.get("H") == "12" and d == 768 and "L" in s
            and r.length in BERT_BASE_LENGTHS and (r.op != "encoder" or s.get("F") == "3072"))


def fig_pct_peak_bert(bm, pal):
    sec = Section("pct-peak-bert-base", "% of peak on the BERT-base shapes",
                  "Median GFLOP/s as a percentage of the measured FMA peak of the kernel's own "
                  f"ISA at its thread count (the pct_peak counter; an anchor's — {ANCHOR_NAMES} "
                  "— is against the widest ISA), on the BERT-base shapes: B=1, D=768, H=12 "
                  "(Dh=64), F=3072, L=128 and 512. A bar above 100% (plus the peak's measured error, where the "
                  "file gives it) is hatched in red and explained under the figure.")
    for m, rs in by_machine(bm.results).items():
        pts = [r for r in rs if is_bert_base(r) and r.pct_peak is not None]
        if not pts:
            sec.notes.append(f"{m.label}: no BERT-base shape with a % of peak")
            continue
        threads = sorted({r.threads for r in pts})
        fig, axes = new_figure(len(threads), ncols=1, panel_height=3.4)
        rows = []
        for ax, t in zip(axes, threads):
            here = {(r.op, r.label, r.kernel): r for r in pts if r.threads == t}
            groups = [(r.op, r.label) for r in sorted(here.values(), key=shape_key)]
            groups = sorted(set(groups), key=groups.index)
            kernels = sorted({k for (_, _, k) in here}, key=anchors_last)
            grouped_bars(ax, groups, kernels,
                         lambda g, k: here[g + (k,)].pct_peak if g + (k,) in here else None, pal,
                         flagged=lambda g, k: g + (k,) in here and here[g + (k,)].above_peak)
            ax.set_xticklabels([op + "\n" + " ".join(x for x in label.split("_")
                                                     if x not in BERT_BASE_TOKENS)
                                for op, label in groups], fontsize=8)
            ax.axhline(100, color="dimgrey", lw=1, ls=":")
            ax.set_ylabel("% of peak")
            ax.set_title(f"{t} thread{'s' if t > 1 else ''}", fontsize=10)
            if any(r.above_peak for r in here.values()):
                legend_right(ax, ax.get_legend_handles_labels()[0] + [above_peak_handle(True)])
            else:
                legend_right(ax)
            ax.set_ylim(0, max(105, 1.05 * max(r.pct_peak for r in here.values())))
            rows += [[t, r.op, r.label, r.kernel, fmt_time(r.median_s), fmt(r.gflops, ".1f"),
                      fmt(r.pct_peak, ".1f"), flag_text(r)]
                     for r in sorted(here.values(), key=shape_key)]
        fig.suptitle(f"% of peak, BERT-base shapes — {m.label}", fontsize=10)
        sec.figures.append(Figure(f"{sec.key}-{m.id}", m.label, fig, Table(
            ["threads", "op", "shape", "kernel", "median", "GFLOP/s", "% peak", "flag"], rows),
            above_peak_notes(pts)))
    return sec


# ---- 4. Speedup over each peer -----------------------------------------------------------


def fig_speedup_peers(bm, pal):
    sec = Section("speedup-vs-peers", "Speedup over each peer",
                  "Per peer — " + ", ".join(f"{name} ({k})" for k, name in PEERS.items())
                  + " — the peer's median time divided by each attnbench kernel's (every "
                  "kernel that is not a peer), for the same op, shape and thread count on the "
                  "same machine: above 1 (the black line), attnbench's kernel is faster. "
                  f"{ANCHOR_NAMES} are external anchors (reports/pytorch_anchor.py, "
                  "reports/ort_anchor.py); "
                  + " and ".join(name for k, name in PEERS.items() if k not in ANCHORS)
                  + " are attnbench kernels backed by those libraries. One figure per peer and machine, one panel per op; "
                  "logarithmic axis.")
    for m, rs in by_machine(bm.results).items():
        present = [k for k in PEERS if any(r.kernel == k for r in rs)]
        if not present:
            sec.notes.append(f"{m.label}: no peer results ({', '.join(PEERS.values())})")
        for peer in present:
            fig = speedup_figure(sec, pal, m, rs, peer)
            if fig:
                sec.figures.append(fig)
            else:
                sec.notes.append(f"{m.label}: no attnbench result on {PEERS[peer]}'s shapes "
                                 "and thread counts")
    return sec


def speedup_figure(sec, pal, m, rs, peer):
    """The Figure of attnbench's kernels over one peer on machine m, or None
    when no kernel of attnbench shares a shape and thread count with it."""
    name = PEERS[peer]
    theirs = {(r.op, r.label, r.threads): r for r in rs if r.kernel == peer}
    # Peers are never drawn over each other: the figure answers how attnbench's
    # own kernels compare, and oneDNN over PyTorch is not that.
    pairs = [(r, theirs[(r.op, r.label, r.threads)]) for r in rs
             if r.kernel not in PEERS and (r.op, r.label, r.threads) in theirs]
    if not pairs:
        return None
    ratio_label = f"{name} time / kernel time"
    ops = sorted({r.op for r, _ in pairs}, key=lambda o: OP_ORDER.get(o, 9))
    # Wide enough for the tick labels of the panel with the most shapes
    # (decode suites have 16 and more), which otherwise run into each other.
    most = max(len({(r.op, r.label, r.threads) for r, _ in pairs if r.op == op}) for op in ops)
    fig, axes = new_figure(len(ops), ncols=1, width=max(11.0, 1.05 * most + 2),
                           panel_height=3.4)
    for ax, op in zip(axes, ops):
        mine = sorted((r for r, _ in pairs if r.op == op),
                      key=lambda r: (r.threads, shape_key(r)))
        here = {(r.label, r.threads, r.kernel): p.median_s / r.median_s
                for r, p in pairs if r.op == op}
        groups = sorted({(r.label, r.threads) for r in mine},
                        key=[(r.label, r.threads) for r in mine].index)
        kernels = sorted({k for _, _, k in here})
        grouped_bars(ax, groups, kernels, lambda g, k: here.get(g + (k,)), pal, log=True)
        ax.set_xticklabels([f"{wrap(lab)}\n{t} thr" for lab, t in groups], fontsize=7)
        ax.axhline(1, color="black", lw=1)
        ax.set_ylabel(ratio_label)
        ax.set_title(f"{op}: over {name} (above 1: attnbench faster)", fontsize=10)
        legend_right(ax)
    rows = [[r.op, r.label, r.threads, r.kernel, name, fmt_time(r.median_s),
             fmt_time(p.median_s), fmt(p.median_s / r.median_s, ".2f")]
            for r, p in sorted(pairs, key=lambda rp: shape_key(rp[0]))]
    fig.suptitle(f"Speedup over {name} — {m.label}", fontsize=10)
    kind = ("an external anchor" if peer in ANCHORS
            else "an attnbench kernel backed by that library")
    return Figure(f"{sec.key}-{peer}-{m.id}", m.label, fig, Table(
        ["op", "shape", "threads", "kernel", "peer", "kernel median", "peer median",
         "speedup (peer / kernel)"], rows),
        [f"Over {name} (kernel {peer}, {kind}): {ratio_label}; above 1, attnbench's "
         "kernel is faster."])


# ---- 5. Einsum loop orders ---------------------------------------------------------------


def fig_einsum_spread(bm, pal):
    sec = Section("einsum-spread", "Einsum loop-order spread",
                  "The einsum-* kernels compute the same products in different loop orders. "
                  "Per shape and thread count: each order's GFLOP/s, and the spread between "
                  "the best and the worst (worst time / best time).")
    for m, rs in by_machine(bm.results).items():
        groups = {}
        for r in rs:
            if r.kernel.startswith("einsum-") and r.gflops:
                groups.setdefault((r.op, r.label, r.threads), []).append(r)
        groups = {g: v for g, v in groups.items() if len(v) >= 2}
        if not groups:
            sec.notes.append(f"{m.label}: no shape with two or more einsum loop orders")
            continue
        keys = sorted(groups, key=lambda g: (OP_ORDER.get(g[0], 9), g[2],
                                             groups[g][0].length or 0, g[1]))
        fig, axes = new_figure(1, ncols=1, width=max(8.0, 0.8 * len(keys) + 3), panel_height=4.4)
        ax, rows = axes[0], []
        for x, g in enumerate(keys):
            v = sorted(groups[g], key=lambda r: r.median_s)
            best, worst = v[0], v[-1]
            ax.vlines(x, worst.gflops, best.gflops, color="lightgrey", lw=6, zorder=1)
            for r in v:
                ax.scatter(x, r.gflops, color=pal(r.kernel), s=30, zorder=3)
            ratio = worst.median_s / best.median_s
            ax.annotate(f"×{ratio:.2f}" if ratio < 10 else f"×{ratio:.0f}", (x, best.gflops),
                        textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
            rows.append([g[0], g[1], g[2], best.kernel, fmt_time(best.median_s), worst.kernel,
                         fmt_time(worst.median_s), fmt(ratio, ".2f"),
                         ", ".join(f"{r.kernel} {r.gflops:.1f}" for r in v)])
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([f"{op}\n{wrap(lab, 12)}\n{t} thr" for op, lab, t in keys],
                           fontsize=7)
        log_scale(ax)
        ax.set_ylabel("GFLOP/s (median)")
        ax.grid(axis="y", alpha=0.3)
        kernels = sorted({r.kernel for v in groups.values() for r in v})
        legend_right(ax, [Line2D([], [], color=pal(k), marker="o", ls="", label=k)
                          for k in kernels])
        fig.suptitle(f"Einsum loop orders, best vs worst — {m.label}", fontsize=10)
        sec.figures.append(Figure(f"{sec.key}-{m.id}", m.label, fig, Table(
            ["op", "shape", "threads", "best", "best median", "worst", "worst median",
             "worst / best", "GFLOP/s of each"], rows)))
    return sec


# ---- 6. Thread scaling -------------------------------------------------------------------


def scaling_pairs(bm, machine):
    """{(kernel, op, shape label, n): (1-thread result, n-thread result)}.
    Both from one file where a file has both (the newest such): one run
    shares its conditions, so the ratio is not run-to-run drift; else the
    newest of each, from two files (the table names them)."""
    pairs = {}
    files = sorted((b for b in bm.files if b.machine is machine), key=lambda b: b.sort_key,
                   reverse=True)
    for rs in [bf.results for bf in files] + [[r for r in bm.results if r.machine is machine]]:
        one = {(r.kernel, r.op, r.label): r for r in rs if r.threads == 1}
        for r in rs:
            k = (r.kernel, r.op, r.label)
            if r.threads > 1 and k in one:
                pairs.setdefault(k + (r.threads,), (one[k], r))
    return pairs


def fig_thread_scaling(bm, pal):
    sec = Section("thread-scaling", "Thread scaling",
                  "Speedup of each kernel at n threads over its own 1-thread time on the same "
                  "shape (1-thread median / n-thread median), both from one run where one "
                  "run has both; the dotted line is perfect scaling (n). One panel per op and "
                  "thread count.")
    for m in by_machine(bm.results):
        pairs = sorted(scaling_pairs(bm, m).values(), key=lambda p: shape_key(p[1]))
        if not pairs:
            sec.notes.append(f"{m.label}: no kernel measured at 1 and more threads on one shape")
            continue
        panels = sorted({(OP_ORDER.get(r.op, 9), r.op, r.threads) for _, r in pairs})
        fig, axes = new_figure(len(panels), ncols=1, panel_height=3.2)
        for ax, (_, op, n) in zip(axes, panels):
            here = {(r.label, r.kernel): a.median_s / r.median_s
                    for a, r in pairs if r.op == op and r.threads == n}
            labels = [r.label for _, r in pairs if r.op == op and r.threads == n]
            labels = sorted(set(labels), key=labels.index)
            kernels = sorted({k for _, k in here})
            grouped_bars(ax, labels, kernels, lambda lab, k: here.get((lab, k)), pal)
            ax.set_xticklabels([wrap(lab, 40) for lab in labels], fontsize=7)
            ax.axhline(n, color="dimgrey", ls=":", lw=1)
            ax.axhline(1, color="black", lw=0.8)
            ax.set_ylabel(f"speedup at {n} threads")
            ax.set_title(f"{op}, {n} threads vs 1", fontsize=10)
            legend_right(ax)
            ax.set_ylim(0, n * 1.15)
        rows = [[r.op, r.label, r.kernel, r.threads, fmt_time(a.median_s), fmt_time(r.median_s),
                 fmt(a.median_s / r.median_s, ".2f"),
                 fmt(100 * a.median_s / r.median_s / r.threads, ".0f"),
                 a.source.path.name if a.source is r.source
                 else f"{a.source.path.name} / {r.source.path.name}"] for a, r in pairs]
        fig.suptitle(f"Thread scaling — {m.label}", fontsize=10)
        sec.figures.append(Figure(f"{sec.key}-{m.id}", m.label, fig, Table(
            ["op", "shape", "kernel", "threads", "1-thread median", "median", "speedup",
             "efficiency %", "file(s)"], rows)))
    return sec


# ---- 7. Tuned vs default -----------------------------------------------------------------


def fig_tuned_vs_default(wisdom, machines, pal):
    """wisdom: [(path, records)]. A wisdom machine is named after the
    benchmark machine whose hardware key starts its key (the wisdom key adds
    the attnbench version and build flags)."""
    sec = Section("tuned-vs-default", "Tuned vs default choice",
                  "From the tuner's wisdom: per bucket (op, length rounded to a power of two, "
                  "head size, mask, threads), the default choice's time divided by the tuned "
                  "choice's, as `attnbench tune` measured them: above 1, tuning paid off.")
    if not wisdom:
        sec.notes.append("no usable wisdom file (none given or found, or it did not parse: "
                         "see the notes above)")
        return sec
    per_machine = {}
    for path, records in wisdom:
        for rec in records:
            per_machine.setdefault(rec.machine_hash, []).append((path, rec))
    for h, recs in per_machine.items():
        key = recs[0][1].machine_key
        m = next((m for m in machines if m.key and key.startswith(m.key + " ")), None)
        label = (f"{m.label} · wisdom build {key[len(m.key) + 1:]}" if m
                 else f"wisdom machine {h} ({key})")
        usable = [(p, r) for p, r in recs if r.time_ns > 0 and r.default_time_ns > 0]
        if len(usable) < len(recs):
            sec.notes.append(f"{label}: {len(recs) - len(usable)} record(s) without both times "
                             "left out")
        if not usable:
            continue
        usable.sort(key=lambda pr: (OP_ORDER.get(pr[1].op, 9), pr[1].len_log2, pr[1].mask,
                                    pr[1].threads))
        fig, axes = new_figure(1, ncols=1, width=9.0, panel_height=0.32 * len(usable) + 1.2)
        ax = axes[0]
        ys = range(len(usable))
        # Bars start at 1 (no gain): the gains are a few percent, invisible
        # on bars from 0.
        gain = [r.default_time_ns / r.time_ns for _, r in usable]
        ax.barh(ys, [g - 1 for g in gain], left=1, color=[pal(r.kernel) for _, r in usable])
        for y, g in zip(ys, gain):
            ax.text(g, y, f" {100 * (g - 1):+.1f}%", va="center",
                    ha="left" if g >= 1 else "right", fontsize=7)
        ax.set_yticks(ys)
        ax.set_yticklabels([f"{r.bucket} → {r.kernel}" for _, r in usable], fontsize=7)
        ax.invert_yaxis()
        ax.axvline(1, color="black", lw=1)
        span = max(0.05, max(abs(g - 1) for g in gain) * 1.3)
        ax.set_xlim(1 - span, 1 + span)
        ax.set_xlabel("default time / tuned time (1: the tuner kept the default's speed)")
        ax.grid(axis="x", alpha=0.3)
        fig.suptitle(f"Tuned vs default — {label}", fontsize=9)
        rows = [[p.name, r.bucket, r.kernel, r.params, fmt_time(r.time_ns * 1e-9),
                 fmt_time(r.default_time_ns * 1e-9), fmt(r.default_time_ns / r.time_ns, ".3f"),
                 fmt(r.max_err, ".3g"), r.level, r.when] for p, r in usable]
        sec.figures.append(Figure(f"{sec.key}-{h}", label, fig, Table(
            ["wisdom file", "bucket", "kernel", "params", "tuned", "default", "default / tuned",
             "max error", "level", "tuned at"], rows)))
    return sec


# ---- 8. Counters -------------------------------------------------------------------------


def is_clock(name):
    """perf's task-clock and cpu-clock count nanoseconds: comparable with real time."""
    return "TASK-CLOCK" in name.upper() or "CPU-CLOCK" in name.upper()


def fig_counters(bm, pal):
    sec = Section("counters", "Hardware and software counters",
                  "Each PAPI/perf event per iteration (its median over the repetitions) "
                  "against the median real time per iteration. A clock event "
                  "(perf::TASK-CLOCK) is CPU time in ns: the dotted lines are n threads busy "
                  "all the time, so a point below its thread count's line waited. Events "
                  "that are zero everywhere are listed instead of drawn.")
    for m, rs in by_machine(bm.results).items():
        names = sorted({c for r in rs for c in r.counters})
        if not names:
            sec.notes.append(f"{m.label}: no counters (attnbench run --counters LIST)")
            continue
        drawn = [c for c in names if any(r.counters.get(c) for r in rs)]
        zero = [c for c in names if c not in drawn]
        notes = [f"{', '.join(zero)}: zero in every benchmark"] if zero else []
        if not drawn:
            sec.notes.append(f"{m.label}: " + notes[0])
            continue
        fig, axes = new_figure(len(drawn), ncols=2, width=11.0, panel_height=4.0)
        threads = sorted({r.threads for r in rs})
        tcolor = {t: f"C{i}" for i, t in enumerate(threads)}
        for ax, c in zip(axes, drawn):
            pts = [r for r in rs if r.counters.get(c) is not None]
            clock = is_clock(c)
            for r in pts:
                ax.scatter(r.median_s * 1e3, r.counters[c] / (1e6 if clock else 1),
                           color=tcolor[r.threads], marker=OP_MARKER.get(r.op, "x"), s=18)
            if clock:
                xx = np.geomspace(min(r.median_s for r in pts) * 1e3,
                                  max(r.median_s for r in pts) * 1e3, 20)
                for t in threads:
                    ax.plot(xx, xx * t, color=tcolor[t], ls=":", lw=1)
            log_scale(ax, "x")
            if all(r.counters[c] > 0 for r in pts):
                log_scale(ax)
            else:
                ax.set_yscale("symlog")         # zeros too
            ax.set_xlabel("real time per iteration (ms)")
            ax.set_ylabel(f"{c} per iteration" + (" (ms)" if clock else ""))
            ax.set_title(c, fontsize=10)
            ax.grid(alpha=0.3, which="both")
            ax.legend(handles=[Line2D([], [], color=tcolor[t], marker="o", ls="",
                                      label=f"{t} thread{'s' if t > 1 else ''}") for t in threads]
                      + [Line2D([], [], color="black", markerfacecolor="none",
                                marker=OP_MARKER.get(o, "x"), ls="", label=o)
                         for o in sorted({r.op for r in pts}, key=lambda o: OP_ORDER.get(o, 9))],
                      fontsize=7, loc="upper left")
        clocks = [c for c in drawn if is_clock(c)]
        rows = [[r.run_name, fmt_time(r.median_s)] + [fmt(r.counters.get(c), ".4g") for c in names]
                + [fmt(r.counters[c] * 1e-9 / r.median_s, ".2f") if r.counters.get(c) else "-"
                   for c in clocks] for r in sorted(rs, key=shape_key)]
        fig.suptitle(f"Counters — {m.label}", fontsize=10)
        sec.figures.append(Figure(f"{sec.key}-{m.id}", m.label, fig, Table(
            ["benchmark", "median"] + names + [f"{c} / real time" for c in clocks], rows), notes))
    return sec


# ---- 9. Noise ----------------------------------------------------------------------------


def fig_noise(bm, pal):
    sec = Section("noise", "Noise: coefficient of variation",
                  "The CV (standard deviation / mean of the repetitions' real times) of every "
                  "benchmark, grouped by kernel; red crosses are flagged unstable by the run: "
                  "in newer files, the median's 95% interval was still wider than ±precision "
                  "(default 3%, the table's “median ±”) when sampling stopped; in older ones, "
                  "CV > 5% (the dashed line). Their medians are less trustworthy.")
    for m, rs in by_machine(bm.results).items():
        pts = [r for r in rs if r.cv is not None]
        if not pts:
            sec.notes.append(f"{m.label}: no benchmark with two or more repetitions")
            continue
        kernels = sorted({r.kernel for r in pts})
        fig, axes = new_figure(1, ncols=1, width=max(7.0, 0.8 * len(kernels) + 2),
                               panel_height=3.8)
        ax = axes[0]
        for r in pts:
            k = kernels.index(r.kernel)
            # A spread within the kernel's column, fixed by the name (not
            # random), so that the same data draws the same figure.
            jitter = (zlib.crc32(r.run_name.encode()) % 1000 / 1000 - 0.5) * 0.5
            ax.scatter(k + jitter, 100 * r.cv, color="red" if r.unstable else pal(r.kernel),
                       marker="x" if r.unstable else "o", s=22)
        ax.axhline(5, color="dimgrey", ls="--", lw=1)
        ax.set_xticks(range(len(kernels)))
        ax.set_xticklabels(kernels, fontsize=7, rotation=30, ha="right")
        ax.set_ylabel("CV of real time (%)")
        ax.set_ylim(bottom=0)
        ax.grid(axis="y", alpha=0.3)
        n_bad = sum(r.unstable for r in pts)
        ax.set_title(f"{n_bad} of {len(pts)} benchmarks unstable", fontsize=10)
        fig.suptitle(f"Noise — {m.label}", fontsize=10)
        rows = [[r.run_name, r.reps, fmt_time(r.median_s), fmt(100 * r.cv, ".2f"),
                 fmt(100 * r.precision if r.precision is not None else None, ".2f"),
                 "UNSTABLE" if r.unstable else ""]
                for r in sorted(pts, key=lambda r: (-r.cv, r.run_name))]
        sec.figures.append(Figure(f"{sec.key}-{m.id}", m.label, fig, Table(
            ["benchmark", "repetitions", "median", "CV %", "median ± % (95%)", "flag"], rows)))
    return sec


# ---- 10. History -------------------------------------------------------------------------


def history_label(machine_id, key, machines):
    """The history's machine by the label the benchmark files give it, else
    by its key (history.c keys a file without machine_key by "host=NAME")."""
    m = next((m for m in machines if m.id == machine_id), None)
    if m:
        return m.label
    if key.startswith("host="):
        return f"host {key[5:]} (no machine_key; history id {machine_id})"
    return f"machine {machine_id} ({key})"


def fig_history(history, machines, pal):
    sec = Section("history", "History over commits",
                  "From the results history (attnbench history add): every series (one "
                  "benchmark on one machine) with two or more runs, its median relative to "
                  "its first run, runs in date order. Series with a step (found by attnbench's "
                  "piecewise-constant fit, table steps) are drawn bold and named, the step "
                  "circled and marked with its commit; the others are thin lines in their "
                  "kernel's colour.")
    if history is None:
        sec.notes.append("no usable history database (none given or found: --history FILE or "
                         "URL, $ATTN_HISTORY_DB or results/history.db; or it could not be read: "
                         "see the notes above)")
        return sec
    by_machine_id = {}
    for (mid, name), pts in history.series.items():
        pts = [(rid, med) for rid, med in pts if med > 0]     # relative to the first
        if len(pts) >= 2:
            by_machine_id.setdefault(mid, {})[name] = pts
    if not by_machine_id:
        sec.notes.append(f"{history.path}: no series has two or more runs")
        return sec
    for mid, series in sorted(by_machine_id.items()):
        runs = sorted((r for r in history.runs.values() if r["machine_id"] == mid),
                      key=lambda r: (r["date"], r["id"]))
        x_of = {r["id"]: i for i, r in enumerate(runs)}
        label = history_label(mid, runs[0]["machine_key"], machines)
        steps = [s for s in history.steps if s["machine_id"] == mid]
        ops = sorted({n.split("/")[0] for n in series}, key=lambda o: OP_ORDER.get(o, 9))
        fig, axes = new_figure(len(ops), ncols=1, width=11.0, panel_height=3.6)
        rows = []
        for ax, op in zip(axes, ops):
            kernels = set()         # of the thin lines: the legend names their colours
            for name, pts in sorted(series.items()):
                if name.split("/")[0] != op:
                    continue
                mine = [s for s in steps if s["name"] == name]
                xs = [x_of[rid] for rid, _ in pts]
                ys = [med / pts[0][1] for _, med in pts]
                kernel = name.split("/")[1] if name.count("/") >= 1 else ""
                if mine:
                    ax.plot(xs, ys, marker="o", ms=3, lw=1.6, color=pal(kernel), label=name,
                            zorder=3)
                    for s in mine:
                        ax.scatter(x_of.get(s["run_id"], 0), s["after_s"] / pts[0][1], s=80,
                                   facecolors="none", edgecolors="red", zorder=4)
                else:
                    ax.plot(xs, ys, lw=0.6, alpha=0.5, color=pal(kernel), zorder=1)
                    kernels.add(kernel)
                rows.append([name, len(pts), fmt_time(pts[0][1]), fmt_time(pts[-1][1]),
                             fmt(100 * (pts[-1][1] / pts[0][1] - 1), "+.1f"),
                             "; ".join(f"{s['git_commit']} ({s['date']}): "
                                       f"{fmt_time(s['before_s'])} → {fmt_time(s['after_s'])}"
                                       for s in mine)])
            # One mark per run where any series of the panel stepped.
            for rid in sorted({s["run_id"] for s in steps
                               if s["name"].split("/")[0] == op and s["run_id"] in x_of}):
                ax.axvline(x_of[rid] - 0.5, color="red", ls=":", lw=0.8)
                ax.text(x_of[rid] - 0.5, 1.0, f" step at {history.runs[rid]['git_commit'][:12]}",
                        transform=ax.get_xaxis_transform(), rotation=90, va="top",
                        fontsize=6, color="red")
            ax.set_xticks(range(len(runs)))
            every = max(1, len(runs) // 20)
            ax.set_xticklabels([f"{r['git_commit'][:12]}\n{r['date'][:10]}" if i % every == 0
                                else "" for i, r in enumerate(runs)], fontsize=6)
            ax.set_ylabel("median / first run's")
            ax.axhline(1, color="black", lw=0.6)
            ax.set_title(op, fontsize=10)
            ax.grid(alpha=0.3)
            legend_right(ax, ax.get_legend_handles_labels()[0]
                         + [Line2D([], [], color=pal(k), lw=0.6, label=f"{k} (no step)")
                            for k in sorted(kernels)], fontsize=6)
        fig.suptitle(f"History — {label}", fontsize=10)
        sec.figures.append(Figure(f"{sec.key}-{mid}", label, fig, Table(
            ["series", "runs", "first median", "latest median", "change %", "steps"], rows)))
    return sec


def all_sections(bm, wisdom, history):
    """The answer, then the eleven figures, in the page's order."""
    pal = Palette([r.kernel for r in bm.results]
                  + [rec.kernel for _, recs in wisdom for rec in recs]
                  + ([n.split("/")[1] for (_, n) in history.series if n.count("/") >= 1]
                     if history else []))
    for make in (fig_answer, fig_gflops_vs_length, fig_roofline, fig_decode_bandwidth,
                 fig_pct_peak_bert, fig_speedup_peers, fig_einsum_spread, fig_thread_scaling):
        yield no_results_note(make(bm, pal), bm)
    yield fig_tuned_vs_default(wisdom, bm.machines, pal)
    yield no_results_note(fig_counters(bm, pal), bm)
    yield no_results_note(fig_noise(bm, pal), bm)
    yield fig_history(history, bm.machines, pal)


def no_results_note(sec, bm):
    """The figures from benchmark files say why they are missing even when
    no machine had a result to leave a note of its own."""
    if not bm.results:
        sec.notes.append("no attnbench benchmark in the inputs (see the notes above)")
    return sec
