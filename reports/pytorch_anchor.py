#!/usr/bin/python3
"""pytorch_anchor.py — PyTorch 1.13 timed on attnbench's shapes, written as
attnbench's JSON, so both can be compared and merged by the same tools.

    /usr/bin/python3 reports/pytorch_anchor.py [--suite NAME | --shape SHAPES ...] [--op OP]
        [--threads N[,N2..]] [--repetitions R] [--min-time S] [--max-call-time S]
        [--memory] [--json FILE] [--attnbench PATH]
    /usr/bin/python3 reports/pytorch_anchor.py --self-test

Run it with Debian's /usr/bin/python3 (python3-torch); stdlib + torch only.
Example:

    /usr/bin/python3 reports/pytorch_anchor.py --suite anchors --threads 1 --memory \\
        --json results/anchors-pytorch.json

Shapes are the attnbench binary's (--attnbench PATH, default build/attnbench:
build it first, make), for --shape as for --suite. `--suite NAME` (default:
default) takes the suite's shapes; `--shape SHAPES` (repeatable, ';' separates
several; --op the default op of each) takes attnbench's syntax,
e.g. 'op=sdpa,B=1,H=12,L=512,Dh=64,mask=causal',
'op=sdpa,B=1,Lq=1,Lk=4096,H=32,Hkv=8,Dh=128,mask=causal-br',
'op=encoder,B=1,L=128,D=768,H=12,F=3072,norm=pre,act=gelu,mask=padding',
'op=decoder,B=1,L=128,M=512,D=768,H=12,F=3072,norm=post,act=gelu,mask=padding' or
'op=generate,B=1,P=128,N=128,M=128,layers=6,D=512,H=8,F=2048,norm=post,act=relu,mask=none'
(generate: P prompt tokens, N new tokens, `layers` decoder layers, M the memory;
defaults P 128, N 128, layers 1, M = P; no L, Lq, Lk, cross or scale) or
'op=bert,B=1,L=128,layers=12,D=768,H=12,F=3072,norm=post,act=gelu,mask=padding'
(bert: L tokens per sequence, `layers` encoder layers; defaults layers 12, H 12,
post-LN, so 'op=bert,B=1,L=128,mask=padding' is that shape; mask none or padding).
`attnbench list --json` reads them (a shape it refuses: its message, exit
status 2) and gives each its canonical text, label, every key's value, FLOPs
and bytes. The workloads are built from the keys (shape_of); the text, label,
FLOPs and bytes are carried unchanged into the run names
(`<op>/pytorch/<shape label>/threads:<n>`), the "shape" fields and the flops
and bytes counters, so they are attnbench's by construction: this script
parses no shape and counts nothing itself.

Workloads (fp32, torch.no_grad, modules in eval mode):
  sdpa     PyTorch 2 (from 2.0): F.scaled_dot_product_attention(Q, K, V,
           attn_mask=<the additive mask>, scale=) on [B][H][L][Dh] — its fused CPU
           kernels, what its users call (fused_sdpa; `scale` from 2.1, before it
           folded into Q; grouped heads with enable_gqa=True from 2.5, before it
           K and V repeat_interleave'd in the call). --self-test checks every one
           of these forms against the math form below.
           1.13, which has none: the math form, softmax((Q·scale) Kᵀ + mask) V,
           with the additive mask added in place and the scale folded into Q
           (O(L·Dh)), as PyTorch 2's math backend does. Two Lq×Lk tensors are
           alive at the peak. Grouped-query (Hkv < H): K and V are
           [B][Hkv][Lk][Dh] and expanded to H heads inside the timed call,
           k.repeat_interleave(H // Hkv, dim=1) (and v), as a 1.13 user does (no
           broadcasting form); the copies are part of the cost and of --memory's
           extra_rss_bytes. The context's sdpa_form says which form ran. kv=f16|bf16|i8: K and V are
           kept as torch.float16 / torch.bfloat16, or int8 with a scale per row
           of Dh (attnbench's rounding), and dequantized to fp32 inside the timed
           call, as a 1.13 user of such a cache does. op=generate with kv other
           than f32 is not timed (its loop keeps fp32 caches), and says so.
  mha      nn.MultiheadAttention(D, H, batch_first=True), need_weights=False
           (what TransformerEncoderLayer asks for too); self-attention passes one
           tensor as query, key and value so that 1.13's fast path can be taken
           (it is not with an attn_mask or an odd H). A shape's explicit scale is
           folded into the Q projection (same work).
  encoder  nn.TransformerEncoderLayer(D, H, F, dropout=0, activation 'gelu' /
           'relu' / tanh-GELU as a callable (which takes 1.13 off its fast path),
           layer_norm_eps=1e-5, batch_first=True, norm_first=norm=pre).
  decoder  nn.TransformerDecoderLayer(D, H, F, ...) with the encoder's arguments,
           no cache, called as layer(x, memory, tgt_mask=<bool causal [L][L],
           True = masked>, memory_key_padding_mask=<bool [B][M] or None>): causal
           self-attention over the target's L tokens, cross-attention over the
           memory's M (attnbench keeps M in the shape's Lk), the FFN.
  generate a cached decoding loop of torch ops (cached_decoding; what a 1.13 user
           writes: F.linear, view/transpose, torch.matmul, torch.softmax,
           F.layer_norm) through `layers` decoder layers, each with the weights of
           an nn.TransformerDecoderLayer drawn as the decoder's. Inputs x
           [B][P + N][D] (the prompt, then the token fed at each step: teacher-
           forced, as attnbench; outputs are not fed back) and memory [B][M][D].
           Per layer, K and V caches [B][H][P + N][Dh] are allocated once outside
           the call and overwritten by every call. One call, as attnbench's: the
           P prompt tokens through every layer in one pass (each layer projecting
           the memory's K and V once, kept for the steps; self-attention causal
           over the prompt, bottom-right against the cache, then P long); then N
           steps, each feeding x[:, P + t] through every layer: q, k, v by
           F.linear with the fused in_proj, k and v written at position P + t,
           softmax((q·scale) Kᵀ) V over cache[:, :, :P + t + 1], out_proj;
           cross-attention with the Q rows of its in_proj against the kept memory
           K and V (additive −inf memory padding); the FFN; post-LN or pre-LN as
           the layer's, LayerNorm eps 1e-5. Returns the last layer's outputs at
           all P + N positions (torch.cat of the prompt's and the steps').
           JSON counters add tokens_per_second = N / t and ms_per_token =
           1000·t / N (t one whole call, prompt included), as attnbench's.
           --self-test (check_generate) compares the loop with the same weights
           as a stack of nn.TransformerDecoderLayer called on the whole sequence
           (causal tgt_mask, memory_key_padding_mask): max |difference| <= 1e-4.
  bert     BERT end to end as workload.c's op=bert (bert_model): nn.Embedding
           tables token [30522][D], position [max(512, L)][D], token type [2][D];
           x = nn.LayerNorm(D, eps=1e-12)(token(ids) + position(0..L−1) +
           token_type(type_ids)); then nn.TransformerEncoder(nn.TransformerEncoderLayer(
           D, H, F, dropout=0, activation as the encoder's, layer_norm_eps=1e-12,
           batch_first=True, norm_first=norm=pre), num_layers=layers,
           enable_nested_tensor=True), each layer its own weights (drawn as the
           encoder's), no final LayerNorm; eval(), called under torch.inference_mode()
           with src_key_padding_mask (mask=padding; True = ignore). ids uniform over
           the vocabulary, type 0 for the first half of each sequence and 1 after.
           enable_nested_tensor=True is TransformerEncoder's default, what a user
           running it for speed gets: with a padding mask, a post-LN stack with
           GELU or ReLU and an even H (BERT), 1.13 packs the real tokens into a
           nested tensor and the layers skip the padded ones (their outputs are 0;
           attnbench computes those rows, which no one reads). The suites' B=1
           shapes have no padded token (batch 0 pads none), so the work is the
           same; at B=8 the padded tokens are 7/32 of the batch's (ab_shape_flops
           counts them). JSON counters add sequences_per_second = B / t and
           ms_per_sequence = 1000·t / B, as attnbench's. --self-test (check_bert)
           compares the model, on a vocabulary of 50, with a float64
           re-implementation from its parameters (bert_reference) on tiny shapes:
           max |difference| <= 1e-5 on the real tokens, padded rows 0 where the
           nested path is taken; every LayerNorm's eps 1e-12; no two layers with
           the same weights.
Inputs are uniform like harness/ops/workload.c's (x, memory, Q, K, V in [-1, 1);
weights and biases ±1/√D, W_ff2 ±1/√F; LayerNorm γ 1±0.2, β ±0.2), from torch's
generator, not attnbench's splitmix64: same ranges, not the same numbers.
Masks (all of attnbench's kinds; the decoder and generate take none or padding):
  causal   top-left aligned (query i sees keys 0..i); MHA/encoder: a bool
           attn_mask / src_mask (True = masked), SDPA: -inf in the additive mask.
  causal-br  bottom-right aligned (query i sees keys j <= i + Lk − Lq: the last
           Lq positions of Lk, as when decoding), the same tensors from
           ~ones(Lq, Lk).tril(diagonal=Lk − Lq). With Lq > Lk the first Lq − Lk
           rows see no key: PyTorch gives NaN rows there, attnbench zeros
           (timings are unaffected).
  padding  exactly workload.c's pattern: batch b pads its last b·Lk/(2B) keys
           (integer division; so with B=1 nothing is padded, but the mask is
           still passed); MHA/encoder: key_padding_mask (PyTorch: True = ignore);
           decoder: the memory's, its last b·M/(2B) tokens, as
           memory_key_padding_mask; generate: the same tokens, as an additive
           −inf [B][1][1][M] in the cross-attention's scores.
  padall   as padding, and the last batch is all padding (PyTorch gives NaN rows
           there, attnbench zeros; timings are unaffected).
  keep     random keep mask per batch (p = 0.7), bias: random U[-1, 1) additive
           bias per batch; MHA/encoder pass them as a [B·H][Lq][Lk] attn_mask.
  all      causal + padding + one shared keep mask + one shared bias.

Threads. Every benchmark runs in a fresh /usr/bin/python3 subprocess whose
environment has OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS = N
before torch is imported, and which calls torch.set_num_threads(N); like
attnbench, it is bound to the first N cores (one CPU each) and, unless
OMP_PROC_BIND is already set, OpenMP threads are pinned with
OMP_PROC_BIND=close, OMP_PLACES=cores. The context records, per thread count,
what torch reports and how many OS threads the process really had after timing.
Default: all cores, as attnbench.

Timing mirrors harness/measure/bench.c: one warm-up call; iterations calibrated (×1.2
min-time / t, at most ×10 a step) until one batch lasts min-time (default 0.2 s);
R repetitions (default 9) of that many iterations, wall time by
time.perf_counter (CLOCK_MONOTONIC), CPU time of all threads by
time.process_time (CLOCK_PROCESS_CPUTIME_ID); Python's per-call overhead is part
of PyTorch's cost. --max-call-time S skips a benchmark whose warm-up call takes
over S seconds (default 0: never).

--memory: in the same fresh process, after the warm-up call (so code pages and
thread stacks are in), the heap is trimmed (malloc_trim), the peak RSS reset
(/proc/self/clear_refs 5) and `extra_rss_bytes` = VmHWM after one more call −
VmRSS before it: what one call adds beyond its inputs and weights, as
attnbench's --memory. Unlike attnbench's (whose output buffer is the caller's)
it includes the output tensor PyTorch allocates (B·Lq·D·4 bytes; generate:
B·(P + N)·D·4, and the memory's K and V per layer, 2·layers·B·M·D·4) and, for
grouped-query SDPA, the expanded K and V (2·B·H·Lk·Dh·4 bytes). generate's
caches are allocated before the call, as attnbench's.

JSON: the schema of `attnbench run --json` (Google Benchmark's): a context
object and, per benchmark, R iteration entries and the aggregates mean,
median, stddev, cv, min, with the same fields and counters (GFLOPS, pct_peak,
flops, bytes, arith_intensity, extra_rss_bytes; generate also tokens_per_second
and ms_per_token, bert sequences_per_second and ms_per_sequence), kernel "pytorch",
chosen_by
"named" (as for any kernel named on attnbench's command line). The machine
part of the context (CPU, caches, peaks) comes from a one-microsecond
`attnbench run --kernel naive` probe at each thread count; pct_peak is against
the measured FMA peak of the widest ISA the machine has (avx512 > avx2 >
baseline; the ISA attnbench's `auto` kernel uses), named in
context.pct_peak_isa. When the probe fails, the context is what Python can
see (no peaks, pct_peak null). The file is written atomically (temporary file
in the same folder, fsync, rename).

Exit status: 0; 1 when a benchmark failed, the file could not be written,
torch or the attnbench binary is missing (--self-test: a check failed; without
the binary its checks of attnbench's values are skipped, said, and the
workload checks still run); 2 for bad arguments, shapes attnbench refuses
included (nothing is run or written).
"""
import argparse
import gc
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass

KERNEL = "pytorch"
SEED = 20261122                      # attnbench's workload seed (cmd_run.c)
MAX_REPS = 100                       # AB_MAX_REPS
MAX_THREAD_COUNTS = 16
BERT_VOCAB = 30522                   # op=bert: workload.c's tables (BERT-base's sizes)
BERT_POSITIONS = 512                 # or L when longer
BERT_TYPES = 2
BERT_LN_EPS = 1e-12                  # every LayerNorm of op=bert (BERT's)
BERT_FORM = ("nn.Embedding x3 + nn.LayerNorm(eps=1e-12), nn.TransformerEncoder(nn."
             "TransformerEncoderLayer(dropout=0, layer_norm_eps=1e-12, batch_first=True), "
             "enable_nested_tensor=True), eval, torch.inference_mode, src_key_padding_mask")
UNSTABLE_CV = 0.05                   # AB_UNSTABLE_CV
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ATTNBENCH = os.path.join(HERE, os.pardir, "build", "attnbench")


class UsageError(Exception):
    """Bad arguments: reported on stderr, exit status 2, nothing written."""


# ---- Shapes: attnbench's (`attnbench list --json`) -------------------------------

@dataclass
class Shape:
    """One shape as the workloads read it: its op and the op's keys as attnbench
    resolves them (shape_of), then what attnbench says of it, carried unchanged
    into the run names and the JSON."""
    op: str
    batch: int                   # B
    heads: int                   # H
    q_len: int                   # Lq; decoder, bert: L; generate: the prompt's P
    kv_len: int                  # Lk; decoder, generate: the memory's M; bert: L
    head_dim: int                # Dh (D = H·Dh)
    d_ff: int = 0                # F: encoder, decoder, generate, bert
    cross: int = 0               # mha: K and V from a second sequence
    mask: str = "none"
    norm_first: int = 0          # norm=pre
    act: str = "gelu"
    scale: float = 0.0           # 0: 1/sqrt(Dh); a C float (float32) otherwise
    kv_heads: int = 0            # sdpa: key/value heads (grouped-query); 0 = heads
    steps: int = 0               # generate: N, the tokens fed one at a time after the prompt
    layers: int = 0              # generate: the decoder layers; bert: the encoder layers
    kv: str = "f32"              # sdpa, generate: how keys and values are stored
    text: str = ""               # attnbench's canonical text ("shape" in its JSON),
    label: str = ""              # its label (in the run name),
    flops: float = 0.0           # and its FLOP and byte counts
    bytes: float = 0.0


def shape_of(entry):
    """The Shape of one shape of `attnbench list --json`: {"op", "keys"} (every
    key the op takes, resolved: defaults applied, Hkv = H when the heads are not
    grouped; a key the op does not take keeps the Shape's default) and
    "shape", "label", "flops", "bytes" (absent in the self-test's own shapes)."""
    k = entry["keys"]
    h, hkv = k["H"], k.get("Hkv", k["H"])
    return Shape(op=entry["op"], batch=k["B"], heads=h,
                 # The lengths: sdpa, mha, encoder Lq and Lk; decoder L and the
                 # memory's M; generate the prompt's P and M; bert L.
                 q_len=k.get("Lq", k.get("P", k.get("L"))),
                 kv_len=k.get("Lk", k.get("M", k.get("L"))),
                 head_dim=k["Dh"], d_ff=k.get("F", 0), cross=k.get("cross", 0), mask=k["mask"],
                 norm_first=int(k.get("norm") == "pre"), act=k.get("act", "gelu"),
                 # A C float written with 10 digits: rounded back to that float,
                 # the one attnbench's workload uses.
                 scale=struct.unpack("f", struct.pack("f", k.get("scale", 0)))[0],
                 kv_heads=0 if hkv == h else hkv, steps=k.get("N", 0), layers=k.get("layers", 0),
                 kv=k.get("kv", "f32"),
                 text=entry.get("shape", ""), label=entry.get("label", ""),
                 flops=entry.get("flops", 0.0), bytes=entry.get("bytes", 0.0))


def run_name(s, threads):
    """ab_run_name: "<op>/<kernel>/<shape label>/threads:<n>"."""
    return f"{s.op}/{KERNEL}/{s.label}/threads:{threads}"


def causal_kind(s):
    """ab_shape_causal: None, "top-left" (causal, all) or "bottom-right" (causal-br)."""
    return ("top-left" if s.mask in ("causal", "all")
            else "bottom-right" if s.mask == "causal-br" else None)


def real_keys(s):
    """harness/ops/workload.c's padding, for torch's and numpy's masks alike:
    how many keys of each batch are real (decoder, generate: the memory's
    tokens), the rest padding; None when the mask pads none. Batch b pads its
    last b·Lk/(2B) keys (integer division), and under padall the last batch
    all of them."""
    if s.mask not in ("padding", "padall", "all"):
        return None
    b, lk = s.batch, s.kv_len
    return [0 if s.mask == "padall" and i == b - 1 else lk - i * lk // (2 * b) for i in range(b)]


# ---- attnbench: shapes and machine context ---------------------------------------

def attnbench_list(binary, args):
    """What `attnbench list --json ARGS` prints (the ops; the suites' shapes, or
    those of --shape), parsed. UsageError with attnbench's message when it
    refuses ARGS (a shape or --op: its exit status 2), RuntimeError when it
    cannot be run."""
    if not os.access(binary, os.X_OK):
        raise RuntimeError(f"{binary} not found: the shapes, their labels, FLOPs and bytes "
                           "are attnbench's (attnbench list --json); build it first: make")
    try:
        p = subprocess.run([binary, "list", "--json", *args], capture_output=True, text=True,
                           timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(f"cannot run {binary} list --json ({e})")
    if p.returncode == 2:
        raise UsageError(p.stderr.strip())
    if p.returncode != 0:
        raise RuntimeError(f"{binary} list --json failed: {p.stderr.strip()}")
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        raise RuntimeError(f"{binary} list --json: not JSON ({e})")


def read_shapes(binary, texts, op=None):
    """[Shape] of shape texts in attnbench's syntax (';' may separate several
    in one), op the default op of each, as attnbench reads them: one `list`
    a text, each within the bounds of one --shape (as `attnbench run`'s)."""
    op_args = ["--op", op] if op else []
    return [shape_of(e) for text in texts
            for e in attnbench_list(binary, ["--shape", text, *op_args])["shapes"]]


def attnbench_context(binary, threads, peaks=True):
    """The context attnbench writes at this thread count (machine, caches,
    peaks unless not peaks), from a tiny naive run; (None, reason) when it
    cannot be had."""
    if not os.access(binary, os.X_OK):
        return None, f"{binary} not found (make)"
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "probe.json")
        cmd = [binary, "run", "--kernel", "naive", "--shape", "op=sdpa,B=1,H=1,L=1,Dh=1",
               "--threads", str(threads), "--repetitions", "1", "--precision", "0", "--min-time", "0.0001",
               "--json", path] + ([] if peaks else ["--no-peaks"])
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            if p.returncode != 0:
                return None, f"attnbench probe failed: {p.stderr.strip()}"
            with open(path) as f:
                return json.load(f)["context"], None
        except (OSError, ValueError, KeyError, subprocess.SubprocessError) as e:
            return None, f"attnbench probe failed: {e}"


def widest_isa_peak(ctx):
    """(isa, GFLOP/s) of the widest ISA in the context's peaks, or (None, 0);
    for --math bf16 or medium, the bf16 units' peak first, as attnbench
    holds its bf16 rows to it."""
    peaks = (ctx or {}).get("peak_gflops") or {}
    order = ("avx512", "avx2", "neon", "sse2")
    if KERNEL != "pytorch":
        order = ("avx512_bf16",) + order
    for isa in order:
        if peaks.get(isa):
            return isa, float(peaks[isa])
    return None, 0.0


def python_machine_context():
    """What Python can see when attnbench cannot be asked."""
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                info.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    u = os.uname()
    return {
        "host_name": u.nodename, "num_cpus": os.cpu_count(),
        "mhz_per_cpu": round(float(info.get("cpu MHz", 0) or 0)),
        "cpu_vendor": info.get("vendor_id", ""), "cpu_model": info.get("model name", ""),
        "os": f"{u.sysname} {u.release} {u.machine}",
    }


def core_cpus():
    """One allowed CPU per core (the first), cores in order of their first CPU."""
    first = {}
    for cpu in sorted(os.sched_getaffinity(0)):
        key = ("cpu", cpu)
        try:
            ids = []
            for name in ("physical_package_id", "die_id", "core_id"):
                p = f"/sys/devices/system/cpu/cpu{cpu}/topology/{name}"
                if os.path.exists(p):
                    with open(p) as f:
                        ids.append(int(f.read()))
            key = tuple(ids) or key
        except (OSError, ValueError):
            pass
        first.setdefault(key, cpu)
    return list(first.values())


# ---- The worker: one benchmark in a fresh process ------------------------------

def _rss(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return -1


def cached_decoding(torch, s, layers, x, memory, key_padding):
    """op=generate: a no-argument callable decoding x ([B][P + N][D]) through the
    stack `layers` (nn.TransformerDecoderLayer, eval; their weights used by a
    loop of torch ops) with a KV cache per layer, as attnbench's call does: the
    P prompt tokens through every layer in one pass, then N steps of one token
    x[:, P + t] each (teacher-forced: outputs are not fed back). Cross-attention
    over memory ([B][M][D]; key_padding [B][M], True = padding, or None), its K
    and V projected once per call and layer, on the prompt's pass. Returns the
    last layer's outputs at all P + N positions, [B][P + N][D]."""
    F = torch.nn.functional
    b, h, dh, p, n = s.batch, s.heads, s.head_dim, s.q_len, s.steps
    d, total, scale = h * dh, s.q_len + s.steps, 1.0 / math.sqrt(s.head_dim)
    act = {"relu": F.relu, "gelu": F.gelu,
           "gelu-tanh": lambda t: F.gelu(t, approximate="tanh")}[s.act]
    # Set up once, outside the call: each layer's weights, the cross-attention's
    # in_proj split into its Q rows and its K, V rows; the caches, overwritten by
    # every call; the prompt's causal mask ([P][P]: the cache holds P then) and
    # the memory's padding, additive.
    weights = []
    for layer in layers:
        ca = layer.multihead_attn
        weights.append(dict(
            sa=(layer.self_attn.in_proj_weight, layer.self_attn.in_proj_bias,
                layer.self_attn.out_proj.weight, layer.self_attn.out_proj.bias),
            ca_q=(ca.in_proj_weight[:d], ca.in_proj_bias[:d]),
            ca_kv=(ca.in_proj_weight[d:], ca.in_proj_bias[d:]),
            ca_out=(ca.out_proj.weight, ca.out_proj.bias),
            norms=[(ln.weight, ln.bias) for ln in (layer.norm1, layer.norm2, layer.norm3)],
            ff=(layer.linear1.weight, layer.linear1.bias, layer.linear2.weight,
                layer.linear2.bias)))
    caches = [(torch.empty(b, h, total, dh), torch.empty(b, h, total, dh)) for _ in layers]
    prompt_mask = torch.full((p, p), -math.inf).triu(1)
    memory_mask = (None if key_padding is None else
                   torch.zeros(b, 1, 1, s.kv_len).masked_fill(key_padding.view(b, 1, 1, -1),
                                                               -math.inf))

    def heads(t):                                  # [B][n][D] → [B][H][n][Dh]
        return t.view(b, -1, h, dh).transpose(1, 2)

    def attend(q, k, v, mask):                     # → [B][n][D]
        scores = torch.matmul(q * scale, k.transpose(-2, -1))
        if mask is not None:
            scores = scores + mask
        out = torch.matmul(torch.softmax(scores, dim=-1), v)
        return out.transpose(1, 2).reshape(b, -1, d)

    def layer_step(w, cache, mem_kv, y, pos):
        """One layer over the tokens y ([B][n][D]) at positions pos..pos+n−1."""
        k_cache, v_cache = cache
        length = pos + y.shape[1]

        def self_attention(y):
            q, k, v = F.linear(y, w["sa"][0], w["sa"][1]).chunk(3, dim=-1)
            k_cache[:, :, pos:length] = heads(k)
            v_cache[:, :, pos:length] = heads(v)
            out = attend(heads(q), k_cache[:, :, :length], v_cache[:, :, :length],
                         prompt_mask if pos == 0 else None)
            return F.linear(out, w["sa"][2], w["sa"][3])

        def cross_attention(y):
            q = heads(F.linear(y, *w["ca_q"]))
            return F.linear(attend(q, *mem_kv, memory_mask), *w["ca_out"])

        def feed_forward(y):
            w1, b1, w2, b2 = w["ff"]
            return F.linear(act(F.linear(y, w1, b1)), w2, b2)

        (g1, b1), (g2, b2), (g3, b3) = w["norms"]
        if s.norm_first:
            y = y + self_attention(F.layer_norm(y, (d,), g1, b1, 1e-5))
            y = y + cross_attention(F.layer_norm(y, (d,), g2, b2, 1e-5))
            y = y + feed_forward(F.layer_norm(y, (d,), g3, b3, 1e-5))
        else:
            y = F.layer_norm(y + self_attention(y), (d,), g1, b1, 1e-5)
            y = F.layer_norm(y + cross_attention(y), (d,), g2, b2, 1e-5)
            y = F.layer_norm(y + feed_forward(y), (d,), g3, b3, 1e-5)
        return y

    def call():
        with torch.no_grad():
            # The prompt: all P tokens through every layer; each layer projects
            # the memory's K and V once, kept for the steps.
            mem_kv, y = [], x[:, :p]
            for w, cache in zip(weights, caches):
                k, v = F.linear(memory, *w["ca_kv"]).chunk(2, dim=-1)
                mem_kv.append((heads(k), heads(v)))
                y = layer_step(w, cache, mem_kv[-1], y, 0)
            outs = [y]
            # Then one token at a time.
            for t in range(n):
                y = x[:, p + t:p + t + 1]
                for w, cache, kv in zip(weights, caches, mem_kv):
                    y = layer_step(w, cache, kv, y, p + t)
                outs.append(y)
            return torch.cat(outs, dim=1)
    return call


def bert_model(torch, s, vocab, act):
    """op=bert's module (untrained: its weights are drawn by make_workload): the
    embeddings, LayerNorm(token[ids] + position[0..L-1] + token_type[type_ids]),
    then nn.TransformerEncoder over `layers` clones of one nn.TransformerEncoderLayer
    (each layer its own parameters), no final LayerNorm. enable_nested_tensor=True
    (TransformerEncoder's default: what users get; see the docstring)."""
    nn = torch.nn
    d, positions = s.heads * s.head_dim, max(BERT_POSITIONS, s.q_len)

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.token = nn.Embedding(vocab, d)
            self.position = nn.Embedding(positions, d)
            self.token_type = nn.Embedding(BERT_TYPES, d)
            self.norm = nn.LayerNorm(d, eps=BERT_LN_EPS)
            layer = nn.TransformerEncoderLayer(d, s.heads, s.d_ff, dropout=0.0, activation=act,
                                               layer_norm_eps=BERT_LN_EPS, batch_first=True,
                                               norm_first=bool(s.norm_first))
            self.encoder = nn.TransformerEncoder(layer, s.layers, enable_nested_tensor=True)
            self.register_buffer("position_ids", torch.arange(s.q_len).view(1, -1))

        def forward(self, ids, type_ids, key_padding):
            x = self.token(ids) + self.position(self.position_ids) + self.token_type(type_ids)
            return self.encoder(self.norm(x), src_key_padding_mask=key_padding)
    return Bert()


def torch_release(version):
    """(major, minor) of a torch version string ("2.11.0+cu130" -> (2, 11))."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def fused_sdpa(torch, q, k, v, mask, scale, group, f=None, release=None):
    """attnbench's SDPA through PyTorch 2's F.scaled_dot_product_attention,
    what a PyTorch 2 user calls (its fused CPU kernels): q [B][H][Lq][Dh],
    k and v [B][H/group][Lk][Dh], mask additive in q's type (or None). The keyword
    `scale` came in 2.1 (before it, Q is scaled so that the default
    1/sqrt(Dh) gives `scale`); grouped heads without copies (`enable_gqa`)
    in 2.5 (before it, K and V are repeat_interleave'd in the call). f and
    release: the function and the version it follows (the self-test passes
    a reference of its documented semantics where torch has none)."""
    f = f or torch.nn.functional.scaled_dot_product_attention
    release = release or torch_release(torch.__version__)
    kw = {"attn_mask": mask}
    if group > 1 and release >= (2, 5):
        kw["enable_gqa"] = True
    elif group > 1:
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    if release >= (2, 1):
        kw["scale"] = scale
    else:
        q = q * (scale * math.sqrt(q.shape[-1]))
    return f(q, k, v, **kw)


def sdpa_form(version):
    """The context's words for the SDPA form timed with torch `version`."""
    if torch_release(version) >= (2, 0):
        return ("F.scaled_dot_product_attention(Q, K, V, attn_mask=additive mask, scale), "
                "fp32; grouped-query " + ("enable_gqa=True" if torch_release(version) >= (2, 5)
                                          else "K, V repeat_interleave'd to H heads in the call"))
    return ("softmax((Q*scale) @ K^T + mask) @ V, eager, fp32; grouped-query K, V "
            "repeat_interleave'd to H heads in the call")


def make_workload(torch, s, parts=None, vocab=None):
    """A no-argument callable running the shape's PyTorch operation once. For
    op=generate, `parts` (a dict) receives the layers, x, memory and key_padding
    (check_generate's reference runs on them); for op=bert the model, ids,
    type_ids and key_padding (check_bert's), `vocab` its vocabulary (default
    BERT-base's 30522)."""
    nn, F = torch.nn, torch.nn.functional
    g = torch.Generator().manual_seed(SEED)
    b, h, lq, lk, dh = s.batch, s.heads, s.q_len, s.kv_len, s.head_dim   # decoder, generate: lk = M
    d = h * dh

    def filled(shape, center, amp):            # uniform in [center − amp, center + amp)
        return (torch.rand(shape, generator=g) * 2.0 - 1.0) * amp + center

    # The mask's parts (harness/ops/workload.c make_mask).
    causal = causal_kind(s)
    real = None                                 # [B][Lk], True = a real token (decoder: memory)
    counts = real_keys(s)
    if counts is not None:
        real = torch.arange(lk)[None, :] < torch.tensor(counts)[:, None]
    rows = (b, lq, lk) if s.mask in ("keep", "bias") else (lq, lk)
    keep = torch.rand(rows, generator=g) < 0.7 if s.mask in ("keep", "all") else None
    bias = filled(rows, 0.0, 1.0) if s.mask in ("bias", "all") else None
    # Hidden by the causal mask: key j > query i (top-left) or j > i + Lk − Lq
    # (bottom-right; rows i < Lq − Lk then see no key).
    upper = (~torch.ones(lq, lk, dtype=torch.bool).tril(diagonal=lk - lq)
             if causal == "bottom-right" else torch.ones(lq, lk, dtype=torch.bool).triu(1))

    def neg_inf_where(masked):
        return torch.zeros(masked.shape).masked_fill(masked, -math.inf)

    if s.op == "sdpa":
        hkv = s.kv_heads or h                   # K and V: [B][Hkv][Lk][Dh]
        q, k, v = filled((b, h, lq, dh), 0, 1), filled((b, hkv, lk, dh), 0, 1), filled((b, hkv, lk, dh), 0, 1)
        group = h // hkv
        scale = s.scale if s.scale != 0.0 else 1.0 / math.sqrt(dh)
        per_batch = (lambda t: t.view(b, 1, lq, lk) if t.dim() == 3 else t)
        parts = ([neg_inf_where(upper)] if causal else []) \
            + ([neg_inf_where(~real).view(b, 1, 1, lk)] if real is not None else []) \
            + ([per_batch(neg_inf_where(~keep))] if keep is not None else []) \
            + ([per_batch(bias)] if bias is not None else [])
        mask = sum(parts[1:], parts[0]) if parts else None      # broadcasts to [B][H][Lq][Lk]

        def stored(t):
            """t stored as kv (attnbench's rounding: nearest even; int8 with
            a scale per row of Dh), and the call's way back to fp32: what a
            1.13 user does with such a cache, dequantize in the call."""
            if s.kv in ("f16", "bf16"):
                n = t.to(torch.float16 if s.kv == "f16" else torch.bfloat16)
                return lambda: n.float()
            if s.kv == "i8":
                sc = t.abs().amax(dim=-1, keepdim=True) / 127.0
                qi = torch.where(sc > 0, torch.round(t / sc), torch.zeros_like(t))
                qi = qi.clamp(-127, 127).to(torch.int8)
                return lambda: qi.float() * sc
            return lambda: t
        k_stored, v_stored = stored(k), stored(v)

        if hasattr(torch.nn.functional, "scaled_dot_product_attention"):
            # PyTorch 2: its fused SDPA, as its users call it.
            # The mask in Q's type (F.sdpa asks it), converted once, not in the call.
            qmask = mask.to(q.dtype) if mask is not None else None
            return lambda: fused_sdpa(torch, q, k_stored(), v_stored(), qmask, scale, group)

        def call():
            k, v = k_stored(), v_stored()
            # Grouped-query: each K/V head serves `group` query heads; 1.13 has no
            # broadcasting form, so K and V are expanded to H heads in the call.
            kh = k.repeat_interleave(group, dim=1) if group > 1 else k
            vh = v.repeat_interleave(group, dim=1) if group > 1 else v
            scores = torch.matmul(q * scale, kh.transpose(-2, -1))
            if mask is not None:
                scores.add_(mask)
            return torch.matmul(torch.softmax(scores, dim=-1), vh)
        return call

    # MHA and the encoder: PyTorch's mask arguments.
    key_padding = ~real if real is not None else None          # True = ignore
    attn_mask = None
    if keep is None and bias is None:
        attn_mask = upper if causal else None
    else:
        attn_mask = bias.clone() if bias is not None else None
        if keep is not None:
            attn_mask = ~keep if attn_mask is None else attn_mask.masked_fill(~keep, -math.inf)
        if causal:
            attn_mask = (attn_mask | upper if attn_mask.dtype == torch.bool
                         else attn_mask.masked_fill(upper, -math.inf))
        if attn_mask.dim() == 3:                                # [B·H][Lq][Lk], batch-major
            attn_mask = attn_mask.repeat_interleave(h, dim=0)

    wamp = 1.0 / math.sqrt(d)

    def init_attention(mha):
        mha.in_proj_weight.copy_(filled((3 * d, d), 0, wamp))
        mha.in_proj_bias.copy_(filled((3 * d,), 0, wamp))
        mha.out_proj.weight.copy_(filled((d, d), 0, wamp))
        mha.out_proj.bias.copy_(filled((d,), 0, wamp))
        if s.scale != 0.0:                      # scores · scale: fold into Q's projection
            mha.in_proj_weight[:d] *= s.scale * math.sqrt(dh)
            mha.in_proj_bias[:d] *= s.scale * math.sqrt(dh)

    if s.op == "mha":
        mha = nn.MultiheadAttention(d, h, batch_first=True)
        init_attention(mha)
        mha.eval().requires_grad_(False)
        x_q = filled((b, lq, d), 0, 1)
        x_kv = filled((b, lk, d), 0, 1) if s.cross else x_q
        return lambda: mha(x_q, x_kv, x_kv, key_padding_mask=key_padding, attn_mask=attn_mask,
                           need_weights=False)[0]

    act = {"gelu": "gelu", "relu": "relu",
           "gelu-tanh": lambda x: F.gelu(x, approximate="tanh")}[s.act]

    def init_layer(layer, attentions, norms):
        for a in attentions:
            init_attention(a)
        for ln in norms:
            ln.weight.copy_(filled((d,), 1.0, 0.2))
            ln.bias.copy_(filled((d,), 0.0, 0.2))
        layer.linear1.weight.copy_(filled((s.d_ff, d), 0, wamp))
        layer.linear1.bias.copy_(filled((s.d_ff,), 0, wamp))
        layer.linear2.weight.copy_(filled((d, s.d_ff), 0, 1.0 / math.sqrt(s.d_ff)))
        layer.linear2.bias.copy_(filled((d,), 0, wamp))
        layer.eval().requires_grad_(False)

    if s.op == "encoder":
        layer = nn.TransformerEncoderLayer(d, h, s.d_ff, dropout=0.0, activation=act,
                                           layer_norm_eps=1e-5, batch_first=True,
                                           norm_first=bool(s.norm_first))
        init_layer(layer, (layer.self_attn,), (layer.norm1, layer.norm2))
        x = filled((b, lq, d), 0, 1)
        return lambda: layer(x, src_mask=attn_mask, src_key_padding_mask=key_padding)

    if s.op == "decoder":
        # Causal self-attention over the target (L), cross-attention over the
        # memory (M = lk); mask=padding pads the memory (key_padding is [B][M]).
        layer = nn.TransformerDecoderLayer(d, h, s.d_ff, dropout=0.0, activation=act,
                                           layer_norm_eps=1e-5, batch_first=True,
                                           norm_first=bool(s.norm_first))
        init_layer(layer, (layer.self_attn, layer.multihead_attn),
                   (layer.norm1, layer.norm2, layer.norm3))
        x, memory = filled((b, lq, d), 0, 1), filled((b, lk, d), 0, 1)
        tgt_mask = torch.ones(lq, lq, dtype=torch.bool).triu(1)     # True = masked
        return lambda: layer(x, memory, tgt_mask=tgt_mask, memory_key_padding_mask=key_padding)

    if s.op == "generate":
        # A stack of decoder layers drawn as the decoder's (layer by layer), used
        # by a cached decoding loop; x is the prompt then the token of each step.
        layers = []
        for _ in range(s.layers):
            layer = nn.TransformerDecoderLayer(d, h, s.d_ff, dropout=0.0, activation=act,
                                               layer_norm_eps=1e-5, batch_first=True,
                                               norm_first=bool(s.norm_first))
            init_layer(layer, (layer.self_attn, layer.multihead_attn),
                       (layer.norm1, layer.norm2, layer.norm3))
            layers.append(layer)
        x, memory = filled((b, lq + s.steps, d), 0, 1), filled((b, lk, d), 0, 1)
        if parts is not None:
            parts.update(layers=layers, x=x, memory=memory, key_padding=key_padding)
        return cached_decoding(torch, s, layers, x, memory, key_padding)

    if s.op == "bert":
        # workload.c bert_inputs: the tables U[-1, 1), the embeddings' LayerNorm as
        # every LayerNorm; then each layer its own weights, drawn as the encoder's.
        model = bert_model(torch, s, vocab or BERT_VOCAB, act)
        for table in (model.token, model.position, model.token_type):
            table.weight.copy_(filled(tuple(table.weight.shape), 0, 1))
        model.norm.weight.copy_(filled((d,), 1.0, 0.2))
        model.norm.bias.copy_(filled((d,), 0.0, 0.2))
        for layer in model.encoder.layers:
            init_layer(layer, (layer.self_attn,), (layer.norm1, layer.norm2))
        model.eval().requires_grad_(False)
        # ids uniform over the vocabulary; type 0 for the first half of each
        # sequence, 1 after (a sentence pair).
        ids = torch.randint(model.token.num_embeddings, (b, lq), generator=g)
        type_ids = (torch.arange(lq) >= lq // 2).long().expand(b, lq).contiguous()
        if parts is not None:
            parts.update(model=model, ids=ids, type_ids=type_ids, key_padding=key_padding)

        def call():
            with torch.inference_mode():
                return model(ids, type_ids, key_padding)
        return call

    raise ValueError(f"no PyTorch workload for op '{s.op}'")


def call_memory(call):
    """Bytes of resident memory one call adds (bench's call_memory), or
    (None, reason)."""
    import ctypes
    gc.collect()
    try:                        # freed heap pages back to the OS first
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")        # reset the peak RSS (VmHWM) to the current RSS
    except OSError as e:
        return None, f"cannot reset the peak RSS (/proc/self/clear_refs: {e.strerror})"
    before = _rss("VmRSS")
    out = call()
    peak = _rss("VmHWM")
    del out
    return (peak - before, None) if 0 <= before <= peak else (None, "RSS not readable")


def mapped_libraries(words):
    """Real paths of the mapped shared objects whose name contains one of words."""
    found = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if path.startswith("/") and any(w in os.path.basename(path) for w in words):
                    found.add(os.path.realpath(path))
    except OSError:
        pass
    return sorted(found)


def time_calls(call, iters):
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(iters):
        call()
    t1 = time.perf_counter()
    return t1 - t0, time.process_time() - c0


def worker(job):
    """Runs one benchmark; the environment (thread counts) was set by the parent."""
    n = job["threads"]
    res = {"status": "error", "error": ""}
    try:
        os.sched_setaffinity(0, job["cpus"])
        res["affinity"] = True
    except (OSError, ValueError):
        res["affinity"] = False
    try:
        import torch
    except Exception as e:                      # missing or broken torch
        res["error"] = f"cannot import torch: {e}"
        return res
    torch.set_num_threads(n)
    torch.set_grad_enabled(False)
    import warnings              # op=bert's nested tensors: a prototype, says 1.13 once
    warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")
    cfg = torch.__config__.show()
    res["torch"] = {
        "torch_version": torch.__version__,
        "python_version": sys.version.split()[0],
        "torch_parallel_backend": (re.findall(r"ATen parallel backend: (.*)",
                                              torch.__config__.parallel_info()) or [""])[0].strip(),
        "torch_cpu_capability": (re.findall(r"CPU capability usage: (\S+)", cfg) or [""])[0],
        "torch_build_type": (re.findall(r"BUILD_TYPE=([^,]+)", cfg) or [""])[0],
        "torch_compiler": (re.findall(r"^\s*- (GCC [^\n]*|clang [^\n]*)", cfg, re.M) or [""])[0],
    }
    s = Shape(**job["shape"])
    try:
        # --math (contract 0.3 §9.3's peers): "medium" lets fp32 matmuls use
        # bf16 where PyTorch implements it (on CPU from 2.x: oneDNN's bf16
        # on AMX / AVX512_BF16; 1.13 ignores it on CPU); "bf16" makes the
        # workload a bf16 module: every parameter and input created as
        # bfloat16 (the default dtype while it is built), as a model cast
        # with .to(torch.bfloat16) runs.
        if job["math"] == "medium":
            torch.set_float32_matmul_precision("medium")
        elif job["math"] == "bf16":
            torch.set_default_dtype(torch.bfloat16)
        call = make_workload(torch, s)
        # Warm-up: the first call allocates and faults its pages in.
        first, _ = time_calls(call, 1)
        if job["max_call_time"] > 0 and first > job["max_call_time"]:
            res.update(status="skipped", warmup=first)
            return res
        if job["memory"]:
            res["extra_rss"], res["memory_note"] = call_memory(call)
        # Calibrate (bench.c): grow the count until one batch lasts min_time.
        iters, min_time = 1, job["min_time"]
        while True:
            t, _ = time_calls(call, iters)
            if t >= min_time or iters >= 1_000_000_000:
                break
            grow = min(1.2 * min_time / t, 10.0) if t > 0 else 10.0
            iters = max(math.ceil(iters * grow), iters + 1)
        real, cpu = [], []
        for _ in range(job["repetitions"]):
            t, c = time_calls(call, iters)
            real.append(t / iters)
            cpu.append(c / iters)
    except Exception as e:                      # e.g. out of memory
        res["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:199]
        return res
    res.update(status="ok", iterations=iters, real=real, cpu=cpu)
    res["threads_seen"] = {"torch_num_threads": torch.get_num_threads(),
                           "torch_num_interop_threads": torch.get_num_interop_threads(),
                           "os_threads": len(os.listdir("/proc/self/task"))}
    res["blas"] = mapped_libraries(("blas",))
    return res


def worker_main():
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the parent's to handle
    job = json.loads(sys.stdin.read())
    res = worker(job)
    with os.fdopen(job["result_fd"], "w") as f:
        json.dump(res, f)
    return 0


def run_benchmark(shape, threads, cpus, args):
    """Runs one benchmark in a fresh process with N-thread environment."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    if "OMP_PROC_BIND" not in os.environ:       # attnbench's pinning (harness/cli/main.c)
        env["OMP_PROC_BIND"] = "close"
        env.setdefault("OMP_PLACES", "cores")
    r, w = os.pipe()
    job = {"shape": asdict(shape), "threads": threads, "cpus": cpus[:threads],
           "min_time": args.min_time, "repetitions": args.repetitions,
           "max_call_time": args.max_call_time, "memory": args.memory, "result_fd": w,
           "math": args.math}
    try:
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], env=env,
                             stdin=subprocess.PIPE, stdout=sys.stderr.fileno(), pass_fds=(w,),
                             text=True)
    except OSError as e:
        os.close(r)
        return {"status": "error", "error": f"cannot start {sys.executable}: {e.strerror or e}"}
    finally:
        os.close(w)
    try:
        p.stdin.write(json.dumps(job))
        p.stdin.close()
        with os.fdopen(r, "r") as f:
            data = f.read()
        code = p.wait()
    except BaseException:
        p.kill()
        p.wait()
        raise
    if data:
        return json.loads(data)
    why = (f"killed by signal {-code}" + (" (out of memory?)" if code == -9 else "")
           if code < 0 else f"exited with status {code}")
    return {"status": "error", "error": f"the benchmark process {why}"}


# ---- Results: statistics, table, JSON ------------------------------------------

def stats(x):
    """ab_stats_compute: min, median, mean, stddev (n − 1), cv."""
    n, srt = len(x), sorted(x)
    mean = sum(x) / n
    ss = sum((v - mean) ** 2 for v in x)
    sd = math.sqrt(ss / (n - 1)) if n > 1 else 0.0
    return {"min": srt[0], "median": srt[n // 2] if n % 2 else 0.5 * (srt[n // 2 - 1] + srt[n // 2]),
            "mean": mean, "stddev": sd, "cv": sd / abs(mean) if mean else 0.0}


def num(x):
    """A number as attnbench writes it (%.10g; null when not finite)."""
    if x is None or not math.isfinite(x):
        return None
    v = float("%.10g" % x)
    return int(v) if v.is_integer() and abs(v) < 1e15 else v


def format_time(s):
    """ab_format_time."""
    if s is None or not math.isfinite(s) or s < 0:
        return "-"
    if s < 1e-6:
        return "%.0f ns" % (s * 1e9)
    if s < 1e-3:
        return "%.3g us" % (s * 1e6)
    if s < 1.0:
        return "%.3g ms" % (s * 1e3)
    return "%.3g s" % s


def gflops(r, seconds):
    return r["flops"] / seconds / 1e9 if seconds > 0 else math.nan


def pct_peak(r, seconds):
    return 100.0 * gflops(r, seconds) / r["peak"] if r["peak"] > 0 else math.nan


def print_table(results):
    """ab_report_table."""
    kw = max([10] + [len(KERNEL)])
    sw = max([36] + [len(r["shape"].label) for r in results])
    print("%-*s %-8s %-*s %3s %10s %9s %7s %6s  %s" % (kw, "kernel", "op", sw, "shape", "thr",
                                                       "median", "GFLOP/s", "%peak", "CV", ""))
    for r in results:
        label = r["shape"].label
        if r["error"]:
            print("%-*s %-8s %-*s %3d  FAILED: %s" % (kw, KERNEL, r["shape"].op, sw, label,
                                                      r["threads"], r["error"]))
            continue
        med = r["real_stats"]["median"]
        pct = pct_peak(r, med)
        line = "%-*s %-8s %-*s %3d %10s %9.2f %7s %5.1f%%  %s" % (
            kw, KERNEL, r["shape"].op, sw, label, r["threads"], format_time(med), gflops(r, med),
            "-" if math.isnan(pct) else "%.1f%%" % pct, 100.0 * r["real_stats"]["cv"],
            "UNSTABLE (CV > 5%)" if r["unstable"] else "")
        if r["extra_rss"] is not None:
            line += "%smemory +%.1f MiB" % ("  " if r["unstable"] else "", r["extra_rss"] / 1048576.0)
        print(line)


def counters(r, seconds):
    c = {"GFLOPS": num(gflops(r, seconds)), "pct_peak": num(pct_peak(r, seconds)),
         "flops": num(r["flops"]), "bytes": num(r["bytes"]),
         "arith_intensity": num(r["flops"] / r["bytes"] if r["bytes"] > 0 else math.nan)}
    if r["shape"].op == "generate" and seconds > 0:
        # report.c: a call is the prompt, then N tokens; per new token, the prompt included
        c["tokens_per_second"] = num(r["shape"].steps / seconds)
        c["ms_per_token"] = num(1e3 * seconds / r["shape"].steps)
    if r["shape"].op == "bert" and seconds > 0:
        # report.c: a call is B sequences of L tokens through the whole model
        c["sequences_per_second"] = num(r["shape"].batch / seconds)
        c["ms_per_sequence"] = num(1e3 * seconds / r["shape"].batch)
    if r["extra_rss"] is not None:
        c["extra_rss_bytes"] = num(r["extra_rss"])
    return c


def json_entries(r, family):
    """report.c json_result: R iteration entries and 5 aggregates (or one error)."""
    head = {"name": r["run_name"], "family_index": family, "per_family_instance_index": 0,
            "run_name": r["run_name"], "run_type": "iteration", "repetitions": len(r["real"]),
            "threads": r["threads"]}
    # chosen_by: why this kernel ran (attnbench: wisdom, features, named, ATTN_KERNEL).
    tail = {"kernel": KERNEL, "chosen_by": "named", "shape": r["shape"].text}
    if r["error"]:
        return [dict(head, error_occurred=True, error_message=r["error"])]
    out = []
    for rep, (real, cpu) in enumerate(zip(r["real"], r["cpu"])):
        out.append(dict(head, repetition_index=rep, iterations=r["iterations"],
                        real_time=num(real * 1e9), cpu_time=num(cpu * 1e9), time_unit="ns",
                        **counters(r, real), **tail))
    rs, cs = r["real_stats"], r["cpu_stats"]
    for a in ("mean", "median", "stddev", "cv", "min"):
        e = dict(head, name=f"{r['run_name']}_{a}", run_type="aggregate", aggregate_name=a,
                 aggregate_unit="percentage" if a == "cv" else "time",
                 iterations=r["iterations"],
                 real_time=num(rs[a] if a == "cv" else rs[a] * 1e9),   # cv: a fraction
                 cpu_time=num(cs[a] if a == "cv" else cs[a] * 1e9), time_unit="ns")
        if a not in ("stddev", "cv"):
            e.update(counters(r, rs[a]))
        e["unstable"] = r["unstable"]
        e.update(tail)
        out.append(e)
    return out


def build_context(probe, args, max_threads, pinned, pct_isa, workers):
    """report.c json_context's fields, the machine part from attnbench's probe."""
    base = probe or python_machine_context()
    first = next((w for w in workers if w.get("torch")), {})
    torch_info = first.get("torch", {})
    build = torch_info.get("torch_build_type", "")
    ctx = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "host_name": base.get("host_name", os.uname().nodename),
           "executable": "pytorch_anchor.py"}
    for k in ("num_cpus", "mhz_per_cpu", "cpu_scaling_enabled", "caches"):
        if k in base:
            ctx[k] = base[k]
    ctx["load_avg"] = [num(x) for x in os.getloadavg()]
    ctx["library_build_type"] = ("release" if "rel" in build.lower()
                                 else build.lower() or "unknown")
    # machine_key / machine_id: the report groups files by machine with them.
    for k in ("attnbench_version", "machine_key", "machine_id", "cpu_vendor", "cpu_model",
              "hypervisor", "emulated", "os", "isa_usable", "cpufreq_governor",
              "physical_cores", "topology_source"):
        if k in base:
            ctx[k] = base[k]
    user_bind = "OMP_PROC_BIND" in os.environ       # else run_benchmark set close/cores
    ctx.update(threads=max_threads, threads_pinned=pinned,
               omp_proc_bind=os.environ["OMP_PROC_BIND"] if user_bind else "close",
               omp_places=os.environ.get("OMP_PLACES", None if user_bind else "cores"),
               min_time=num(args.min_time), repetitions=args.repetitions)
    if "git_commit" in base:
        ctx["git_commit"] = base["git_commit"]          # the attnbench that gave shapes and peaks
    if torch_info.get("torch_compiler"):
        ctx["compiler"] = torch_info["torch_compiler"] + " (PyTorch's build)"
    for k in ("peak_gflops", "triad_gbs", "peaks_measured_at"):
        if k in base:
            ctx[k] = base[k]
    # PyTorch's own context.
    ctx.update(torch_info)
    blas = sorted({b for w in workers for b in w.get("blas", [])})
    ctx["blas_library"] = ", ".join(blas)
    ctx["blas_is_reference"] = any("/blas/" in b and "openblas" not in b for b in blas)
    ctx["pct_peak_isa"] = pct_isa
    ctx["thread_env"] = ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"]
    seen = {}
    for w in workers:
        t = w.get("threads_seen")
        if t:
            cur = seen.setdefault(w["threads"], dict(threads=w["threads"], **t))
            cur["os_threads"] = max(cur["os_threads"], t["os_threads"])
    ctx["threads_seen"] = [seen[k] for k in sorted(seen)]
    ctx["sdpa_form"] = sdpa_form(torch_info.get("torch_version", ""))
    ctx["mha_need_weights"] = False
    ctx["input_seed"] = SEED
    if args.memory:
        ctx["extra_rss_includes_output"] = True
    return ctx


def write_atomically(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:                                         # the rename itself, durably
        dfd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


# ---- Self-test: the cached loop against the whole sequence ----------------------

class SelfTest:
    """The checks of one self-test: each reported (all when verbose, else the
    failures), the failures counted."""

    def __init__(self, name, verbose):
        self.name, self.verbose, self.failures = name, verbose, 0

    def report(self, ok, what):
        self.failures += not ok
        if self.verbose or not ok:
            print(f"{'ok  ' if ok else 'FAIL'} {what}")

    def listed(self, binary, text):
        """attnbench's Shape of a shape text (`attnbench list --json`), for the
        checks of what attnbench says of it; None when there is no attnbench
        binary (those checks are skipped, and a line says so) or it refuses
        the text (a failure)."""
        if not os.access(binary, os.X_OK):
            print(f"skip {text}: no attnbench at {binary} (make) to give its text, label "
                  "and FLOPs")
            return None
        try:
            return read_shapes(binary, [text])[0]
        except (UsageError, RuntimeError) as e:
            self.report(False, f"{text}: {e}")
            return None

    def summary(self):
        """Prints the self-test's line; returns the number of failures."""
        print(f"{self.name}: {'all passed' if not self.failures else f'{self.failures} failed'}")
        return self.failures


def keyed(op, keys):
    """(text, Shape) of a workload check's shape: its op and keys, read as
    shape_of reads attnbench's (so the workload checks need no attnbench
    binary); the text names it in the check's line."""
    return (f"op={op}," + ",".join(f"{k}={v}" for k, v in keys.items()),
            shape_of({"op": op, "keys": keys}))


def check_sdpa_forms(verbose=True):
    """fused_sdpa, in each form a PyTorch 2 release takes (2.0: Q prescaled,
    K and V repeated; 2.1: scale=; 2.5: enable_gqa=True), against the math
    form on small shapes: grouped and not, with an additive mask and
    without, an explicit scale. Where torch has F.scaled_dot_product_attention
    it is called in this torch's form; 1.13 has none, so a reference of its
    documented semantics stands in and every form's plumbing is checked.
    max |difference| <= 1e-5. Returns the number of failures."""
    import torch
    torch.set_num_threads(1)
    t = SelfTest("check_sdpa_forms", verbose)
    g = torch.Generator().manual_seed(SEED)

    def reference(q, k, v, attn_mask=None, scale=None, enable_gqa=False):
        if enable_gqa:
            rep = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        sc = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
        scores = q @ k.transpose(-2, -1) * sc
        if attn_mask is not None:
            scores = scores + attn_mask
        return torch.softmax(scores, dim=-1) @ v

    real = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    forms = ([(real, torch_release(torch.__version__))] if real is not None
             else [(reference, (2, 0)), (reference, (2, 1)), (reference, (2, 5))])
    for b, h, hkv, lq, lk, dh, masked, scale in [(2, 4, 2, 7, 9, 8, True, 0.3),
                                                  (1, 3, 3, 5, 5, 16, False, 0.25),
                                                  (1, 8, 2, 1, 33, 8, True, 1.0 / math.sqrt(8))]:
        q = torch.rand((b, h, lq, dh), generator=g) * 2 - 1
        k = torch.rand((b, hkv, lk, dh), generator=g) * 2 - 1
        v = torch.rand((b, hkv, lk, dh), generator=g) * 2 - 1
        mask = (torch.rand((b, 1, lq, lk), generator=g) < 0.3).float() * -1e4 if masked else None
        group = h // hkv
        kh, vh = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = (q * scale) @ kh.transpose(-2, -1)
        want = torch.softmax(scores + mask if masked else scores, dim=-1) @ vh
        for f, release in forms:
            got = fused_sdpa(torch, q, k, v, mask, scale, group, f=f, release=release)
            err = (got - want).abs().max().item()
            t.report(err <= 1e-5, f"sdpa B{b} H{h} Hkv{hkv} Lq{lq} Lk{lk} Dh{dh} "
                     f"{'masked' if masked else 'no mask'} scale {scale:.3g}, "
                     f"form of {release[0]}.{release[1]}: max |diff| {err:.2e}")
    return t.summary()


def check_generate(binary, verbose=True):
    """op=generate's cached decoding loop (cached_decoding) against a whole-
    sequence reference on small shapes: the same weights, as a stack of
    nn.TransformerDecoderLayer each called on all P + N tokens with a causal
    tgt_mask and the memory's padding mask. A KV cache must not change the
    result: max |difference| <= 1e-4, on the first call and on a second (the
    caches are overwritten, not appended to). Also, when the attnbench binary
    is there, the generate suite's text, label and GFLOP that attnbench gives
    against the values written here, and its defaults. Returns 0 when all pass,
    1 otherwise."""
    import torch
    torch.set_num_threads(1)
    t = SelfTest("check_generate", verbose)
    report = t.report

    # The shape's bookkeeping: attnbench's values for these shapes (a change of
    # its formulas or defaults shows here).
    s = t.listed(binary, "op=generate,B=1,P=128,N=128,M=128,layers=6,D=512,H=8,F=2048,"
                         "norm=post,act=relu")
    if s:
        report(s.text == "op=generate,B=1,P=128,N=128,M=128,layers=6,D=512,H=8,F=2048,"
               "norm=post,act=relu,mask=none" and "%.3g" % (s.flops / 1e9) == "12.9"
               and s.label == "B1_D512_H8_P128_N128_M128_layers6_F2048_post_relu",
               f"shape text, label and GFLOP: {s.text}, {s.label}, {s.flops / 1e9:.3g}")
    s = t.listed(binary, "op=generate,D=64,H=4,mask=padding")
    if s:
        report((s.q_len, s.steps, s.kv_len, s.layers, s.d_ff) == (128, 128, 128, 1, 256)
               and s.label.endswith("_padding"), f"defaults: {s.text}")

    # The cached loop against the whole sequence.
    cases = [dict(B=2, P=5, N=4, M=7, layers=2, H=2, Dh=8, F=24, norm=norm, act=act, mask=mask)
             for norm in ("post", "pre") for mask in ("none", "padding")
             for act in ("relu", "gelu", "gelu-tanh")]
    cases += [dict(B=1, P=1, N=17, M=33, layers=3, H=4, Dh=16, F=96, norm="pre", act="gelu",
                   mask="none"),
              dict(B=3, P=6, N=1, M=5, layers=1, H=3, Dh=4, F=20, norm="post", act="relu",
                   mask="padding")]
    with torch.no_grad():
        for keys in cases:
            (text, s), parts = keyed("generate", keys), {}
            call = make_workload(torch, s, parts)
            x, memory, pad = parts["x"], parts["memory"], parts["key_padding"]
            total = s.q_len + s.steps
            causal = torch.ones(total, total, dtype=torch.bool).triu(1)      # True = masked
            want = x
            for layer in parts["layers"]:
                want = layer(want, memory, tgt_mask=causal, memory_key_padding_mask=pad)
            got1, got2 = call(), call()
            err = max((got - want).abs().max().item() if got.shape == want.shape else math.inf
                      for got in (got1, got2))
            report(err <= 1e-4 and torch.isfinite(want).all().item(),
                   f"{text}: max |cached − whole| = {err:.2g}")
    return 1 if t.summary() else 0


def bert_reference(torch, s, model, ids, type_ids, key_padding):
    """op=bert written out by hand in float64 from the model's parameters (not
    its modules): the embeddings' sum and LayerNorm, then per layer the
    attention (per head, softmax(q kᵀ/√Dh − ∞ at the padded keys) v), the
    activation and the LayerNorms, post- or pre-LN as the shape says."""
    f64 = torch.float64
    b, l, h, dh = s.batch, s.q_len, s.heads, s.head_dim
    d = h * dh

    def ln(x, norm):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / torch.sqrt(var + BERT_LN_EPS) * norm.weight.to(f64) + norm.bias.to(f64)

    def act(x):
        if s.act == "relu":
            return x.clamp(min=0)
        if s.act == "gelu-tanh":
            return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))

    def linear(x, weight, bias):                     # nn.Linear's weight is [out][in]
        return x @ weight.to(f64).t() + bias.to(f64)

    pad = (torch.zeros(b, 1, 1, l, dtype=f64) if key_padding is None else
           torch.zeros(b, 1, 1, l, dtype=f64).masked_fill(key_padding.view(b, 1, 1, l), -math.inf))

    def attention(x, a):
        q, k, v = linear(x, a.in_proj_weight, a.in_proj_bias).split(d, dim=-1)
        q, k, v = (t.reshape(b, l, h, dh).transpose(1, 2) for t in (q, k, v))
        p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh) + pad, dim=-1)
        return linear((p @ v).transpose(1, 2).reshape(b, l, d), a.out_proj.weight, a.out_proj.bias)

    emb = (model.token.weight.to(f64)[ids] + model.position.weight.to(f64)[torch.arange(l)]
           + model.token_type.weight.to(f64)[type_ids])
    x = ln(emb, model.norm)
    for layer in model.encoder.layers:
        def ffn(y):
            return linear(act(linear(y, layer.linear1.weight, layer.linear1.bias)),
                          layer.linear2.weight, layer.linear2.bias)
        if s.norm_first:
            x = x + attention(ln(x, layer.norm1), layer.self_attn)
            x = x + ffn(ln(x, layer.norm2))
        else:
            x = ln(x + attention(x, layer.self_attn), layer.norm1)
            x = ln(x + ffn(x), layer.norm2)
    return x


def check_bert(binary, verbose=True):
    """op=bert's model (make_workload, on a vocabulary of 50) against
    bert_reference on tiny shapes: max |difference| <= 1e-4 on the real tokens'
    rows (twice: the call has no state; float32 against float64, 1e-5 where ~5e-7
    is seen). Also: every LayerNorm's eps is 1e-12,
    the layers have weights of their own, the padded rows are exactly 0 where
    TransformerEncoder took its nested-tensor path (post-LN with padding, the
    suites' case: its padded tokens are dropped) and the reference's elsewhere;
    and, when the attnbench binary is there, the BERT-base shape's text, label,
    GFLOP and keys that attnbench gives against the values written here.
    Returns the number of failed checks."""
    import torch
    import warnings
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")
    t = SelfTest("check_bert", verbose)
    report = t.report

    s = t.listed(binary, "op=bert,B=1,L=128,mask=padding")
    if s:
        report(s.text == "op=bert,B=1,L=128,layers=12,D=768,H=12,F=3072,norm=post,act=gelu,"
               "mask=padding" and "%.3g" % (s.flops / 1e9) == "22.3"
               and s.label == "B1_D768_H12_L128_layers12_F3072_post_gelu_padding"
               and (s.q_len, s.kv_len, s.layers, s.heads, s.head_dim, s.d_ff, s.norm_first,
                    s.act) == (128, 128, 12, 12, 64, 3072, 0, "gelu"),
               f"bert shape text, label and GFLOP: {s.text}, {s.label}, {s.flops / 1e9:.3g}")

    cases = [dict(B=2, L=7, layers=2, H=2, Dh=8, F=32, norm="post", act="gelu", mask="padding"),
             dict(B=3, L=7, layers=2, H=2, Dh=8, F=32, norm="post", act="gelu", mask="padding"),
             dict(B=4, L=9, layers=3, H=4, Dh=6, F=40, norm="post", act="relu", mask="padding"),
             dict(B=2, L=6, layers=2, H=2, Dh=8, F=32, norm="pre", act="gelu-tanh",
                  mask="padding"),
             dict(B=2, L=5, layers=1, H=3, Dh=4, F=20, norm="post", act="gelu", mask="none")]
    for keys in cases:
        (text, s), parts = keyed("bert", keys), {}
        with torch.no_grad():        # as the worker (torch.set_grad_enabled(False))
            call = make_workload(torch, s, parts, vocab=50)
        model, pad = parts["model"], parts["key_padding"]
        layers = model.encoder.layers
        eps = {model.norm.eps} | {n.eps for ly in layers for n in (ly.norm1, ly.norm2)}
        distinct = all(not torch.equal(a.self_attn.in_proj_weight, c.self_attn.in_proj_weight)
                       and not torch.equal(a.linear2.weight, c.linear2.weight)
                       for i, a in enumerate(layers) for c in list(layers)[i + 1:])
        report(eps == {BERT_LN_EPS} and len(layers) == s.layers and distinct
               and model.token.num_embeddings == 50 and model.position.num_embeddings == 512,
               f"{text}: the model's LayerNorm eps {sorted(eps)}, {len(layers)} layer(s) of their "
               f"own weights, tables {model.token.num_embeddings}/{model.position.num_embeddings}")
        want = bert_reference(torch, s, model, parts["ids"], parts["type_ids"], pad)
        real = torch.ones(s.batch, s.q_len, dtype=torch.bool) if pad is None else ~pad
        nested = pad is not None and not s.norm_first and s.act in ("gelu", "relu") and s.heads % 2 == 0
        errs, padded_ok = [], True
        for got in (call(), call()):
            errs.append((got.double() - want).abs()[real].max().item()
                        if got.shape == want.shape else math.inf)
            if got.shape == want.shape and not real.all():
                padded = got.double()[~real]
                padded_ok &= bool((padded == 0).all() if nested
                                  else ((padded - want[~real]).abs().max() <= 1e-5))
        err = max(errs)
        report(err <= 1e-5 and padded_ok and torch.isfinite(want).all().item(),
               f"{text}: max |model − reference| = {err:.2g} on the real tokens; padded rows "
               f"{'zero (nested tensors)' if nested else 'as the reference'}: "
               f"{'yes' if padded_ok else 'NO'}")
    return t.summary()


# ---- The command line ------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def add_run_arguments(p, memory_help):
    """The options every anchor takes (this script's, reports/ort_anchor.py's)."""
    p.add_argument("--suite", metavar="NAME", help="an attnbench suite (default: default)")
    p.add_argument("--shape", metavar="SHAPES", action="append",
                   help="attnbench shape(s), e.g. 'op=sdpa,B=1,H=12,L=512,Dh=64,mask=causal'; "
                        "';' separates several; repeatable (read by the attnbench binary)")
    p.add_argument("--op", metavar="OP", help="an attnbench op (sdpa, mha, encoder, ...): filters "
                                              "the suite, default op of --shape")
    p.add_argument("--threads", metavar="N", help="threads (default: all cores); a list N1,N2 runs each")
    p.add_argument("--repetitions", metavar="R", default="9", help="repetitions (default 9)")
    p.add_argument("--min-time", metavar="S", default="0.2",
                   help="seconds each repetition lasts at least (default 0.2)")
    p.add_argument("--max-call-time", metavar="S", default="0",
                   help="skip a benchmark whose warm-up call takes over S seconds; 0: never (default)")
    p.add_argument("--memory", action="store_true", help=memory_help)
    p.add_argument("--json", metavar="FILE", help="write attnbench's JSON to FILE (atomically)")
    p.add_argument("--attnbench", metavar="PATH", default=DEFAULT_ATTNBENCH,
                   help="the attnbench binary, which reads the shapes and gives their labels, "
                        "FLOPs and bytes (default: build/attnbench beside reports/)")
    p.add_argument("--no-peaks", action="store_true",
                   help="neither measure nor read attnbench's peaks (no %% of peak): measuring "
                        "them takes a minute on a many-core machine")


def check_run_arguments(a):
    """add_run_arguments' values converted and checked; UsageError when not."""
    def number(name, text, lo, hi, kind):
        try:
            v = kind(text)
        except ValueError:
            v = None
        if v is None or not math.isfinite(v) or not lo <= v <= hi:
            raise UsageError(f"--{name}: '{text}' is not a{'n integer' if kind is int else ' number'} "
                             f"in [{lo:g}, {hi:g}]")
        return v
    a.repetitions = number("repetitions", a.repetitions, 1, MAX_REPS, int)
    a.min_time = number("min-time", a.min_time, 1e-4, 3600, float)
    a.max_call_time = number("max-call-time", a.max_call_time, 0, 3600, float)
    if a.shape and a.suite:
        raise UsageError("give --shape or --suite, not both")
    if a.json is not None:
        d = os.path.dirname(os.path.abspath(a.json))
        if not a.json or os.path.isdir(a.json):
            raise UsageError(f"--json: '{a.json}' is a directory, not a file")
        if not os.path.isdir(d):
            raise UsageError(f"--json: the directory {d} does not exist")
    return a


def parse_args(argv):
    p = Parser(prog="pytorch_anchor.py", add_help=True,
               description="PyTorch 1.13 on attnbench's shapes, written as attnbench's JSON "
                           "(kernel 'pytorch'). See the docstring for the details.")
    add_run_arguments(p, "also measure the resident memory one call adds (extra_rss_bytes)")
    p.add_argument("--math", choices=("fp32", "medium", "bf16"), default="fp32",
                   help="fp32 (kernel 'pytorch'); medium: torch.set_float32_matmul_precision"
                        "('medium') ('pytorch-medium'); bf16: a bf16 module, its parameters "
                        "and inputs bfloat16 ('pytorch-bf16')")
    p.add_argument("--self-test", action="store_true",
                   help="check op=bert's model against a hand-written float64 reference and "
                        "op=generate's cached loop against the whole-sequence decoder stack on "
                        "small shapes (1 thread, no timing) and exit: 0 passed, 1 not")
    return check_run_arguments(p.parse_args(argv))


def parse_threads(text, n_cores):
    counts = []
    for item in text.split(","):
        if not re.fullmatch(r"\s*[+-]?[0-9]+", item) or not 1 <= int(item) <= 4096:
            raise UsageError(f"--threads: '{text}' is not a count (1..4096) or a list of them")
        counts.append(int(item))
    if len(counts) > MAX_THREAD_COUNTS:
        raise UsageError(f"--threads: more than {MAX_THREAD_COUNTS} counts")
    for n in counts:
        if n > n_cores:
            raise UsageError(f"--threads {n}: this process may use {n_cores} cores")
    return counts


def select_shapes(args):
    """The shapes of --shape, else of the --suite, filtered by --op, as the
    attnbench binary reads them. UsageError (bad arguments, or a shape or --op
    attnbench refuses: its message) or RuntimeError (attnbench missing or
    failing) when they cannot be had."""
    if args.shape:
        return read_shapes(args.attnbench, args.shape, args.op)
    doc = attnbench_list(args.attnbench, ["--suites", *(["--op", args.op] if args.op else [])])
    suites = {x["name"]: x["shapes"] for x in doc["suites"]}
    name = args.suite or "default"
    if name not in suites:
        raise UsageError(f"--suite: unknown suite '{name}' ({', '.join(suites)})")
    return [shape_of(e) for e in suites[name]]


def machine_probes(prog, binary, threads, peaks=True):
    """The machine's context and peaks from attnbench at each thread count, and
    the ISA % of peak is held to (None without attnbench: said on stderr)."""
    probes, probe_note = {}, None
    for n in sorted(set(threads)):
        probes[n], why = attnbench_context(binary, n, peaks)
        probe_note = probe_note or why
    if probe_note:
        print(f"{prog}: no attnbench context ({probe_note}); machine fields from "
              "Python, no peaks", file=sys.stderr)
    return probes, widest_isa_peak(probes[max(threads)])[0]


def result_of(s, n, w, probes, pct_isa):
    """One benchmark's result from its worker's report w (status ok or failed)."""
    r = {"shape": s, "threads": n, "run_name": run_name(s, n), "error": w.get("error", ""),
         "flops": s.flops, "bytes": s.bytes,
         "peak": widest_isa_peak(probes[n])[1] if pct_isa else 0.0,
         "extra_rss": w.get("extra_rss"), "real": w.get("real", []),
         "cpu": w.get("cpu", []), "iterations": w.get("iterations", 0)}
    if w["status"] == "ok":
        r["real_stats"], r["cpu_stats"] = stats(r["real"]), stats(r["cpu"])
        r["unstable"] = r["real_stats"]["cv"] > UNSTABLE_CV
    elif not r["error"]:
        r["error"] = "failed"
    return r


def write_results(prog, path, ctx, results):
    """The JSON document of ctx and results to path, atomically; 0, or 1 (said)."""
    doc = {"context": ctx, "benchmarks": [e for i, r in enumerate(results)
                                          for e in json_entries(r, i)]}
    try:
        write_atomically(path, json.dumps(doc, indent=2) + "\n")
    except OSError as e:
        print(f"{prog}: {path}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


def main(argv):
    try:
        args = parse_args(argv)
        global KERNEL
        KERNEL = {"fp32": "pytorch", "medium": "pytorch-medium", "bf16": "pytorch-bf16"}[args.math]
        if args.self_test:
            import importlib.util
            if importlib.util.find_spec("torch") is None:
                print(f"pytorch_anchor.py: PyTorch is not importable by {sys.executable}",
                      file=sys.stderr)
                return 1
            failed = check_bert(args.attnbench) + check_sdpa_forms()
            return check_generate(args.attnbench) or (1 if failed else 0)
        cpus = core_cpus()
        threads = parse_threads(args.threads, len(cpus)) if args.threads else [len(cpus)]
        shapes = select_shapes(args)
        untimed = [s for s in shapes if s.kv != "f32" and s.op != "sdpa"]
        if untimed:   # its generation loop keeps fp32 caches: not the shape asked for
            print(f"pytorch_anchor.py: not timed, the cache stored narrower than fp32 (this "
                  f"anchor's generation keeps fp32 caches): "
                  f"{', '.join(s.text for s in untimed)}", file=sys.stderr)
            shapes = [s for s in shapes if s not in untimed]
    except UsageError as e:              # this script's, or attnbench's on a shape or --op
        print(f"pytorch_anchor.py: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:            # attnbench missing or failing
        print(f"pytorch_anchor.py: {e}", file=sys.stderr)
        return 1

    import importlib.util
    if importlib.util.find_spec("torch") is None:
        print(f"pytorch_anchor.py: PyTorch is not importable by {sys.executable}; install "
              "Debian's python3-torch and run this with /usr/bin/python3", file=sys.stderr)
        return 1

    probes, pct_isa = machine_probes("pytorch_anchor.py", args.attnbench, threads,
                                     not args.no_peaks)

    results, workers, skipped = [], [], []
    total, progress = len(shapes) * len(threads), sys.stderr.isatty()
    for si, s in enumerate(shapes):
        for ti, n in enumerate(threads):
            name = run_name(s, n)
            if progress:
                print(f"\r\033[K[{si * len(threads) + ti + 1}/{total}] {name}", end="",
                      file=sys.stderr, flush=True)
            try:
                w = run_benchmark(s, n, cpus, args)
            except KeyboardInterrupt:
                print("\npytorch_anchor.py: interrupted; nothing written", file=sys.stderr)
                return 130
            w["threads"] = n
            workers.append(w)
            if w["status"] == "skipped":
                skipped.append(f"  {name} ({w['warmup']:.1f} s)")
                continue
            results.append(result_of(s, n, w, probes, pct_isa))
    if progress:
        print("\r\033[K", end="", file=sys.stderr, flush=True)

    print_table(results)
    if skipped:
        print(f"note: {len(skipped)} benchmark{'' if len(skipped) == 1 else 's'} skipped, one call "
              f"taking over {args.max_call_time:g} s:\n" + "\n".join(skipped))
    pinned = (all(w.get("affinity") for w in workers)
              and os.environ.get("OMP_PROC_BIND", "close") not in ("false", "FALSE"))
    if not pinned:
        print("note: threads could not be pinned to cores")
    notes = {w.get("memory_note") for w in workers} - {None}
    for note in sorted(notes):
        print(f"note: --memory: {note}; extra_rss_bytes not measured")
    ctx = build_context(probes[max(threads)], args, max(threads), pinned, pct_isa, workers)
    if any(s.op == "bert" for s in shapes):
        ctx["bert_form"] = BERT_FORM
    if ctx["blas_is_reference"]:
        print(f"note: PyTorch's GEMMs run on the reference (netlib) BLAS {ctx['blas_library']}; "
              "install libopenblas0-pthread for a meaningful anchor (the anchors in docs/performance.md used OpenBLAS)")
    for t in ctx["threads_seen"]:
        if t["torch_num_threads"] != t["threads"]:
            print(f"note: asked for {t['threads']} threads, torch uses {t['torch_num_threads']}")
    if pct_isa:
        print(f"peaks: from attnbench ({ctx.get('peaks_measured_at', '?')}); % of peak is "
              f"against {pct_isa} at the threads used")

    if args.json and write_results("pytorch_anchor.py", args.json, ctx, results):
        return 1
    return 1 if any(r["error"] for r in results) else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        sys.exit(worker_main())
    sys.exit(main(sys.argv[1:]))
