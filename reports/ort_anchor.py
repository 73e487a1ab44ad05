#!/usr/bin/python3
"""ort_anchor.py — ONNX Runtime (the npm package onnxruntime-node, CPU) timed on
attnbench's shapes, written as attnbench's JSON under the kernel name
"onnxruntime": a second anchor beside reports/pytorch_anchor.py.

    /usr/bin/python3 reports/ort_anchor.py [--suite NAME | --shape SHAPES ...] [--op OP]
        [--threads N[,N2..]] [--repetitions R] [--min-time S] [--max-call-time S]
        [--memory] [--json FILE] [--attnbench PATH] [--sdpa-form FORM] [--keep-models]
    /usr/bin/python3 reports/ort_anchor.py --self-test

Needs Debian's python3-onnx and python3-numpy (run it with /usr/bin/python3), Node
and the npm package, installed from reports/ort_anchor/package-lock.json by

    npm ci --prefix reports/ort_anchor

(reports/ort_anchor/.npmrc sets ignore-scripts: onnxruntime-node's postinstall
downloads the CUDA and TensorRT providers from api.nuget.org and fails without
them; the CPU library and the Node binding ship inside the package). Example:

    /usr/bin/python3 reports/ort_anchor.py --suite anchors --threads 1 --memory \\
        --json results/anchors-onnxruntime.json

Design. This script builds one .onnx model per shape (onnx.helper; weights and
inputs from numpy) in a temporary folder under build/ort_anchor/ (deleted after
the run unless --keep-models), and reports/ort_anchor/time_session.js loads it
into an InferenceSession and times `await session.run(feeds, fetches)`, printing
the timings as JSON. The shapes are the attnbench binary's (`attnbench list
--json`, --attnbench PATH, default build/attnbench: build it first, make), read
as pytorch_anchor.py reads them: their canonical text, label, FLOPs and bytes
carried unchanged into the run names and the JSON, so both anchors agree with
attnbench by construction (see its docstring). That reading, the machine context
and peaks, the statistics, the table and the JSON entries are pytorch_anchor.py's
functions (imported; it imports torch only inside its worker).

Graphs (fp32; ORT's com.microsoft contrib ops, as its transformer optimizer
fuses a BERT model; graph optimization level "all"):
  encoder  post-LN (norm=post, BERT): Attention (x·Wqkv + bqkv, H heads, the mask;
           fused QKV projection) → MatMul Wo → SkipLayerNormalization(·, x, bias bo)
           → MatMul W1 → BiasGelu (act=gelu; FastGelu for gelu-tanh, Add + Relu for
           relu) → MatMul W2 → SkipLayerNormalization(·, h, bias b2); eps 1e-5.
           pre-LN (norm=pre): LayerNormalization → Attention → MatMul Wo →
           SkipLayerNormalization(·, x, bias bo), its 4th output the residual sum h
           (x + attention + bo) → MatMul W1 → BiasGelu → MatMul W2 → Add b2 → Add h.
  decoder  the encoder's chain (post- or pre-LN, the same ops) with a cross-attention
           sublayer after the self-attention, which is Attention with unidirectional=1:
           MatMul Wq (the stream), MatMul Wk, MatMul Wv (the memory [B][M][D]) →
           MultiHeadAttention (bias bq|bk|bv; mask=padding: key_padding_mask [B][M],
           the memory's last b·M/(2B) tokens) → MatMul Wo → SkipLayerNormalization.
  mha      self-attention: Attention (fused QKV projection) → MatMul Wo → Add bo;
           cross=1: MatMul Wq, MatMul Wk, MatMul Wv → MultiHeadAttention (with the
           bias bq|bk|bv) → MatMul Wo → Add bo. An explicit scale is the ops' `scale`.
  sdpa     Q [B][Lq][H·Dh] (ORT's layout: heads in the last axis; the output too);
           one of three forms, chosen per shape (--sdpa-form auto, below):
           mha  com.microsoft MultiHeadAttention, K and V [B][Lk][Hkv·Dh]. Without a
                mask it takes MLAS's flash attention (K and V transposed to heads
                first, then tiles sized to the L2 cache: no Lq×Lk scores); with any
                mask the unfused path (all Lq×Lk scores, the mask added, softmax, ·V).
                causal and causal-br with Lq = Lk: unidirectional=1; with Lq != Lk
                (ORT's unidirectional is then neither kind: the self-test saw it) an
                additive attention_bias [1][1][Lq][Lk]; padding: key_padding_mask
                [B][Lk] (int32, 1 = a real key); keep, bias: attention_bias [B or
                1][1][Lq][Lk]. Grouped-query (Hkv < H): K and V expanded to H heads
                in the graph (Reshape, Expand, Reshape), as PyTorch's
                repeat_interleave in its call.
           mha-bnsh  MultiHeadAttention with K and V [B][Hkv][Lk][Dh] (attnbench's
                layout), which ORT reads in place (its unfused path; no transpose, no
                flash); masks as mha. Grouped-query with one query that sees every
                key (decoding): the H/Hkv query heads of each K/V head are passed as
                that many query rows of one head (Q [B][1][H·Dh] reshaped and
                transposed to [B][H/Hkv][Hkv·Dh], the output back: a few KiB), so
                the cache is read once and never copied; otherwise K, V expanded.
           gqa  com.microsoft GroupQueryAttention (kv_num_heads = Hkv, no expansion):
                causal bottom-right by construction, so only for causal-br, causal
                with Lq = Lk, and none with Lq = 1. Without a cache (Lq = Lk) its
                prompt path, present_key / present_value outputs [B][Hkv][Lk][Dh].
                With Lk > Lq the KV cache past_key / past_value [B][Hkv][Lk][Dh]
                holds the first Lk − Lq keys and values, the call's key and value
                inputs are the last Lq, written into the cache in place (present_*
                are the same buffers: ORT's past-present buffer sharing, as ORT
                GenAI decodes; seqlens_k = Lk − 1, total_sequence_length = Lk; ORT
                needs B = 1 when Lq > 1 with a cache). onnxruntime-node copies every
                output into a new JavaScript buffer after each call, the shared
                cache included, which makes this form slow for decoding here.
           auto (measured on this machine, 1 thread): decoding (Lq = 1, every key
                seen) mha-bnsh (Lk 4096, H 32, Hkv 8: about 2× faster than gqa);
                causal with Lq = Lk >= 1024 gqa (L 2048: 119 ms against 262 ms for
                mha's masked path; L 512 a tie, L 256 mha 17% faster); everything
                else mha (unmasked L 2048: flash 140 ms; GQA's non-causal mode,
                causal=0, 178 ms).
  bert     EmbedLayerNormalization (input_ids, segment_ids; the word [30522][D],
           position [max(512, L)][D] and segment [2][D] tables, γ, β; mask=padding:
           the attention mask [B][L] → its mask_index output [B], each sequence's
           count of real tokens), then `layers` encoder layers as above (each its
           own weights), the Attention ops' mask_index input that [B] (the padding
           is the last keys: ORT's end-position form, as its BERT optimizer fuses
           it); no final LayerNorm; every eps 1e-12. ids uniform over the
           vocabulary, segment 0 for the first half of each sequence, 1 after.
           The padded tokens' rows are computed (as attnbench's).
  generate: not built (a cached decoding loop over several layers; skipped with
           the reason printed).
Masks: ORT's masks add mask_filter_value (−10000) instead of −inf: the same result
where a query sees a key. padall's all-padding batch and rows that see no key give
ORT uniform weights, attnbench zeros (timings are unaffected; the self-test skips
those rows). Inputs and weights are uniform in the ranges of pytorch_anchor.py
(x, Q, K, V in [-1, 1); weights and biases ±1/√D, W2 ±1/√F; LayerNorm γ 1±0.2,
β ±0.2), from numpy's generator seeded with attnbench's seed.

Threads. Each benchmark runs in a fresh `node` process bound to the first N cores
(one CPU each, sched_setaffinity before exec), with intraOpNumThreads = N,
interOpNumThreads = 1 and sequential execution (ORT's own thread pool: no OpenMP;
its default spin-waiting left on). Default: all cores, as attnbench.

Timing mirrors pytorch_anchor.py and harness/measure/bench.c: one warm-up call;
iterations calibrated (×1.2 min-time / t, at most ×10 a step) until one batch lasts
min-time (default 0.2 s); R repetitions (default 9), wall time by process.hrtime,
CPU time of all the process's threads by process.cpuUsage. Every output is
preallocated once and passed to run() as a fetch (ORT writes into it; no output
allocation per call); the JavaScript call's overhead is part of ORT's cost.
--max-call-time S skips a benchmark whose warm-up call takes over S seconds.

--memory: the peak RSS the warm-up call adds over the RSS before it (after the
session was created and its inputs loaded; /proc/self/clear_refs 5, VmHWM): ORT's
arena keeps what the first call needed, so a later call adds ~0. That is the call's
working memory, its outputs excluded (preallocated) and a first call's one-time
costs included (a MiB or two: thread stacks, code).

JSON: attnbench's schema, as pytorch_anchor.py writes it (kernel "onnxruntime",
chosen_by "named"); the context adds ort_version (the version the installed
package reports), node_version, the execution provider, the graph forms used
(encoder_form, bert_form, mha_form, sdpa_form_<form> for each sdpa form used) and per thread
count the threads asked for and the OS threads the node process had (Node's own
included); PyTorch's fields (BLAS, OpenMP binding, thread variables) are left out.

--self-test: every graph form against a float64 numpy reference on small shapes
(every op, norm, act and mask kind this script builds; both MultiHeadAttention
layouts, GQA with and without a cache, grouped-query and not): max |difference|
<= 1e-4 on the rows that see a key, 1 thread; then auto's form choices, and one
short timed run through the command line whose JSON is read back (op=bert's
sequences_per_second and ms_per_sequence included; the checks' op=bert models
have a vocabulary of 50). Its shapes are read by the attnbench binary too.
Exit status: 0; 1 when a benchmark or check failed, the file could not be
written or onnx / numpy / node / the package / the attnbench binary are
missing; 2 for bad arguments, shapes attnbench refuses included.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pytorch_anchor as pa  # noqa: E402  (stdlib only at import: torch is its worker's)

KERNEL = "onnxruntime"
pa.KERNEL = KERNEL                   # pa's run names, table and JSON entries name this kernel
NODE_DIR = os.path.join(HERE, "ort_anchor")
NODE_SCRIPT = os.path.join(NODE_DIR, "time_session.js")
BUILD_DIR = os.path.normpath(os.path.join(HERE, os.pardir, "build", "ort_anchor"))
MASK_FILTER = -10000.0               # ORT's mask_filter_value (default)
GQA_CAUSAL_FROM = 1024               # auto: causal through GQA from this L (a tie at 512)
LN_EPS = 1e-5
BERT_EPS = pa.BERT_LN_EPS            # op=bert: every LayerNorm (BERT's 1e-12)
OPSET = 17                           # LayerNormalization; ORT 1.30 reads it
MS = "com.microsoft"
SDPA_FORMS = ("auto", "mha", "mha-bnsh", "gqa")

LAYER_FORM = {
    "encoder": ("post-LN: Attention (fused QKV) -> MatMul -> SkipLayerNormalization -> MatMul -> "
                "BiasGelu -> MatMul -> SkipLayerNormalization; pre-LN: LayerNormalization -> "
                "Attention -> MatMul -> SkipLayerNormalization (+ its residual-sum output) -> "
                "MatMul -> BiasGelu -> MatMul -> Add -> Add (com.microsoft ops, fp32)"),
    "decoder": ("the encoder's chain with a cross-attention sublayer after the causal "
                "self-attention (Attention, unidirectional=1): MatMul Wq, Wk, Wv -> "
                "MultiHeadAttention (bias, memory key_padding_mask) -> MatMul -> "
                "SkipLayerNormalization"),
}
BERT_FORM = ("EmbedLayerNormalization (word, position and segment tables, gamma, beta, the "
             "attention mask -> mask_index [B]), then per layer the encoder's chain with "
             "mask_index as the Attention's mask_index input; no final LayerNorm; eps 1e-12")
MHA_FORM = ("self: Attention (fused QKV) -> MatMul -> Add; cross: MatMul x3 -> MultiHeadAttention "
            "(bias) -> MatMul -> Add")
SDPA_FORM_TEXT = {
    "mha": ("com.microsoft MultiHeadAttention, Q [B][Lq][H*Dh], K, V [B][Lk][H*Dh] (MLAS flash "
            "attention when unmasked; masks: unidirectional=1 (Lq = Lk), key_padding_mask, "
            "attention_bias; Hkv < H: K, V expanded in the graph)"),
    "mha-bnsh": ("com.microsoft MultiHeadAttention, Q [B][Lq][H*Dh], K, V [B][Hkv][Lk][Dh] read in "
                 "place (unfused path); Hkv < H, one query that sees every key: the H/Hkv query "
                 "heads of a K/V head as query rows of one head, else K, V expanded in the graph"),
    "gqa": ("com.microsoft GroupQueryAttention (kv_num_heads = Hkv), bottom-right causal; with a "
            "cache: past/present KV [B][Hkv][Lk][Dh] shared in place (preallocated outputs), the "
            "last Lq keys and values fed as key/value"),
}


class Skip(Exception):
    """A shape this script does not build: printed, not timed."""


# ---- Graph building ------------------------------------------------------------

@dataclass
class Workload:
    """One model: the graph, what to feed, what it outputs, and a float64 reference."""
    form: str                                       # the graph, in words (JSON context)
    short: str = ""                                 # its name in the self-test's lines
    nodes: list = field(default_factory=list)
    inits: list = field(default_factory=list)
    inputs: list = field(default_factory=list)      # (name, numpy array)
    outputs: list = field(default_factory=list)     # (name, dims, alias input or None)
    reference: object = None                        # () -> expected first output (float64)
    valid_rows: object = None                       # [B][Lq] bool: rows that see a key, or None
    _n: int = 0

    def name(self, stem):
        self._n += 1
        return f"{stem}_{self._n}"

    def init(self, stem, array):
        from onnx import numpy_helper
        n = self.name(stem)
        self.inits.append(numpy_helper.from_array(array, n))
        return n

    def feed(self, name, array):
        self.inputs.append((name, array))
        return name

    def node(self, op, ins, outs=None, domain="", **attrs):
        from onnx import helper
        outs = outs or [self.name(op.lower())]
        self.nodes.append(helper.make_node(op, ins, outs, domain=domain or None, **attrs))
        return outs[0] if len(outs) == 1 else outs

    def model(self):
        from onnx import TensorProto, helper
        import numpy as np
        types = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}
        ins = [helper.make_tensor_value_info(n, types[a.dtype], list(a.shape)) for n, a in self.inputs]
        outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(d)) for n, d, _ in self.outputs]
        graph = helper.make_graph(self.nodes, "attnbench", ins, outs, self.inits)
        m = helper.make_model(graph, producer_name="attnbench ort_anchor.py",
                              opset_imports=[helper.make_opsetid("", OPSET),
                                             helper.make_opsetid(MS, 1)])
        m.ir_version = 8
        return m


class Filler:
    """Uniform values as pytorch_anchor.py's `filled`: center ± amp, float32."""

    def __init__(self, seed):
        import numpy as np
        self.np, self.rng = np, np.random.default_rng(seed)

    def __call__(self, shape, center=0.0, amp=1.0):
        return ((self.rng.random(shape, dtype=self.np.float32) * 2 - 1) * amp
                + center).astype(self.np.float32)


def mask_parts(s, fill):
    """pytorch_anchor.make_workload's mask parts (harness/ops/workload.c), in numpy:
    real [B][Lk] (True = a real key) or None; keep and bias [B][Lq][Lk] (keep, bias) or
    [Lq][Lk] (all), or None; hidden [Lq][Lk] (True = hidden by the causal mask) or None."""
    np = fill.np
    b, lq, lk = s.batch, s.q_len, s.kv_len
    real = None
    counts = pa.real_keys(s)
    if counts is not None:
        real = np.arange(lk)[None, :] < np.array(counts)[:, None]
    rows = (b, lq, lk) if s.mask in ("keep", "bias") else (lq, lk)
    keep = fill(rows) * 0.5 + 0.5 < 0.7 if s.mask in ("keep", "all") else None
    bias = fill(rows) if s.mask in ("bias", "all") else None
    kind = pa.causal_kind(s)
    i, j = np.arange(lq)[:, None], np.arange(lk)[None, :]
    hidden = (None if not kind else j > i + (lk - lq) if kind == "bottom-right" else j > i)
    return real, keep, bias, hidden


def reference_mask(s, parts):
    """The additive mask [B][1][Lq][Lk] (float64, −inf where hidden) and the rows that
    see at least one key [B][Lq]."""
    import numpy as np
    real, keep, bias, hidden = parts
    b, lq, lk = s.batch, s.q_len, s.kv_len
    m = np.zeros((b, 1, lq, lk))
    if hidden is not None:
        m[:, :, hidden] = -np.inf
    if real is not None:
        m[~real[:, None, None, :].repeat(lq, axis=2)] = -np.inf
    if keep is not None:
        k = keep.reshape(-1, 1, lq, lk) if keep.ndim == 3 else keep[None, None]
        m = np.where(k, m, -np.inf)
    if bias is not None:
        m = m + (bias.reshape(-1, 1, lq, lk) if bias.ndim == 3 else bias[None, None])
    return m, np.isfinite(m).any(axis=-1)[:, 0, :]


def ort_bias(s, parts, with_causal):
    """The attention_bias [B or 1][1][Lq][Lk] for keep / bias (and the causal mask when
    with_causal: when unidirectional cannot express it), or None."""
    import numpy as np
    real, keep, bias, hidden = parts
    lq, lk = s.q_len, s.kv_len
    if keep is None and bias is None and not (with_causal and hidden is not None):
        return None
    shape = keep.shape if keep is not None else bias.shape if bias is not None else (lq, lk)
    t = np.zeros(shape, np.float32)
    if bias is not None:
        t += bias
    if keep is not None:
        t = np.where(keep, t, MASK_FILTER).astype(np.float32)
    if with_causal and hidden is not None:
        t = np.where(hidden, MASK_FILTER, t).astype(np.float32)
    return t.reshape(-1, 1, lq, lk)


def softmax_attention(q, k, v, scale, mask):
    """[B][H][Lq][Dh] float64: softmax(q kᵀ scale + mask) v; rows that see no key → 0."""
    import numpy as np
    sc = np.einsum("bhqd,bhkd->bhqk", q, k) * scale + mask
    top = np.max(sc, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(sc - top)
    den = e.sum(axis=-1, keepdims=True)
    return np.einsum("bhqk,bhkd->bhqd", e / np.where(den > 0, den, 1.0), v)


def gelu(x, act):
    import numpy as np
    if act == "relu":
        return np.maximum(x, 0.0)
    if act == "gelu-tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def layer_norm(x, g, b, eps=LN_EPS):
    import numpy as np
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def heads(x, h):
    """[B][L][H·Dh] → [B][H][L][Dh]."""
    b, l, d = x.shape
    return x.reshape(b, l, h, d // h).transpose(0, 2, 1, 3)


def unheads(x):
    """[B][H][L][Dh] → [B][L][H·Dh]."""
    b, h, l, dh = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, l, h * dh)


def attention_mask_inputs(w, s, parts, padding_name):
    """The Attention / MultiHeadAttention mask inputs: (padding mask name or "",
    attention_bias name or "", unidirectional)."""
    import numpy as np
    real = parts[0]
    pad = "" if real is None else w.feed(padding_name, real.astype(np.int32))
    # unidirectional=1 hides key j > i + Lk − Lq (bottom-right); with Lq = Lk that is
    # both causal kinds; otherwise the causal mask goes into attention_bias.
    uni = pa.causal_kind(s) is not None and s.q_len == s.kv_len
    bias = ort_bias(s, parts, with_causal=not uni)
    return pad, "" if bias is None else w.feed("attention_bias", bias), int(uni)


def layer_weights(s, fill, decoder):
    """One layer's weights, drawn in this order: per attention Wqkv [in][out], bqkv,
    Wo, bo; per LayerNorm γ, β; W1, b1, W2, b2."""
    d, f = s.heads * s.head_dim, s.d_ff
    wamp = 1.0 / math.sqrt(d)
    attn = [(fill((d, 3 * d), 0, wamp), fill((3 * d,), 0, wamp),      # [in][out]
             fill((d, d), 0, wamp), fill((d,), 0, wamp)) for _ in range(1 + decoder)]
    norms = [(fill((d,), 1, 0.2), fill((d,), 0, 0.2)) for _ in range(2 + decoder)]
    ffn = (fill((d, f), 0, wamp), fill((f,), 0, wamp),
           fill((f, d), 0, 1.0 / math.sqrt(f)), fill((d,), 0, wamp))
    return {"attn": attn, "norms": norms, "ffn": ffn}


def add_layer(w, s, xin, lw, eps, self_mask, memin=None, memory_padding="", out=None):
    """Appends one encoder layer (decoder: memin names the memory) to w's graph:
    a chain of sublayers (self-attention, for the decoder cross-attention, the
    FFN), each joined to the residual stream by SkipLayerNormalization (its bias
    input the sublayer's last bias). self_mask: the Attention op's (mask_index
    name or "", attention_bias name or "", unidirectional); memory_padding the
    cross-attention's key_padding_mask name or "". Returns the output's name (out,
    or a fresh one)."""
    d, h = s.heads * s.head_dim, s.heads
    decoder = memin is not None
    attn_weights, norms = lw["attn"], lw["norms"]
    w1, b1, w2, b2 = lw["ffn"]
    ln = dict(domain=MS, epsilon=eps)
    out = out or w.name("layer_out")

    def self_attention(t):           # Attention: the fused QKV projection
        wqkv, bqkv, wo, _ = attn_weights[0]
        pad, abias, uni = self_mask
        ins = [t, w.init("wqkv", wqkv), w.init("bqkv", bqkv), pad, "", abias]
        while ins[-1] == "":
            ins.pop()
        a = w.node("Attention", ins, domain=MS, num_heads=h, unidirectional=uni)
        return w.node("MatMul", [a, w.init("wo", wo)])

    def cross_attention(t):          # MultiHeadAttention over the memory
        import numpy as np
        wqkv, bqkv, wo, _ = attn_weights[1]
        proj = [w.node("MatMul", [src, w.init(n, np.ascontiguousarray(wqkv[:, i * d:(i + 1) * d]))])
                for i, (n, src) in enumerate((("wq", t), ("wk", memin), ("wv", memin)))]
        ins = proj + [w.init("bqkv", bqkv)] + ([memory_padding] if memory_padding else [])
        a = w.node("MultiHeadAttention", ins, domain=MS, num_heads=h)
        return w.node("MatMul", [a, w.init("wo", wo)])

    def feed_forward(t):
        m = w.node("MatMul", [t, w.init("w1", w1)])
        if s.act == "relu":
            m = w.node("Relu", [w.node("Add", [m, w.init("b1", b1)])])
        else:
            m = w.node("BiasGelu" if s.act == "gelu" else "FastGelu", [m, w.init("b1", b1)], domain=MS)
        return w.node("MatMul", [m, w.init("w2", w2)])

    subs = [(self_attention, attn_weights[0][3])]
    if decoder:
        subs.append((cross_attention, attn_weights[1][3]))
    subs.append((feed_forward, b2))

    if not s.norm_first:             # y = LN_i(y + sublayer_i(y))
        y = xin
        for i, (sub, bias) in enumerate(subs):
            y = w.node("SkipLayerNormalization",
                       [sub(y), y, w.init("ln_g", norms[i][0]), w.init("ln_b", norms[i][1]),
                        w.init("bias", bias)], [out] if i == len(subs) - 1 else None, **ln)
    else:                            # y = y + sublayer_i(LN_i(y)): LN_i+1 fused with the sum
        y = xin
        n = w.node("LayerNormalization", [xin, w.init("ln_g", norms[0][0]), w.init("ln_b", norms[0][1])],
                   axis=-1, epsilon=eps)
        for i, (sub, bias) in enumerate(subs):
            o = sub(n)
            if i == len(subs) - 1:
                w.node("Add", [w.node("Add", [o, w.init("bias", bias)]), y], [out])
            else:                    # outputs: LN_i+1(o + y + bias) and the sum itself
                n, _, _, y = w.node("SkipLayerNormalization",
                                    [o, y, w.init("ln_g", norms[i + 1][0]),
                                     w.init("ln_b", norms[i + 1][1]), w.init("bias", bias)],
                                    [w.name("normed"), "", "", w.name("residual")], **ln)
    return out


def layer_reference(s, y, lw, self_mask, eps, memory=None, memory_mask=None):
    """add_layer's layer in float64 numpy: y [B][L][D]; self_mask the additive
    [B or 1][1][L][L] mask of the self-attention; memory [B][M][D] and its
    additive memory_mask for the decoder's cross-attention."""
    d, h = s.heads * s.head_dim, s.heads
    scale = 1.0 / math.sqrt(s.head_dim)

    def attention(t, src, weights, m):
        wqkv, bqkv, wo, bo = weights
        q, k, v = (heads(a @ wqkv[:, i * d:(i + 1) * d] + bqkv[i * d:(i + 1) * d], h)
                   for i, a in enumerate((t, src, src)))
        return unheads(softmax_attention(q, k, v, scale, m)) @ wo + bo

    w1, b1, w2, b2 = lw["ffn"]
    refs = [lambda t: attention(t, t, lw["attn"][0], self_mask)]
    if memory is not None:
        refs.append(lambda t: attention(t, memory, lw["attn"][1], memory_mask))
    refs.append(lambda t: gelu(t @ w1 + b1, s.act) @ w2 + b2)
    for ref, (g, be) in zip(refs, lw["norms"]):
        y = (layer_norm(y + ref(y), g, be, eps) if not s.norm_first
             else y + ref(layer_norm(y, g, be, eps)))
    return y


def build_layer(s, fill):
    """op=encoder and op=decoder: see the docstring (add_layer)."""
    import numpy as np
    b, l, h, dh = s.batch, s.q_len, s.heads, s.head_dim
    d = h * dh
    decoder = s.op == "decoder"
    w = Workload(LAYER_FORM[s.op], f"{'pre' if s.norm_first else 'post'}-LN fused")
    parts = mask_parts(s, fill)      # the encoder's mask; the decoder's: its memory's padding
    x = fill((b, l, d))
    memory = fill((b, s.kv_len, d)) if decoder else None
    lw = layer_weights(s, fill, decoder)

    xin = w.feed("x", x)
    if decoder:
        memin = w.feed("memory", memory)
        real = parts[0]
        mem_pad = ("" if real is None else
                   w.feed("memory_key_padding_mask", real.astype(np.int32)))
        add_layer(w, s, xin, lw, LN_EPS, ("", "", 1), memin, mem_pad, out="y")
    else:
        add_layer(w, s, xin, lw, LN_EPS, attention_mask_inputs(w, s, parts, "mask_index"), out="y")
    w.outputs.append(("y", (b, l, d), None))

    def reference():
        mask, _ = reference_mask(s, parts)
        if not decoder:
            return layer_reference(s, x.astype(np.float64), lw, mask, LN_EPS)
        causal = np.where(np.triu(np.ones((l, l), bool), 1), -np.inf, 0.0)
        return layer_reference(s, x.astype(np.float64), lw, causal, LN_EPS,
                               memory.astype(np.float64), mask)
    w.reference = reference
    w.valid_rows = (np.ones((b, l), bool) if decoder else reference_mask(s, parts)[1])
    return w


def build_bert(s, fill, vocab=None):
    """op=bert: see the docstring. vocab: the token table's rows (default BERT-base's
    30522; the self-test's are fewer)."""
    import numpy as np
    b, l, h, dh = s.batch, s.q_len, s.heads, s.head_dim
    d = h * dh
    vocab = vocab or pa.BERT_VOCAB
    w = Workload(BERT_FORM, f"EmbedLayerNormalization + {s.layers} "
                            f"{'pre' if s.norm_first else 'post'}-LN fused layer(s)")
    parts = mask_parts(s, fill)      # real [B][L] (mask=padding) or None
    tables = [fill((vocab, d)), fill((max(pa.BERT_POSITIONS, l), d)), fill((pa.BERT_TYPES, d))]
    gamma, beta = fill((d,), 1, 0.2), fill((d,), 0, 0.2)
    layers = [layer_weights(s, fill, False) for _ in range(s.layers)]
    ids = fill.rng.integers(0, vocab, size=(b, l), dtype=np.int32)
    type_ids = np.ascontiguousarray(np.broadcast_to((np.arange(l) >= l // 2).astype(np.int32), (b, l)))

    real = parts[0]
    ins = [w.feed("input_ids", ids), w.feed("segment_ids", type_ids)]
    ins += [w.init(n, a) for n, a in zip(("word_embedding", "position_embedding",
                                         "segment_embedding"), tables)]
    ins += [w.init("emb_ln_g", gamma), w.init("emb_ln_b", beta)]
    if real is not None:             # mask → mask_index [B]: each sequence's real tokens
        ins.append(w.feed("attention_mask", real.astype(np.int32)))
    # ORT's shape inference wants both outputs; without a mask, mask_index is unused.
    y, mask_index = w.node("EmbedLayerNormalization", ins,
                           [w.name("embeddings"), w.name("mask_index")], domain=MS,
                           epsilon=BERT_EPS)
    mask_index = mask_index if real is not None else ""
    for i, lw in enumerate(layers):
        y = add_layer(w, s, y, lw, BERT_EPS, (mask_index, "", 0),
                      out="y" if i == len(layers) - 1 else None)
    w.outputs.append(("y", (b, l, d), None))

    def reference():
        mask, _ = reference_mask(s, parts)
        t64 = [a.astype(np.float64) for a in tables]
        y = layer_norm(t64[0][ids] + t64[1][np.arange(l)] + t64[2][type_ids], gamma, beta, BERT_EPS)
        for lw in layers:
            y = layer_reference(s, y, lw, mask, BERT_EPS)
        return y
    w.reference = reference
    w.valid_rows = reference_mask(s, parts)[1]
    return w


def build_mha(s, fill):
    """op=mha: see the docstring."""
    import numpy as np
    b, lq, lk, h = s.batch, s.q_len, s.kv_len, s.heads
    d = h * s.head_dim
    w = Workload(MHA_FORM, "MultiHeadAttention" if s.cross else "Attention")
    wamp = 1.0 / math.sqrt(d)
    parts = mask_parts(s, fill)
    xq = fill((b, lq, d))
    xkv = fill((b, lk, d)) if s.cross else xq
    wqkv, bqkv = fill((d, 3 * d), 0, wamp), fill((3 * d,), 0, wamp)
    wo, bo = fill((d, d), 0, wamp), fill((d,), 0, wamp)
    scale = s.scale if s.scale != 0.0 else 1.0 / math.sqrt(s.head_dim)
    extra = {"scale": s.scale} if s.scale != 0.0 else {}
    qin = w.feed("x", xq)
    if not s.cross:
        pad, abias, uni = attention_mask_inputs(w, s, parts, "mask_index")
        ins = [qin, w.init("wqkv", wqkv), w.init("bqkv", bqkv), pad, "", abias]
        while ins[-1] == "":
            ins.pop()
        a = w.node("Attention", ins, domain=MS, num_heads=h, unidirectional=uni, **extra)
    else:
        kin = w.feed("memory", xkv)
        pad, abias, uni = attention_mask_inputs(w, s, parts, "key_padding_mask")
        q = w.node("MatMul", [qin, w.init("wq", np.ascontiguousarray(wqkv[:, :d]))])
        k = w.node("MatMul", [kin, w.init("wk", np.ascontiguousarray(wqkv[:, d:2 * d]))])
        v = w.node("MatMul", [kin, w.init("wv", np.ascontiguousarray(wqkv[:, 2 * d:]))])
        ins = [q, k, v, w.init("bqkv", bqkv), pad, abias]
        while ins[-1] == "":
            ins.pop()
        a = w.node("MultiHeadAttention", ins, domain=MS, num_heads=h, unidirectional=uni, **extra)
    w.node("Add", [w.node("MatMul", [a, w.init("wo", wo)]), w.init("bo", bo)], ["y"])
    w.outputs.append(("y", (b, lq, d), None))

    def reference():
        mask, _ = reference_mask(s, parts)
        q = heads(xq.astype(np.float64) @ wqkv[:, :d] + bqkv[:d], h)
        k = heads(xkv.astype(np.float64) @ wqkv[:, d:2 * d] + bqkv[d:2 * d], h)
        v = heads(xkv.astype(np.float64) @ wqkv[:, 2 * d:] + bqkv[2 * d:], h)
        return unheads(softmax_attention(q, k, v, scale, mask)) @ wo + bo
    w.reference = reference
    w.valid_rows = reference_mask(s, parts)[1]
    return w


def gqa_expressible(s):
    """None when GroupQueryAttention computes this shape's mask (bottom-right causal),
    else why not."""
    if s.mask not in ("causal-br", "causal", "none"):
        return f"mask={s.mask} (GroupQueryAttention is causal only)"
    if s.mask == "causal" and s.q_len != s.kv_len:
        return "top-left causal with Lq != Lk (GroupQueryAttention is bottom-right)"
    if s.mask == "none" and s.q_len != 1:
        return "mask=none with Lq > 1 (GroupQueryAttention is causal)"
    if s.q_len > s.kv_len:
        return "Lq > Lk (rows that see no key)"
    if s.batch > 1 and 1 < s.q_len < s.kv_len:
        return "B > 1 with Lq > 1 and a cache (ORT: sequence_length > 1 needs batch_size 1)"
    return None


def sees_all_keys(s):
    """Every query sees every key (no mask, or one query under causal-br)."""
    return s.mask == "none" or (s.mask == "causal-br" and s.q_len == 1)


def sdpa_form(s, requested):
    """The form used for this sdpa shape (raises Skip when the requested one cannot)."""
    if requested in ("mha", "mha-bnsh"):
        return requested
    why = gqa_expressible(s)
    if requested == "gqa":
        if why:
            raise Skip(f"--sdpa-form gqa: {why}")
        return "gqa"
    if s.q_len == 1 and sees_all_keys(s):
        return "mha-bnsh"            # decoding: the cache read in place
    if pa.causal_kind(s) and s.q_len == s.kv_len >= GQA_CAUSAL_FROM and not why:
        return "gqa"                 # causal: GQA's prompt path beats the masked MHA
    return "mha"


def build_sdpa(s, fill, form):
    """op=sdpa: see the docstring."""
    import numpy as np
    b, lq, lk, h, dh = s.batch, s.q_len, s.kv_len, s.heads, s.head_dim
    hkv = s.kv_heads or h
    g = h // hkv                     # query heads per K/V head (PyTorch's repeat_interleave)
    w = Workload(SDPA_FORM_TEXT[form], {"mha": "MultiHeadAttention",
                                        "mha-bnsh": "MultiHeadAttention, K/V BNSH",
                                        "gqa": "GroupQueryAttention"}[form])
    scale = s.scale if s.scale != 0.0 else 1.0 / math.sqrt(dh)
    extra = {"scale": s.scale} if s.scale != 0.0 else {}
    parts = mask_parts(s, fill)
    q = fill((b, lq, h * dh))                                 # [B][Lq][H·Dh]
    k, v = fill((b, hkv, lk, dh)), fill((b, hkv, lk, dh))     # [B][Hkv][Lk][Dh]
    k_bsd, v_bsd = unheads(k), unheads(v)                     # [B][Lk][Hkv·Dh]

    def shape(*dims):
        return w.init("shape", np.array(dims, np.int64))

    if form == "mha":                # K, V [B][Lk][H·Dh]: flash attention when unmasked
        qin, kin, vin = w.feed("q", q), w.feed("k", k_bsd), w.feed("v", v_bsd)
        if g > 1:
            kin, vin = (w.node("Reshape", [w.node("Expand", [w.node("Reshape", [t, shape(b, lk, hkv, 1, dh)]),
                                                             shape(b, lk, hkv, g, dh)]),
                                           shape(b, lk, h * dh)]) for t in (kin, vin))
        pad, abias, uni = attention_mask_inputs(w, s, parts, "key_padding_mask")
        ins = [qin, kin, vin, "", pad, abias]
        while ins[-1] == "":
            ins.pop()
        w.node("MultiHeadAttention", ins, ["y"], domain=MS, num_heads=h, unidirectional=uni, **extra)
    elif form == "mha-bnsh":         # K, V [B][Hkv][Lk][Dh], read in place (no flash path)
        qin, kin, vin = w.feed("q", q), w.feed("k", k), w.feed("v", v)
        if g > 1 and lq == 1 and sees_all_keys(s):
            # One query that sees every key: the g query heads of a K/V head are g
            # query rows of one head (q [B][1][Hkv·g·Dh] → [B][g][Hkv·Dh]; the output back).
            rows = w.node("Transpose", [w.node("Reshape", [qin, shape(b, hkv, g, dh)])], perm=[0, 2, 1, 3])
            o = w.node("MultiHeadAttention", [w.node("Reshape", [rows, shape(b, g, hkv * dh)]), kin, vin],
                       domain=MS, num_heads=hkv, **extra)
            back = w.node("Transpose", [w.node("Reshape", [o, shape(b, g, hkv, dh)])], perm=[0, 2, 1, 3])
            w.node("Reshape", [back, shape(b, 1, h * dh)], ["y"])
        else:
            if g > 1:
                kin, vin = (w.node("Reshape", [w.node("Expand", [w.node("Reshape", [t, shape(b, hkv, 1, lk, dh)]),
                                                                 shape(b, hkv, g, lk, dh)]),
                                               shape(b, h, lk, dh)]) for t in (kin, vin))
            pad, abias, uni = attention_mask_inputs(w, s, parts, "key_padding_mask")
            ins = [qin, kin, vin, "", pad, abias]
            while ins[-1] == "":
                ins.pop()
            w.node("MultiHeadAttention", ins, ["y"], domain=MS, num_heads=h, unidirectional=uni,
                   **extra)
    else:                            # gqa: the last lq keys are new, the first lk − lq cached
        past = lk - lq
        ins = [w.feed("q", q), w.feed("k", np.ascontiguousarray(k_bsd[:, past:])),
               w.feed("v", np.ascontiguousarray(v_bsd[:, past:]))]
        if past:                     # the cache [B][Hkv][Lk][Dh]; the call writes its last lq rows
            cache_k, cache_v = np.zeros_like(k), np.zeros_like(v)
            cache_k[:, :, :past], cache_v[:, :, :past] = k[:, :, :past], v[:, :, :past]
            ins += [w.feed("past_key", cache_k), w.feed("past_value", cache_v)]
        else:
            ins += ["", ""]
        ins += [w.feed("seqlens_k", np.full((b,), lk - 1, np.int32)),
                w.feed("total_sequence_length", np.array(lk, np.int32))]
        w.node("GroupQueryAttention", ins, ["y", "present_key", "present_value"], domain=MS,
               num_heads=h, kv_num_heads=hkv, **extra)
        w.outputs += [("present_key", (b, hkv, lk, dh), "past_key" if past else None),
                      ("present_value", (b, hkv, lk, dh), "past_value" if past else None)]
    w.outputs.insert(0, ("y", (b, lq, h * dh), None))

    def reference():
        mask, _ = reference_mask(s, parts)
        kh = k.astype(np.float64).repeat(g, axis=1)
        vh = v.astype(np.float64).repeat(g, axis=1)
        return unheads(softmax_attention(heads(q.astype(np.float64), h), kh, vh, scale, mask))
    w.reference = reference
    w.valid_rows = reference_mask(s, parts)[1]
    return w


def build(s, sdpa_form_requested="auto", vocab=None):
    """The Workload of a shape (raises Skip); vocab: op=bert's (default BERT-base's)."""
    if s.kv != "f32":
        raise Skip(f"kv={s.kv}: keys and values stored narrower than fp32; this script builds "
                   "fp32 graphs only")
    fill = Filler(pa.SEED)
    if s.op in ("encoder", "decoder"):
        return build_layer(s, fill)
    if s.op == "bert":
        return build_bert(s, fill, vocab)
    if s.op == "mha":
        return build_mha(s, fill)
    if s.op == "sdpa":
        return build_sdpa(s, fill, sdpa_form(s, sdpa_form_requested))
    raise Skip(f"op={s.op}: no ONNX Runtime graph in this script (a cached decoding loop of "
               "several layers; bert, encoder, decoder, mha and sdpa only)")


def write_job(w, folder, threads, args, mode="time"):
    """The model, its inputs and the job for time_session.js, in folder; the job's path."""
    import numpy as np
    import onnx
    os.makedirs(folder, exist_ok=True)
    model = os.path.join(folder, "model.onnx")
    onnx.save(w.model(), model)
    inputs = []
    for name, a in w.inputs:
        path = os.path.join(folder, f"in_{name}.bin")
        a.tofile(path)
        inputs.append({"name": name, "type": {np.dtype(np.float32): "float32",
                                              np.dtype(np.int32): "int32"}[a.dtype],
                       "dims": list(a.shape), "file": path})
    outputs = [{"name": n, "type": "float32", "dims": list(d), **({"alias": a} if a else {}),
                **({"file": os.path.join(folder, f"out_{n}.bin")} if mode == "run" else {})}
               for n, d, a in w.outputs]
    job = {"model": model, "threads": threads, "inputs": inputs, "outputs": outputs,
           "mode": mode, "runs": 2, "min_time": args.min_time if args else 0,
           "repetitions": args.repetitions if args else 0,
           "max_call_time": args.max_call_time if args else 0,
           "memory": bool(args and args.memory)}
    if args and args.keep_models:
        job["optimized_model"] = os.path.join(folder, "optimized.onnx")
    path = os.path.join(folder, "job.json")
    with open(path, "w") as f:
        json.dump(job, f)
    return path


def run_node(job_path, cpus):
    """Runs time_session.js on a job in a fresh node bound to cpus; its JSON result."""
    node = shutil.which("node")
    if not node:
        return {"status": "error", "error": "node not found (install Node.js 18 or later)"}

    def pin():                       # in the child, before exec: node and all its threads
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:
            pass                     # reported: the job's cpus_allowed differs
    try:
        p = subprocess.run([node, NODE_SCRIPT, job_path], capture_output=True, text=True,
                           cwd=NODE_DIR, preexec_fn=pin)
    except (OSError, subprocess.SubprocessError) as e:
        return {"status": "error", "error": f"cannot start node: {getattr(e, 'strerror', None) or e}"}
    lines = p.stdout.strip().splitlines()
    try:
        res = json.loads(lines[-1])
    except (IndexError, ValueError):
        why = (f"killed by signal {-p.returncode}" + (" (out of memory?)" if p.returncode == -9 else "")
               if p.returncode < 0 else f"exited with status {p.returncode}")
        err = p.stderr.strip().splitlines()
        res = {"status": "error", "error": f"node {why}" + (f": {err[-1][:200]}" if err else "")}
    res["affinity"] = res.get("cpus_allowed") == sorted(cpus)
    return res


def package_missing():
    """Why the npm package is not usable, or None."""
    if not os.path.isfile(os.path.join(NODE_DIR, "node_modules", "onnxruntime-node", "package.json")):
        return ("onnxruntime-node is not installed: npm ci --prefix reports/ort_anchor "
                "(its .npmrc skips the GPU download)")
    if not shutil.which("node"):
        return "node not found (install Node.js 18 or later)"
    return None


def modules_missing():
    import importlib.util
    missing = [m for m in ("numpy", "onnx") if importlib.util.find_spec(m) is None]
    return (f"{', '.join(missing)} not importable by {sys.executable}; install Debian's "
            "python3-onnx (and python3-numpy) and run this with /usr/bin/python3") if missing else None


# ---- Self-test -------------------------------------------------------------------

SELF_TEST_SHAPES = [
    # encoder: both norms, every act, every mask kind the Attention op takes
    ("op=encoder,B=2,L=17,D=32,H=4,F=64,norm=post,act=gelu,mask=none", "auto"),
    ("op=encoder,B=2,L=17,D=32,H=4,F=64,norm=pre,act=gelu,mask=none", "auto"),
    ("op=encoder,B=1,L=9,D=24,H=3,F=40,norm=post,act=gelu-tanh,mask=causal", "auto"),
    ("op=encoder,B=2,L=5,D=12,H=3,F=20,norm=pre,act=relu,mask=padding", "auto"),
    ("op=encoder,B=3,L=20,D=64,H=4,F=256,norm=pre,act=relu,mask=padall", "auto"),
    ("op=encoder,B=1,L=7,D=16,H=2,F=33,norm=post,act=gelu-tanh,mask=keep", "auto"),
    ("op=encoder,B=2,L=33,D=48,H=6,F=96,norm=post,act=gelu,mask=all", "auto"),
    ("op=encoder,B=2,L=11,D=32,H=4,F=64,norm=pre,act=gelu,mask=bias", "auto"),
    # decoder: causal self-attention, cross-attention over the (padded) memory
    ("op=decoder,B=2,L=1,M=1,D=8,H=2,F=12,norm=pre,act=gelu,mask=none", "auto"),
    ("op=decoder,B=2,L=5,M=9,D=12,H=3,F=20,norm=post,act=relu,mask=padding", "auto"),
    ("op=decoder,B=1,L=130,M=17,D=64,H=4,F=129,norm=pre,act=gelu-tanh,mask=none", "auto"),
    ("op=decoder,B=3,L=33,M=65,D=48,H=6,F=96,norm=post,act=gelu,mask=padding", "auto"),
    ("op=decoder,B=4,L=9,M=12,D=32,H=4,F=64,norm=pre,act=gelu,mask=padding", "auto"),
    # bert: EmbedLayerNormalization (its mask_index into every layer's Attention, or
    # none), a stack of layers; post-LN (BERT) and pre-LN, every act (vocabulary 50)
    ("op=bert,B=2,L=7,layers=2,D=16,H=2,F=32,mask=padding", "auto"),
    ("op=bert,B=4,L=9,layers=3,D=24,H=4,F=40,act=relu,mask=padding", "auto"),
    ("op=bert,B=2,L=6,layers=2,D=16,H=2,F=32,norm=pre,act=gelu-tanh,mask=padding", "auto"),
    ("op=bert,B=2,L=5,layers=1,D=12,H=3,F=20,mask=none", "auto"),
    # mha: self and cross, masks, scale
    ("op=mha,B=2,L=17,D=32,H=4,mask=causal", "auto"),
    ("op=mha,B=2,Lq=9,Lk=17,D=32,H=4,cross=1,mask=padding", "auto"),
    ("op=mha,B=1,Lq=16,Lk=33,D=64,H=4,cross=1,mask=bias", "auto"),
    ("op=mha,B=2,L=33,D=48,H=3,mask=keep,scale=0.3", "auto"),
    # sdpa through MultiHeadAttention: flash (no mask) and the masked path
    ("op=sdpa,B=2,L=33,H=2,Dh=16,mask=none", "mha"),
    ("op=sdpa,B=1,L=300,H=2,Dh=64,mask=none", "mha"),
    ("op=sdpa,B=2,Lq=5,Lk=7,H=3,Dh=8,mask=causal", "mha"),
    ("op=sdpa,B=2,L=33,H=2,Dh=16,mask=causal", "mha"),
    ("op=sdpa,B=2,Lq=5,Lk=9,H=2,Dh=8,mask=causal-br", "mha"),
    ("op=sdpa,B=2,L=17,H=2,Dh=17,mask=padding", "mha"),
    ("op=sdpa,B=3,L=17,H=2,Dh=17,mask=padall", "mha"),
    ("op=sdpa,B=2,Lq=17,Lk=19,H=2,Dh=17,mask=keep", "mha"),
    ("op=sdpa,B=2,Lq=19,Lk=17,H=2,Dh=17,mask=bias", "mha"),
    ("op=sdpa,B=2,L=33,H=2,Dh=33,mask=all", "mha"),
    ("op=sdpa,B=2,Lq=17,Lk=33,H=6,Hkv=3,Dh=16,mask=padding", "mha"),
    ("op=sdpa,B=1,L=65,H=12,Hkv=4,Dh=64,mask=causal,scale=0.2", "mha"),
    ("op=sdpa,B=2,Lq=1,Lk=129,H=4,Hkv=2,Dh=64,mask=causal-br", "mha"),
    # sdpa through MultiHeadAttention with K, V [B][Hkv][Lk][Dh]: decoding (grouped
    # query heads as rows, or K, V expanded), masks on that path
    ("op=sdpa,B=2,Lq=1,Lk=129,H=4,Hkv=2,Dh=64,mask=causal-br", "mha-bnsh"),
    ("op=sdpa,B=1,Lq=1,Lk=300,H=8,Hkv=1,Dh=128,mask=none", "mha-bnsh"),
    ("op=sdpa,B=1,Lq=1,Lk=257,H=4,Dh=64,mask=causal-br,scale=0.1", "mha-bnsh"),
    ("op=sdpa,B=1,Lq=2,Lk=1025,H=8,Hkv=2,Dh=32,mask=causal-br", "mha-bnsh"),
    ("op=sdpa,B=2,Lq=17,Lk=33,H=6,Hkv=3,Dh=16,mask=padding", "mha-bnsh"),
    ("op=sdpa,B=1,L=33,H=2,Dh=33,mask=all", "mha-bnsh"),
    ("op=sdpa,B=2,L=33,H=2,Dh=16,mask=causal", "mha-bnsh"),
    # sdpa through GroupQueryAttention: decoding with a shared cache, a prompt
    ("op=sdpa,B=2,Lq=1,Lk=129,H=4,Hkv=2,Dh=64,mask=causal-br", "gqa"),
    ("op=sdpa,B=1,Lq=1,Lk=300,H=8,Hkv=1,Dh=128,mask=none", "gqa"),
    ("op=sdpa,B=1,Lq=1,Lk=257,H=4,Dh=64,mask=causal-br", "gqa"),
    ("op=sdpa,B=1,Lq=3,Lk=100,H=2,Dh=128,mask=causal-br", "gqa"),
    ("op=sdpa,B=1,L=17,H=3,Dh=16,mask=causal-br", "gqa"),
    ("op=sdpa,B=2,L=33,H=4,Hkv=2,Dh=16,mask=causal", "gqa"),
]


SELF_TEST_VOCAB = 50                 # op=bert's token table in the checks


SELF_TEST_AUTO = [                   # --sdpa-form auto's choices for the suites' shapes
    ("op=sdpa,B=1,Lq=1,Lk=4096,H=32,Hkv=8,Dh=128,mask=causal-br", "mha-bnsh"),
    ("op=sdpa,B=1,Lq=1,Lk=4096,H=32,Dh=128,mask=causal-br", "mha-bnsh"),
    ("op=sdpa,B=1,L=4096,H=12,Dh=64,mask=causal", "gqa"),
    ("op=sdpa,B=1,L=256,H=4,Dh=64,mask=causal", "mha"),
    ("op=sdpa,B=1,L=4096,H=12,Dh=64,mask=none", "mha"),
    ("op=sdpa,B=1,Lq=5,Lk=7,H=3,Dh=8,mask=causal", "mha"),
]


def self_test(binary, verbose=True):
    """Every graph form against the float64 numpy reference: max |diff| <= 1e-4 on the
    rows that see a key; the shapes read by the attnbench binary, as a run's. Returns
    0 when all pass, 1 otherwise."""
    import numpy as np
    t = pa.SelfTest("ort_anchor self-test", verbose)
    report = t.report
    try:
        shapes = pa.read_shapes(binary, [text for text, _ in SELF_TEST_SHAPES + SELF_TEST_AUTO])
    except (pa.UsageError, RuntimeError) as e:
        report(False, f"the self-test's shapes: {e}")
        return 1 if t.summary() else 0
    os.makedirs(BUILD_DIR, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=BUILD_DIR, prefix="self-test-") as tmp:
        for i, ((text, form), s) in enumerate(zip(SELF_TEST_SHAPES, shapes)):
            try:
                w = build(s, form, vocab=SELF_TEST_VOCAB)
            except Skip as e:
                report(False, f"{text}: not built: {e}")
                continue
            folder = os.path.join(tmp, str(i))
            res = run_node(write_job(w, folder, 1, None, mode="run"), pa.core_cpus()[:1])
            if res.get("status") != "ok":
                report(False, f"{text} [{form}]: {res.get('error')}")
                continue
            name, dims, _ = w.outputs[0]
            got = np.fromfile(os.path.join(folder, f"out_{name}.bin"), np.float32).reshape(dims)
            want = w.reference()
            rows = w.valid_rows.astype(bool)                 # [B][Lq]
            err = float(np.max(np.abs(got - want)[rows])) if rows.any() else 0.0
            report(err <= 1e-4 and np.isfinite(got[rows]).all(),
                   f"{text} [{w.short}]: max |ort - numpy| = {err:.2g}")

        for (text, want), s in zip(SELF_TEST_AUTO, shapes[len(SELF_TEST_SHAPES):]):
            got = sdpa_form(s, "auto")
            report(got == want, f"--sdpa-form auto: {text} -> {got}")
        # A timed run through the command line, its JSON read back; op=bert's rate
        # per sequence (B / time).
        out = os.path.join(tmp, "timed.json")
        texts = ("op=encoder,B=1,L=8,D=16,H=2,F=32,norm=pre;op=sdpa,B=1,L=16,H=2,Dh=8,mask=causal;"
                 "op=bert,B=2,L=8,layers=2,D=16,H=2,F=32,mask=padding")
        code = main(["--shape", texts, "--threads", "1", "--repetitions", "2", "--min-time", "0.001",
                     "--memory", "--attnbench", binary, "--json", out])
        try:
            with open(out) as f:
                doc = json.load(f)
            names = sorted({b["run_name"] for b in doc["benchmarks"]})
            medians = [b for b in doc["benchmarks"] if b.get("aggregate_name") == "median"]
            rates = [(b["sequences_per_second"] * b["real_time"] / 1e9,
                      b["ms_per_sequence"] * 1e6 / b["real_time"])
                     for b in medians if "sequences_per_second" in b or "ms_per_sequence" in b]
            ok = (code == 0 and doc["context"]["ort_version"] and len(medians) == 3
                  and names == ["bert/onnxruntime/B2_D16_H2_L8_layers2_F32_post_gelu_padding/threads:1",
                                "encoder/onnxruntime/B1_D16_H2_L8_F32_pre_gelu/threads:1",
                                "sdpa/onnxruntime/B1_H2_L16_Dh8_causal/threads:1"]
                  and all(b["real_time"] > 0 and b["kernel"] == KERNEL and "extra_rss_bytes" in b
                          for b in medians)
                  and len(rates) == 1 and all(abs(x - y) < 1e-6 for x, y in zip(rates[0], (2, 0.5)))
                  and doc["context"].get("bert_form") == BERT_FORM)
            what = (f"a timed run's JSON: {names}, op=bert's sequences/s · time and ms/sequence "
                    f"/ time: {rates}, ONNX Runtime {doc['context']['ort_version']}")
        except (OSError, ValueError, KeyError) as e:
            ok, what = False, f"a timed run's JSON: {e} (exit status {code})"
        report(ok, what)
    return 1 if t.summary() else 0


# ---- The command line ------------------------------------------------------------

def parse_args(argv):
    p = pa.Parser(prog="ort_anchor.py", add_help=True,
                  description="ONNX Runtime (onnxruntime-node, CPU) on attnbench's shapes, "
                              "written as attnbench's JSON (kernel 'onnxruntime'). See the "
                              "docstring for the details.")
    pa.add_run_arguments(p, "also measure the resident memory the first call adds (extra_rss_bytes)")
    p.add_argument("--sdpa-form", metavar="FORM", default="auto", choices=SDPA_FORMS,
                   help="op=sdpa through mha (MultiHeadAttention), gqa (GroupQueryAttention) "
                        "or auto (default: gqa when decoding, else mha)")
    p.add_argument("--keep-models", action="store_true",
                   help="keep the models (and ORT's optimized graphs) under build/ort_anchor/")
    p.add_argument("--self-test", action="store_true",
                   help="check every graph form against numpy on small shapes and exit: 0 passed, 1 not")
    return pa.check_run_arguments(p.parse_args(argv))


def build_context(probe, args, max_threads, pinned, pct_isa, workers, forms):
    """pytorch_anchor's context (machine, peaks, run settings) with ONNX Runtime's
    fields in place of PyTorch's."""
    ctx = pa.build_context(probe, args, max_threads, pinned, pct_isa, [])
    for k in ("blas_library", "blas_is_reference", "thread_env", "sdpa_form", "mha_need_weights",
              "extra_rss_includes_output", "omp_proc_bind", "omp_places"):
        ctx.pop(k, None)
    first = next((w for w in workers if w.get("ort_version")), {})
    ctx.update(executable="ort_anchor.py", library_build_type="release",
               ort_version=first.get("ort_version", ""), node_version=first.get("node_version", ""),
               ort_execution_provider="CPUExecutionProvider", ort_graph_optimization="all",
               ort_execution_mode="sequential", ort_inter_op_threads=1)
    seen = {}
    for w in workers:
        if w.get("os_threads"):
            cur = seen.setdefault(w["threads"], {"threads": w["threads"],
                                                 "ort_intra_op_num_threads": w["threads"],
                                                 "cpus_allowed": w.get("cpus_allowed"),
                                                 "os_threads": 0})
            cur["os_threads"] = max(cur["os_threads"], w["os_threads"])
    ctx["threads_seen"] = [seen[k] for k in sorted(seen)]
    ctx["threads_seen_note"] = "os_threads counts the node process's threads, Node's own included"
    for op in ("encoder", "decoder"):
        if op in forms:
            ctx[f"{op}_form"] = LAYER_FORM[op]
    if "bert" in forms:
        ctx["bert_form"] = BERT_FORM
    if "mha" in forms:
        ctx["mha_form"] = MHA_FORM
    for f in sorted(forms.get("sdpa", ())):
        ctx[f"sdpa_form_{f}"] = SDPA_FORM_TEXT[f]
    ctx["mask_filter_value"] = MASK_FILTER
    if args.memory:
        ctx["extra_rss_of"] = "the warm-up call (ORT's arena keeps it), outputs preallocated"
    return ctx


def main(argv):
    try:
        args = parse_args(argv)
        missing = modules_missing() or package_missing()
        if args.self_test:
            if missing:
                print(f"ort_anchor.py: {missing}", file=sys.stderr)
                return 1
            return self_test(args.attnbench)
        cpus = pa.core_cpus()
        threads = pa.parse_threads(args.threads, len(cpus)) if args.threads else [len(cpus)]
        shapes = pa.select_shapes(args)
    except pa.UsageError as e:          # this script's, or attnbench's on a shape or --op
        print(f"ort_anchor.py: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:           # attnbench missing or failing
        print(f"ort_anchor.py: {e}", file=sys.stderr)
        return 1
    if missing:
        print(f"ort_anchor.py: {missing}", file=sys.stderr)
        return 1

    probes, pct_isa = pa.machine_probes("ort_anchor.py", args.attnbench, threads,
                                        not args.no_peaks)

    results, workers, skipped, not_built, forms = [], [], [], [], {}
    total, progress = len(shapes) * len(threads), sys.stderr.isatty()
    os.makedirs(BUILD_DIR, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=BUILD_DIR, prefix="run-")
    try:
        for si, s in enumerate(shapes):
            try:
                w = build(s, args.sdpa_form)
            except Skip as e:
                not_built.append(f"  {s.text}: {e}")
                continue
            form = w.form if s.op != "sdpa" else next(k for k, v in SDPA_FORM_TEXT.items()
                                                      if v == w.form)
            forms.setdefault(s.op, set()).add(form)
            for ti, n in enumerate(threads):
                name = pa.run_name(s, n)
                if progress:
                    print(f"\r\033[K[{si * len(threads) + ti + 1}/{total}] {name}", end="",
                          file=sys.stderr, flush=True)
                job = write_job(w, os.path.join(tmp, f"{si}-{n}"), n, args)
                wk = run_node(job, cpus[:n])
                wk["threads"] = n
                workers.append(wk)
                if wk["status"] == "skipped":
                    skipped.append(f"  {name} ({wk['warmup']:.1f} s)")
                    continue
                results.append(pa.result_of(s, n, wk, probes, pct_isa))
    except KeyboardInterrupt:
        print("\nort_anchor.py: interrupted; nothing written", file=sys.stderr)
        return 130
    finally:
        if progress:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
        if args.keep_models:
            print(f"models kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    pa.print_table(results)
    if not_built:
        print(f"note: {len(not_built)} shape{'' if len(not_built) == 1 else 's'} not built:\n"
              + "\n".join(not_built))
    if skipped:
        print(f"note: {len(skipped)} benchmark{'' if len(skipped) == 1 else 's'} skipped, one call "
              f"taking over {args.max_call_time:g} s:\n" + "\n".join(skipped))
    notes = {w.get("memory_note") for w in workers} - {None}
    for note in sorted(notes):
        print(f"note: --memory: {note}; extra_rss_bytes not measured")
    pinned = all(w.get("affinity") for w in workers if w.get("status") == "ok")
    if not pinned:
        print("note: node could not be bound to the first N cores")
    ctx = build_context(probes[max(threads)], args, max(threads), pinned, pct_isa, workers, forms)
    print(f"ONNX Runtime {ctx['ort_version'] or '?'} (onnxruntime-node, CPU), Node {ctx['node_version'] or '?'}")
    if pct_isa:
        print(f"peaks: from attnbench ({ctx.get('peaks_measured_at', '?')}); % of peak is "
              f"against {pct_isa} at the threads used")

    if args.json and pa.write_results("ort_anchor.py", args.json, ctx, results):
        return 1
    return 1 if any(r["error"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
