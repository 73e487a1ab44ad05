#!/usr/bin/env python3
"""model_seeds.py — writes the seed corpus of fuzz_model (fuzz/corpus/model):
tiny BERT checkpoints in the safetensors format, written here independently
of the C reader (json.dumps escapes non-ASCII as \\uXXXX), plus a few
non-BERT files. Deterministic: rerunning rewrites the same bytes.
usage: python3 fuzz/model_seeds.py [DIR]"""
import json
import os
import struct
import sys

ELEM = {"F32": ("<f", 4), "F16": ("<e", 2), "BF16": (None, 2), "U8": ("<B", 1), "I64": ("<q", 8)}


def pack(dtype, values):
    if dtype == "BF16":   # the upper half of the F32 pattern (values chosen exact)
        return b"".join(struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0])[2:]
                        for v in values)
    fmt, _ = ELEM[dtype]
    return b"".join(struct.pack(fmt, v) for v in values)


def safetensors(tensors, metadata=None, skew=0):
    """tensors: list of (name, dtype, shape, values); the data starts skew
    bytes past a multiple of 8 (the writers' 0; 2 makes F32 misaligned)."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, values in tensors:
        blob = pack(dtype, values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    text = json.dumps(header).encode()
    text += b" " * ((skew - 8 - len(text)) % 8)
    return struct.pack("<Q", len(text)) + text + data


def bert(dtype="F32", prefix="", D=4, F=4, V=3, P=2, T=2, layers=1, pooler=True, old_ln=False):
    w, b = ("gamma", "beta") if old_ln else ("weight", "bias")
    shapes = [("embeddings.word_embeddings.weight", [V, D]),
              ("embeddings.position_embeddings.weight", [P, D])]
    if T:
        shapes.append(("embeddings.token_type_embeddings.weight", [T, D]))
    shapes += [("embeddings.LayerNorm." + w, [D]), ("embeddings.LayerNorm." + b, [D])]
    for l in range(layers):
        for part in ("query", "key", "value"):
            shapes += [(f"encoder.layer.{l}.attention.self.{part}.weight", [D, D]),
                       (f"encoder.layer.{l}.attention.self.{part}.bias", [D])]
        shapes += [(f"encoder.layer.{l}.attention.output.dense.weight", [D, D]),
                   (f"encoder.layer.{l}.attention.output.dense.bias", [D]),
                   (f"encoder.layer.{l}.attention.output.LayerNorm.{w}", [D]),
                   (f"encoder.layer.{l}.attention.output.LayerNorm.{b}", [D]),
                   (f"encoder.layer.{l}.intermediate.dense.weight", [F, D]),
                   (f"encoder.layer.{l}.intermediate.dense.bias", [F]),
                   (f"encoder.layer.{l}.output.dense.weight", [D, F]),
                   (f"encoder.layer.{l}.output.dense.bias", [D]),
                   (f"encoder.layer.{l}.output.LayerNorm.{w}", [D]),
                   (f"encoder.layer.{l}.output.LayerNorm.{b}", [D])]
    if pooler:
        shapes += [("pooler.dense.weight", [D, D]), ("pooler.dense.bias", [D])]
    out = []
    for k, (name, shape) in enumerate(shapes):
        n = 1
        for d in shape:
            n *= d
        values = [(k + 1) / 2 ** (j % 4) * (-1 if j % 2 else 1) for j in range(n)]
        out.append((prefix + name, dtype, shape, values))
    return out


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "model")
    os.makedirs(out, exist_ok=True)
    seeds = {
        "bert-f32": safetensors(bert(prefix="bert."), {"format": "pt"}),
        "bert-f16": safetensors(bert("F16", T=0)),
        "bert-bf16-2layers": safetensors(
            bert("BF16", layers=2, old_ln=True, pooler=False)
            + [("cls.predictions.bias", "F32", [3], [0.5, 1.0, 2.0]),
               ("embeddings.position_ids", "I64", [1, 2], [0, 1])],
            {"caf\u00e9": "\U0001F600"}),
        "bert-f32-misaligned": safetensors(bert(D=2, F=2, V=2, P=1, T=0, pooler=False), skew=2),
        "u8": safetensors([("a", "U8", [2], [1, 2])]),
        "empty": safetensors([]),
    }
    for name, blob in seeds.items():
        with open(os.path.join(out, name + ".safetensors"), "wb") as f:
            f.write(blob)


if __name__ == "__main__":
    main()
