"""report_data.py — the inputs of reports/report.py, read into plain objects.

Three kinds of input, each optional and each read defensively (a file that
cannot be used is named on stderr and skipped; the report never crashes on
one):

  * benchmark JSON in Google Benchmark's schema, as `attnbench run --json`
    (harness/store/report.c), reports/pytorch_anchor.py and reports/ort_anchor.py
    (the anchors: ANCHORS) write it, with, from
    newer attnbench, its "summary" (the best kernel per op, shape and thread
    count: BenchFile.summary), the read-only bandwidth and the peaks' errors
    (Peaks.read, Peaks.error, Result.peak_error); a failed benchmark
    (error_occurred) is listed in BenchFile.failed, never read as a time;
  * the tuner's wisdom file (kernels/wisdom.c, attn_wisdom_write);
  * the results history, an SQLite file or a PostgreSQL database (a
    postgresql:// URL, read through psycopg2; harness/store/history.h).

Machines are kept apart everywhere: every result carries the Machine it was
measured on, and the figures draw one machine per figure. A file without a
machine key (older attnbench, the PyTorch anchor, other programs) is
attributed to a keyed machine only when exactly one keyed machine of the
inputs has the same host name, CPU and caches, and the page says so.
"""
import datetime
import json
import math
import re
import sqlite3
import statistics
import sys
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path


# What warn() said, for the page's notes.
WARNINGS = []


def warn(msg, page=True):
    """Everything skipped or doubtful goes to stderr; the page repeats it in
    its notes unless it shows it elsewhere (page=False)."""
    if page:
        WARNINGS.append(msg)
    print(f"report: {msg}", file=sys.stderr)


# Fields of a benchmark entry that are not counters (Google Benchmark's own and
# attnbench's, harness/store/report.c); every other numeric field is a counter
# (PAPI/perf events such as perf::TASK-CLOCK, or another program's).
ENTRY_FIELDS = {
    "name", "family_index", "per_family_instance_index", "run_name", "run_type",
    "repetitions", "threads", "repetition_index", "iterations", "real_time", "cpu_time",
    "time_unit", "aggregate_name", "aggregate_unit", "error_occurred", "error_message",
    "label", "GFLOPS", "pct_peak", "flops", "bytes", "arith_intensity", "extra_rss_bytes",
    "unstable", "kernel", "chosen_by", "shape",
    # Newer attnbench: the bandwidth and peak beside each time, and how well
    # the median is known (aggregates).
    "GBps", "pct_read_bw", "read_bw_error", "peak_gflops", "peak_error",
    "median_ci_low", "median_ci_high", "median_precision", "median_ci_rho",
    # op=generate (attnbench and the anchors): the call's rate per new token;
    # op=bert: per sequence (B per call).
    "tokens_per_second", "ms_per_token", "sequences_per_second", "ms_per_sequence",
}
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
UNSTABLE_CV = 0.05          # older harness: CV > 5% is flagged unstable (a file
                            # without the flag is judged so here)

# The peers the report measures attnbench's own kernels against, by kernel
# name, with the name the page gives them: the speedup figure draws every
# other kernel over each peer present. Two kinds:
#   * ANCHORS, external programs writing the same JSON (reports/pytorch_anchor.py,
#     reports/ort_anchor.py): their % of peak is against the ISA their context
#     names (pct_peak_isa), they give no pct_read_bw, and every figure draws
#     them apart from attnbench's kernels (dashed, fixed colours, last);
#   * onednn and openblas: attnbench kernels backed by those libraries
#     (`attnbench run` times them), ordinary kernels everywhere else.
PEERS = {"pytorch": "PyTorch", "onnxruntime": "ONNX Runtime", "onednn": "oneDNN",
         "openblas": "OpenBLAS"}
ANCHORS = ("pytorch", "onnxruntime")


def parse_date(text):
    """A context date (ISO 8601, as report.c's strftime or Google Benchmark
    writes it) as an aware datetime, or None: dates order the files, and a
    file without one sorts first rather than failing."""
    if not isinstance(text, str):
        return None
    for fmt in ("%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d %H:%M:%S%z", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            d = datetime.datetime.strptime(text, fmt)
            return d if d.tzinfo else d.replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            continue
    return None


def number(x):
    """A finite float, or None (JSON null for NaN, strings, booleans)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


def plausible(x, lo=1e-6, hi=1e6):
    """number(x) when it lies in [lo, hi], else None: a ratio, a bandwidth in
    GB/s or a peak in GFLOP/s out of that range is a damaged field, and
    drawing it would overflow the axes."""
    x = number(x)
    return x if x is not None and lo <= x <= hi else None


def parse_shape(text):
    """report.c's canonical shape text "op=sdpa,B=1,L=512,H=12,Dh=64,mask=none"
    as a dict of strings ({} when absent or malformed)."""
    out = {}
    for part in (text or "").split(","):
        k, sep, v = part.partition("=")
        if sep and k:
            out[k.strip()] = v.strip()
    return out


def slug(text):
    """A file-name-safe form of a label (figure and table file names)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


# ---- Machines ----------------------------------------------------------------------------


@dataclass(eq=False)
class Machine:
    """One machine, named by attnbench's machine_id (a hash of the hardware
    key) or, for files without one, by host name and CPU model."""
    id: str                 # machine_id, or "host-<host>-<cpu>" (a slug) when unkeyed
    key: str                # machine_key, or "" when unkeyed
    cpu_model: str
    host: str
    emulated: str = ""
    synthetic: bool = False

    @property
    def label(self):
        """The name figures and tables print: never just a host name, since
        several CI machines may share one."""
        cpu = self.cpu_model or "unknown CPU"
        text = (f"machine {self.id} · {cpu} · host {self.host or '?'}" if self.key
                else f"host {self.host or '?'} · {cpu} (no machine_key)")
        if self.emulated:
            text += f" · EMULATED ({self.emulated})"
        if self.synthetic:
            text += " · SYNTHETIC TEST DATA"
        return text


def fingerprint(ctx):
    """What an unkeyed context shares with a keyed one of the same machine: the
    anchor copies these from an attnbench probe on that machine."""
    return json.dumps([ctx.get(k) for k in ("host_name", "cpu_vendor", "cpu_model",
                                             "isa_usable", "num_cpus", "caches")],
                      sort_keys=True)


# ---- Benchmark files ---------------------------------------------------------------------


@dataclass
class Result:
    """One benchmark (a run name: op/kernel/shape/threads:N) of one file,
    reduced to its median and spread."""
    source: "BenchFile"
    run_name: str
    op: str
    kernel: str
    label: str              # the shape part of the run name, e.g. B1_H12_L512_Dh64
    shape: dict             # the parsed canonical shape text
    threads: int
    median_s: float
    cv: float               # a fraction, None with fewer than two repetitions
    unstable: bool
    reps: int
    flops: float
    bytes: float
    gflops: float
    pct_peak: float
    peak: float             # the peak pct_peak is against (GFLOPS / pct_peak)
    counters: dict          # event name -> median value per iteration
    chosen_by: str
    peak_error: float = None   # relative error of that peak (newer files), else None
    precision: float = None    # the median's 95% interval half-width / median (newer files)
    new_flops: bool = False    # written by an attnbench that counts causal FLOPs over the
                               # visible pairs only (its entries carry peak_error)
    pct_read_bw: float = None  # % of the read-only bandwidth at its thread count (newer
                               # attnbench; None where the call's bytes are under 2× L3)
    read_bw_error: float = None    # relative error of that bandwidth, else None
    tokens_per_second: float = None    # op=generate: new tokens per second, else None
    ms_per_token: float = None
    sequences_per_second: float = None     # op=bert: sequences (B per call) per second, else None
    ms_per_sequence: float = None

    @property
    def gbps(self):
        """GB/s: the bytes a call must move over its median time, or None."""
        return self.bytes / self.median_s / 1e9 if self.bytes else None

    @property
    def machine(self):
        return self.source.machine

    @property
    def length(self):
        """The sequence length (L, or Lq for cross attention), or None."""
        for k in ("L", "Lq"):
            if self.shape.get(k, "").isdigit():
                return int(self.shape[k])
        m = re.search(r"(?:^|_)Lq?(\d+)(?:_|$)", self.label)
        return int(m.group(1)) if m else None

    @property
    def intensity(self):
        return self.flops / self.bytes if self.flops and self.bytes else None

    @property
    def causal(self):
        return self.shape.get("mask") == "causal" or self.label.endswith("_causal")

    @property
    def above_peak(self):
        """More than 100% of the peak beyond the peak's own measured error
        (beyond 100% where the file gives no error): an impossible figure."""
        if self.pct_peak is None:
            return False
        return self.pct_peak > 100.0 * (1.0 + max(0.0, self.peak_error or 0.0))

    @property
    def above_peak_reason(self):
        """Why this row can be above its peak, as far as the file tells."""
        if self.causal and not self.new_flops:
            return ("causal row of an older file: its FLOPs were counted dense (all Lq·Lk "
                    "pairs, about twice the visible ones)")
        return "the peak was measured low (or the FLOP count is wrong)"


@dataclass(eq=False)
class BenchFile:
    """One input file (compared and hashed by identity)."""
    path: Path
    context: dict
    date: datetime.datetime
    order: int                       # position on the command line: ties of date
    machine: Machine = None
    results: list = field(default_factory=list)
    failed: list = field(default_factory=list)    # (run name, error message)
    notes: list = field(default_factory=list)
    summary: list = None     # [Summary] of the file's "summary" array; None: it has none

    @property
    def commit(self):
        return str(self.context.get("git_commit") or "?")

    @property
    def program(self):
        return str(self.context.get("executable") or "?")

    @property
    def sort_key(self):
        """Oldest first; undated files before dated ones, then input order."""
        return (self.date is not None,
                self.date or datetime.datetime.min.replace(tzinfo=datetime.timezone.utc),
                self.order)


def _seconds(entry):
    """The entry's real time in seconds, or None: a time that is not positive
    (as attnbench's loader, bench_file.c, refuses it) is no time at all, and
    a negative one kept as a median reached the figures' logarithms."""
    t, unit = number(entry.get("real_time")), entry.get("time_unit", "ns")
    ok = t is not None and isinstance(unit, str) and unit in TIME_UNITS
    s = t * TIME_UNITS[unit] if ok else None
    return s if s is not None and 0 < s < math.inf else None


def _summarize(bf, run_name, entries):
    """A Result from one run name's entries (iterations and aggregates), or a
    reason string when they are not attnbench's kind of benchmark: its name
    (op/kernel/shape/threads:N) and the kernel and shape fields that
    attnbench and the PyTorch anchor write in every entry. Another
    program's counters (items_per_second...) would otherwise pass for
    hardware events."""
    parts = run_name.split("/")
    if len(parts) != 4 or not re.fullmatch(r"threads:\d+", parts[3]):
        return "not an attnbench benchmark: name is not op/kernel/shape/threads:N"
    if not all(isinstance(e.get("kernel"), str) and isinstance(e.get("shape"), str)
               for e in entries):
        return "not an attnbench benchmark: no kernel and shape fields"
    iters = [e for e in entries if e.get("run_type", "iteration") == "iteration"]
    aggs = {e["aggregate_name"]: e for e in entries
            if e.get("run_type") == "aggregate" and isinstance(e.get("aggregate_name"), str)}
    times = [t for t in map(_seconds, iters) if t]
    median_entry = aggs.get("median")
    median_s = _seconds(median_entry) if median_entry else None
    if median_s is None and times:
        median_s = statistics.median(times)
    if not median_s:
        return "no time"
    # Counters: those of the median aggregate (computed from the median time
    # and the events' medians), else the median over the repetitions.
    ref = median_entry or (iters[len(iters) // 2] if iters else entries[0])
    counters = {}
    for k, v in ref.items():
        if k not in ENTRY_FIELDS and number(v) is not None:
            vals = [number(e.get(k)) for e in iters] if median_entry is None else [number(v)]
            vals = [x for x in vals if x is not None]
            counters[k] = statistics.median(vals)
    cv_entry = aggs.get("cv")
    cv = number(cv_entry.get("real_time")) if cv_entry else None
    if cv is None and len(times) >= 2:
        cv = statistics.stdev(times) / statistics.mean(times)
    unstable = next((e["unstable"] for e in aggs.values() if isinstance(e.get("unstable"), bool)),
                    cv is not None and cv > UNSTABLE_CV)
    flops, nbytes = number(ref.get("flops")), number(ref.get("bytes"))
    gflops = flops / median_s / 1e9 if flops else number(ref.get("GFLOPS"))
    pct = number(ref.get("pct_peak"))
    g_ref = number(ref.get("GFLOPS"))
    peak = plausible(ref.get("peak_gflops"), hi=1e9)      # newer files give it
    if peak is None:
        # Bounded as peak_gflops is: a damaged GFLOPS or pct_peak made an
        # unbounded peak, and the roofline's axis infinite (ValueError).
        peak = plausible(g_ref * 100.0 / pct, hi=1e9) if g_ref and pct else None
    peak_error = number(ref.get("peak_error"))
    read_error = number(ref.get("read_bw_error"))
    precision = number(median_entry.get("median_precision")) if median_entry else None
    shape = parse_shape(ref.get("shape"))
    return Result(source=bf, run_name=run_name, op=shape.get("op", parts[0]),
                  kernel=ref["kernel"], label=parts[2], shape=shape,
                  threads=int(parts[3].split(":")[1]),
                  median_s=median_s, cv=cv, unstable=bool(unstable),
                  reps=len(times) or int(ref.get("repetitions") or 1), flops=flops,
                  bytes=nbytes, gflops=gflops, pct_peak=pct, peak=peak,
                  counters=counters, chosen_by=str(ref.get("chosen_by") or ""),
                  peak_error=peak_error if peak_error is not None and peak_error >= 0 else None,
                  precision=precision if precision is not None and precision >= 0 else None,
                  new_flops="peak_error" in ref,
                  pct_read_bw=plausible(ref.get("pct_read_bw")),
                  read_bw_error=read_error if read_error is not None and read_error >= 0 else None,
                  tokens_per_second=plausible(ref.get("tokens_per_second"), hi=1e12),
                  ms_per_token=plausible(ref.get("ms_per_token"), hi=1e12),
                  sequences_per_second=plausible(ref.get("sequences_per_second"), hi=1e12),
                  ms_per_sequence=plausible(ref.get("ms_per_sequence"), hi=1e12))


@dataclass
class Summary:
    """One row of a file's "summary" (harness/measure/summary.h): on one op, shape
    and thread count, the fastest kernel, the runner-up and the ratio
    runner-up time / best time with its 95% interval."""
    source: "BenchFile"
    op: str
    shape: str              # the benchmark name without the kernel: op/label/threads:N
    threads: int
    best: str
    runner_up: str
    ratio: float            # None where the run could not compute one
    ci_low: float
    ci_high: float
    verdict: str            # "faster" (ci_low > 1) or "tie"
    kernels: int            # how many were compared, None if not given
    paired_rounds: int      # None if not given; 0: compared unpaired
    unstable: bool

    @property
    def label(self):
        """The shape label: the shape without its op and thread count."""
        parts = self.shape.split("/")
        if len(parts) >= 2 and parts[0] == self.op:
            parts = parts[1:]
        if parts and re.fullmatch(r"threads:\d+", parts[-1]):
            parts = parts[:-1]
        return "/".join(parts) or self.shape


def _count(x):
    """A non-negative integer field (bool excluded), or None."""
    return x if isinstance(x, int) and not isinstance(x, bool) and x >= 0 else None


def _summary_row(bf, e):
    """A Summary from one element of the "summary" array, or a reason string."""
    if not isinstance(e, dict):
        return "not an object"
    texts = {k: e.get(k) for k in ("op", "shape", "best", "runner_up")}
    if not all(isinstance(v, str) and v for v in texts.values()):
        return "no op, shape, best or runner_up"
    threads = _count(e.get("threads"))
    if threads is None:
        m = re.search(r"/threads:(\d+)$", texts["shape"])
        threads = int(m.group(1)) if m else None
    if not threads:
        return "no thread count"
    ratio, lo, hi = (plausible(e.get(k)) for k in ("ratio", "ci_low", "ci_high"))
    verdict = e.get("verdict")
    if verdict not in ("faster", "tie"):
        verdict = "faster" if lo is not None and lo > 1 else "tie"
    return Summary(bf, texts["op"], texts["shape"], threads, texts["best"], texts["runner_up"],
                   ratio, lo, hi, verdict, _count(e.get("kernels")),
                   _count(e.get("paired_rounds")), e.get("unstable") is True)


def read_bench_file(path, order):
    """One benchmark JSON file, or None (reported) when it is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        warn(f"{path}: skipped: {e}")
        return None
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        warn(f"{path}: skipped: not Google Benchmark JSON (no benchmarks array)")
        return None
    ctx = data.get("context") if isinstance(data.get("context"), dict) else {}
    bf = BenchFile(Path(path), ctx, parse_date(ctx.get("date")), order)
    groups = {}
    for e in data["benchmarks"]:
        if not isinstance(e, dict):
            continue
        name = e.get("run_name") or e.get("name")
        if not isinstance(name, str):
            continue
        if e.get("error_occurred"):
            bf.failed.append((name, str(e.get("error_message", ""))))
            continue
        groups.setdefault(name, []).append(e)
    skipped = {}
    for name, entries in groups.items():
        try:
            r = _summarize(bf, name, entries)
        except (TypeError, ValueError, KeyError, AttributeError, ArithmeticError) as e:
            # Fields of the wrong type past the checks above (fuzz/fuzz_report.py
            # finds them): the benchmark is skipped, never the report.
            r = f"malformed entry ({type(e).__name__}: {e})"
        if isinstance(r, Result):
            bf.results.append(r)
        else:
            skipped.setdefault(r, []).append(name)
    for why, names in skipped.items():
        bf.notes.append(f"{len(names)} benchmark(s) skipped ({why}), e.g. {names[0]!r}")
    if "summary" in data:
        bf.summary, bad = [], {}
        rows = data["summary"] if isinstance(data["summary"], list) else [data["summary"]]
        for e in rows:
            x = _summary_row(bf, e)
            if isinstance(x, Summary):
                bf.summary.append(x)
            else:
                bad[x] = bad.get(x, 0) + 1
        for why, n in bad.items():
            bf.notes.append(f"{n} summary row(s) skipped ({why})")
    if bf.failed:
        bf.notes.append(f"{len(bf.failed)} benchmark(s) failed in the run, e.g. "
                        f"{bf.failed[0][0]}: {bf.failed[0][1]}")
    for n in bf.notes:
        warn(f"{path}: {n}", page=False)        # the page's table of inputs has them
    return bf


# ---- Peaks: the ceilings of figures 1 and 2 ----------------------------------------------


class Peaks:
    """Measured peaks per machine and thread count.

    A context holds the FMA peak of each ISA and the triad bandwidth at its
    own thread count only (context.threads, the run's maximum); a file run
    at "1,2" threads has no 1-thread peaks in its context. But every result
    carries GFLOPS and pct_peak, whose ratio is the peak of the kernel's ISA
    at the result's thread count. Where a result ran at the context's thread
    count, that ratio names the kernel's ISA (it equals one of the context's
    peaks); the kernel's results at other thread counts then give that ISA's
    peak there. An anchor (PyTorch, ONNX Runtime) names its ISA
    (context.pct_peak_isa)."""

    def __init__(self, files):
        self.gflops = {}      # (machine id, threads) -> {isa: GFLOP/s}
        self.triad = {}       # (machine id, threads) -> GB/s
        self.read = {}        # (machine id, threads) -> read-only GB/s (newer files)
        self.error = {}       # (machine id, threads) -> {isa: relative error of its peak}
        self.derived = set()  # (machine id, threads, isa) known only from pct_peak
        isa_of = {}           # (machine id, kernel) -> isa
        for bf in sorted(files, key=lambda b: b.sort_key):     # newest wins
            ctx, mid = bf.context, bf.machine.id
            t = ctx.get("threads")
            peaks = ctx.get("peak_gflops") if isinstance(ctx.get("peak_gflops"), dict) else {}
            if isinstance(t, int) and peaks:
                self.gflops[(mid, t)] = {k: v for k, v in peaks.items() if number(v)}
                if plausible(ctx.get("triad_gbs")):
                    self.triad[(mid, t)] = ctx["triad_gbs"]
                if plausible(ctx.get("read_gbs")):
                    self.read[(mid, t)] = ctx["read_gbs"]
                errors = ctx.get("peak_error")
                if isinstance(errors, dict):
                    self.error[(mid, t)] = {k: number(v) for k, v in errors.items()
                                            if number(v) is not None and number(v) >= 0}
            for r in bf.results:
                if isinstance(ctx.get("pct_peak_isa"), str) and r.kernel in ANCHORS:
                    isa_of[(mid, r.kernel)] = ctx["pct_peak_isa"]
                elif r.peak and r.threads == t:
                    for isa, g in peaks.items():
                        if number(g) and abs(r.peak / g - 1) < 2e-3:
                            isa_of[(mid, r.kernel)] = isa
        for bf in sorted(files, key=lambda b: b.sort_key, reverse=True):
            for r in bf.results:
                isa = isa_of.get((r.machine.id, r.kernel))
                known = self.gflops.setdefault((r.machine.id, r.threads), {})
                if isa and r.peak and isa not in known:
                    known[isa] = r.peak
                    self.derived.add((r.machine.id, r.threads, isa))

    def at(self, machine_id, threads):
        """{isa: GFLOP/s} at that thread count, possibly empty."""
        return self.gflops.get((machine_id, threads), {})

    def derived_at(self, machine_id, threads):
        """The ISAs whose peak at that thread count comes from pct_peak."""
        return {isa for (m, t, isa) in self.derived if m == machine_id and t == threads}

    def triad_at(self, machine_id, threads):
        """(GB/s, the thread count it was measured at): the nearest measured
        count, as attnbench's own peak lookup does; (None, None) if none."""
        return self._nearest(self.triad, machine_id, threads)

    def read_at(self, machine_id, threads):
        """The read-only bandwidth, as triad_at; (None, None) where no file
        of the machine has one (older attnbench)."""
        return self._nearest(self.read, machine_id, threads)

    @staticmethod
    def _nearest(table, machine_id, threads):
        counts = [t for (m, t) in table if m == machine_id]
        if not counts:
            return None, None
        t = min(counts, key=lambda c: (abs(c - threads), c))
        return table[(machine_id, t)], t


# ---- All benchmark inputs ----------------------------------------------------------------


@dataclass
class Benchmarks:
    files: list
    machines: list          # distinct Machines, in first-seen order
    results: list           # one Result per (machine, run name): the newest file's
    peaks: Peaks
    notes: list             # page notes: attributions, superseded duplicates


def _assign_machines(files, notes):
    """Sets every file's Machine (see the module docstring)."""
    keyed, by_print = {}, {}
    for bf in files:
        c = bf.context
        if c.get("machine_id") and c.get("machine_key"):
            mid = str(c["machine_id"])
            if mid not in keyed:
                keyed[mid] = Machine(mid, str(c["machine_key"]), str(c.get("cpu_model") or ""),
                                     str(c.get("host_name") or ""), str(c.get("emulated") or ""),
                                     c.get("synthetic") is True)
            bf.machine = keyed[mid]
            by_print.setdefault(fingerprint(c), set()).add(mid)
    unkeyed = {}
    for bf in files:
        if bf.machine:
            continue
        c = bf.context
        owners = by_print.get(fingerprint(c), set())
        if len(owners) == 1:
            bf.machine = keyed[next(iter(owners))]
            notes.append(f"{bf.path.name} has no machine_key: attributed to {bf.machine.label}, "
                         "the only machine of the inputs with its host name, CPU model, ISA "
                         "and caches")
            continue
        host, cpu = str(c.get("host_name") or ""), str(c.get("cpu_model") or "")
        uid = "host-" + slug(f"{host}-{cpu}")
        if uid not in unkeyed:
            unkeyed[uid] = Machine(uid, "", cpu, host, str(c.get("emulated") or ""),
                                   c.get("synthetic") is True)
        bf.machine = unkeyed[uid]
        why = (f"{len(owners)} keyed machines match it" if owners
               else "no keyed machine of the inputs matches it")
        notes.append(f"{bf.path.name} has no machine_key ({why}): its machine is labelled "
                     f"by host name and CPU model: {bf.machine.label}")
    seen = []
    for bf in files:
        if bf.machine not in seen:
            seen.append(bf.machine)
    return seen


def load_benchmarks(paths):
    """Reads the files; keeps, per machine and run name, the newest file's
    result (by context date), since the figures show one value per benchmark;
    older duplicates are listed on the page."""
    files = [bf for i, p in enumerate(paths) if (bf := read_bench_file(p, i))]
    notes = []
    machines = _assign_machines(files, notes)
    newest, superseded = {}, {}
    for bf in sorted(files, key=lambda b: b.sort_key):
        for r in bf.results:
            k = (r.machine.id, r.run_name)
            if k in newest:
                superseded.setdefault((bf, newest[k].source), []).append(r.run_name)
            newest[k] = r
    for (new, old), names in superseded.items():
        notes.append(f"{new.path.name} ({new.context.get('date')}) supersedes {old.path.name} "
                     f"({old.context.get('date')}) for {len(names)} benchmark(s) measured in "
                     f"both, e.g. {names[0]}")
    return Benchmarks(files, machines, list(newest.values()), Peaks(files), notes)


# ---- Wisdom ------------------------------------------------------------------------------


WISDOM_SCHEMA = 1


@dataclass
class WisdomRecord:
    machine_hash: str
    machine_key: str
    op: str
    len_log2: int
    head_dim: int
    mask: str
    threads: int
    kernel: str
    params: str
    time_ns: float
    default_time_ns: float
    max_err: float
    level: str
    when: str

    @property
    def bucket(self):
        return (f"{self.op} L≈{1 << self.len_log2} Dh={self.head_dim} {self.mask} "
                f"{self.threads} thr")


def read_wisdom(path):
    """The records of a wisdom file, as attn_wisdom_parse accepts them (header
    "attnbench-wisdom 1", machine lines before their records, 13 fields a
    record); None (reported) for a file that does not parse, as attnbench
    itself would refuse it."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        warn(f"wisdom {path}: skipped: {e}")
        return None
    header, machines, records = False, {}, []
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        if not header:
            if len(f) != 2 or f[0] != "attnbench-wisdom" or f[1] != str(WISDOM_SCHEMA):
                warn(f"wisdom {path}: skipped: line {n}: not an attnbench wisdom file "
                     f"of schema {WISDOM_SCHEMA}")
                return None
            header = True
        elif f[0] == "machine" and len(f) >= 3:
            machines[f[1]] = line.split(None, 2)[2]
        elif f[0] == "record" and len(f) == 14:
            if f[1] not in machines:
                warn(f"wisdom {path}: skipped: line {n}: record of an undeclared machine")
                return None
            try:
                records.append(WisdomRecord(f[1], machines[f[1]], f[2], int(f[3]), int(f[4]),
                                            f[5], int(f[6]), f[7], f[8], float(f[9]),
                                            float(f[10]), float(f[11]), f[12], f[13]))
            except ValueError:
                warn(f"wisdom {path}: skipped: line {n}: not a valid record")
                return None
        else:
            warn(f"wisdom {path}: skipped: line {n}: not a machine or record line")
            return None
    if not header:
        warn(f"wisdom {path}: skipped: no attnbench-wisdom header")
        return None
    return records


# ---- History -----------------------------------------------------------------------------


HISTORY_SCHEMA = 2

# The password parts of a connection URL: user:PASSWORD@ (up to the last "@"
# before the query, so that a password with an unescaped "@" or "/" is
# hidden whole) and a password=PASSWORD parameter.
PASSWORD_PARTS = (re.compile(r"^([a-z][a-z0-9+.-]*://[^:@/?]*:)([^?]*)(?=@)", re.I),
                  re.compile(r"([?&]password=)([^&#]*)"))


def is_url(target):
    """Whether the history is a PostgreSQL URL rather than an SQLite file."""
    return str(target).startswith(("postgresql://", "postgres://"))


def redact(url):
    """The URL with its password as ***: the history's name goes to stderr
    and onto the page."""
    for part in PASSWORD_PARTS:
        url = part.sub(r"\1***", url)
    return url


def scrub(text, url):
    """A driver's message without the URL's passwords, as written or decoded:
    libpq quotes the malformed part of a URL in its errors (e.g. a bad
    percent-escape), and that part may be the password."""
    for part in PASSWORD_PARTS:
        for m in part.finditer(url):
            for secret in {m.group(2), urllib.parse.unquote(m.group(2))} - {""}:
                text = text.replace(secret, "***")
    return text


@dataclass
class History:
    path: str               # the SQLite file, or the PostgreSQL URL (password redacted)
    runs: dict              # run id -> dict(id, machine_id, machine_key, git_commit, date, source)
    series: dict            # (machine id, name) -> [(run id, median_s)] in date order
    steps: list             # dicts of the steps table


def _rows(cur, sql):
    """The rows of a query as dicts by column name: a DB-API cursor, so one
    code path reads both stores."""
    cur.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def read_history(target):
    """The history database, an SQLite file or a PostgreSQL URL (read-only:
    it is never changed or rebuilt here), or None (reported) when it cannot
    be read or is not of schema HISTORY_SCHEMA. Both stores have the same
    tables (harness/store/history.h)."""
    target = str(target)
    url = is_url(target)
    shown = redact(target) if url else target

    def skip(why):
        # One line: libpq's messages span several.
        warn(f"history {shown}: skipped: {' '.join(scrub(str(why), target).split())}")

    if url:
        try:
            import psycopg2
        except ImportError:
            skip("reading a PostgreSQL history needs python3-psycopg2")
            return None
        error = psycopg2.Error
        # Whether a meta table is on the search path, as the query of it
        # will resolve it.
        has_meta = "SELECT to_regclass('meta') IS NOT NULL AS found"
    else:
        error = sqlite3.Error
        has_meta = ("SELECT count(*) > 0 AS found FROM sqlite_master "
                    "WHERE type = 'table' AND name = 'meta'")
    try:
        if url:
            # libpq waits for an unreachable server for ever unless told.
            timeout = {} if "connect_timeout=" in target else {"connect_timeout": 10}
            db = psycopg2.connect(target, **timeout)
            db.set_session(readonly=True)
        else:
            db = sqlite3.connect(Path(target).resolve().as_uri() + "?mode=ro", uri=True)
    except error as e:
        skip(e)
        return None
    try:
        cur = db.cursor()
        if _rows(cur, has_meta)[0]["found"]:
            found = _rows(cur, "SELECT value FROM meta WHERE name = 'schema'")
            version = found[0]["value"] if found else "none"
        elif url:
            version = "none (no meta table)"
        else:
            # Schema 1 (SQLite only) kept its version in user_version alone.
            version = _rows(cur, "PRAGMA user_version")[0]["user_version"]
        if str(version) != str(HISTORY_SCHEMA):
            skip(f"schema version {version}, this report reads {HISTORY_SCHEMA}")
            return None
        runs = {r["id"]: r for r in _rows(
            cur, "SELECT id, machine_id, machine_key, git_commit, date, source FROM runs")}
        # Ordered here rather than by ORDER BY: PostgreSQL compares TEXT by the
        # database's collation, SQLite byte by byte; Python's order is the one
        # fig_history sorts the runs by, whatever the store.
        series = {}
        for r in sorted(_rows(cur, "SELECT x.run_id, x.name, x.median_s, r.machine_id, r.date "
                                   "FROM results x JOIN runs r ON r.id = x.run_id"),
                        key=lambda r: (r["date"], r["run_id"])):
            series.setdefault((r["machine_id"], r["name"]), []).append((r["run_id"], r["median_s"]))
        steps = sorted(_rows(cur, "SELECT machine_id, name, run_id, git_commit, date, before_s, "
                                  "after_s FROM steps"),
                       key=lambda s: (s["machine_id"], s["name"], s["date"]))
    except error as e:
        skip(e)
        return None
    finally:
        db.close()
    return History(shown, runs, series, steps)
