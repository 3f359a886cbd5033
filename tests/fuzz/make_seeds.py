#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora (tests/fuzz/<target>/): small valid and invalid inputs
for fuzz_safetensors, fuzz_idx and fuzz_config. The files are committed; run this again
after changing it (python3 tests/fuzz/make_seeds.py). Standard library only."""
import json
import os
import struct

ROOT = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---------------------------------------------------------------- safetensors
def st(header, data=b"", pad=True):
    text = header if isinstance(header, bytes) else header.encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


f32 = lambda *v: struct.pack("<%df" % len(v), *v)
valid = {
    "empty": st("{}"),
    "one_f32": st(json.dumps({"w": entry("F32", [2], 0, 8)}), f32(1.5, -2)),
    "metadata": st(json.dumps({"__metadata__": {"format": "pt"}, "w": entry("F32", [1], 0, 4)}),
                   f32(3)),
    "all_dtypes": st(json.dumps({
        "a": entry("I64", [1], 0, 8), "b": entry("F32", [1], 8, 12), "c": entry("I32", [1], 12, 16),
        "d": entry("BF16", [1], 16, 18), "e": entry("F16", [1], 18, 20), "f": entry("U8", [1], 20, 21),
        "g": entry("BOOL", [1], 21, 22)}),
        struct.pack("<q", -5) + f32(1) + struct.pack("<i", 7) + b"\x80\x3f\x00\x3c\x09\x01"),
    "scalar_and_empty": st(json.dumps({"s": entry("F32", [], 0, 4), "z": entry("F32", [2, 0], 4, 4)}),
                           f32(2.5)),
    "leading_whitespace": st(" \n\t{}"),
    "two_by_three": st(json.dumps({"m": entry("F32", [2, 3], 0, 24)}), f32(*range(6))),
}
invalid = {
    "too_short": b"\x08\x00\x00",
    "length_past_end": struct.pack("<Q", 100) + b"{}",
    "length_huge": struct.pack("<Q", 2**64 - 1),
    "nul_padded": st(b"{}\0\0\0\0\0\0", pad=False),
    "bom": st(b"\xef\xbb\xbf{}"),
    "not_json": st("{\"a\": "),
    "array_header": st("[1, 2]"),
    "duplicate_key": st('{"w":%s,"w":%s}' % ((json.dumps(entry("F32", [1], 0, 4)),) * 2), f32(1)),
    "duplicate_field": st('{"w":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
                          f32(1)),
    "deep_nesting": st('{"__metadata__":' + "[" * 40 + "]" * 40 + "}"),
    "bad_dtype": st(json.dumps({"w": entry("F31", [1], 0, 4)}), f32(1)),
    "unsupported_dtype": st(json.dumps({"w": entry("F64", [1], 0, 8)}), b"\0" * 8),
    "negative_dim": st(json.dumps({"w": entry("F32", [-1], 0, 4)}), f32(1)),
    "overflow_shape": st(json.dumps({"w": entry("F32", [2, 18446744073709551614], 0, 4)}), f32(1)),
    "rank_nine": st(json.dumps({"w": entry("F32", [1] * 9, 0, 4)}), f32(1)),
    "reversed_offsets": st(json.dumps({"w": entry("F32", [1], 4, 0)}), f32(1)),
    "overlap": st(json.dumps({"a": entry("F32", [1], 0, 4), "b": entry("F32", [1], 0, 4)}), f32(1)),
    "hole": st(json.dumps({"a": entry("F32", [1], 0, 4), "b": entry("F32", [1], 8, 12)}), f32(1, 2, 3)),
    "trailing_bytes": st(json.dumps({"a": entry("F32", [1], 0, 4)}), f32(1) + b"polyglot"),
    "truncated_data": st(json.dumps({"a": entry("F32", [2], 0, 8)}), f32(1)[:3]),
    "metadata_not_string": st(json.dumps({"__metadata__": {"epoch": 3}})),
    "unknown_field": st('{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}', f32(1)),
    "bool_byte_2": st(json.dumps({"b": entry("BOOL", [1], 0, 1)}), b"\x02"),
}
for name, data in valid.items():
    write("safetensors", "valid_" + name, data)
for name, data in invalid.items():
    write("safetensors", "invalid_" + name, data)

# ---------------------------------------------------------------- idx (fuzz_idx's input)
def idx_pair(images, labels):
    return struct.pack("<H", len(images)) + images + labels


def images(n, h=28, w=28, magic=0x803):
    return struct.pack(">IIII", magic, n, h, w) + bytes((i * 37) % 256 for i in range(n * h * w))


def labels(values, magic=0x801):
    return struct.pack(">II", magic, len(values)) + bytes(values)


idx = {
    "valid_two": idx_pair(images(2), labels([3, 9])),
    "valid_empty": idx_pair(images(0), labels([])),
    "invalid_swapped": idx_pair(labels([3, 9]), images(2)),
    "invalid_gzip": idx_pair(b"\x1f\x8b\x08\x08" + b"\0" * 12, labels([])),
    "invalid_little_endian": idx_pair(struct.pack("<IIII", 0x803, 0, 28, 28), labels([])),
    "invalid_type_code": idx_pair(images(1, magic=0x0D03), labels([1])),
    "invalid_rank": idx_pair(images(1, magic=0x0804), labels([1])),
    "invalid_size": idx_pair(images(1, 32, 32), labels([1])),
    "invalid_truncated_header": idx_pair(images(1)[:10], labels([1])),
    "invalid_truncated_data": idx_pair(images(2)[:-1], labels([1, 2])),
    "invalid_trailing": idx_pair(images(1) + b"x", labels([1])),
    "invalid_count_mismatch": idx_pair(images(2), labels([1])),
    "invalid_label_10": idx_pair(images(1), labels([10])),
    "invalid_huge_count": idx_pair(struct.pack(">IIII", 0x803, 0xFFFFFFFF, 28, 28), labels([])),
    "invalid_empty": idx_pair(b"", b""),
}
for name, data in idx.items():
    write("idx", name, data)

# ---------------------------------------------------------------- config (fuzz_config's input)
spec = {"layers": [
    {"type": "reshape", "shape": [1, 28, 28]},
    {"type": "conv2d", "channels": [1, 4], "kernel_size": [3, 3], "padding": "same"},
    {"type": "relu"}, {"type": "max_pool2d", "kernel_size": [2, 2]},
    {"type": "flatten"}, {"type": "linear", "d_input": 784, "d_output": 10, "bias": False,
                         "initializer": {"Constant": {"value": 0.5}}},
    {"type": "dropout", "prob": 0.1}, {"type": "gelu", "approximate": True},
    {"type": "leaky_relu", "negative_slope": 0.2}]}
config = {
    "sequential": b"\x00" + json.dumps(spec).encode(),
    "sequential_mlp": b"\x00" + json.dumps({"layers": [
        {"type": "linear", "d_input": 2, "d_output": 16}, {"type": "relu"},
        {"type": "linear", "d_input": 16, "d_output": 2}]}).encode(),
    "linear": b"\x01" + b'{"d_input": 784, "d_output": 10, "bias": true}',
    "conv2d": b"\x02" + b'{"channels": [1, 8], "kernel_size": [3, 3], "stride": [1, 1], "padding": "valid"}',
    "adam": b"\x03" + b'{"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-8}',
    "step_lr": b"\x04" + b'{"initial_lr": 0.1, "step_size": 10, "gamma": 0.5}',
    "invalid_deep": b"\x00" + b'{"layers": ' + b"[" * 60 + b"]" * 60 + b"}",
    "invalid_duplicate": b"\x01" + b'{"d_input": 1, "d_input": 2, "d_output": 3}',
    "invalid_unknown_type": b"\x00" + b'{"layers": [{"type": "lstm"}]}',
    "invalid_not_json": b"\x03" + b'{"beta_1": }',
    "invalid_huge_units": b"\x01" + b'{"d_input": 1000000000000, "d_output": 1e12}',
}
for name, data in config.items():
    write("config", name, data)

# Found crashing (signed overflow in the reshape layer's shape product, then a division by
# zero) before the size arithmetic was checked: a LimitError since.
write("config", "reshape-overflow",
      b"\x00" + b'{"layers": [{"type": "reshape", "shape": [4294967296, 4294967296, -1]}]}')
print("seeds written to", ROOT)
