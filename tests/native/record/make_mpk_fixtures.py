#!/usr/bin/python3
"""Writes the named MessagePack fixtures of tests/native/record/named_mpk_test.cpp and
tests/js/io_named_mpk.test.mjs (into tests/native/record/mpk/), independently of Kiln: the
bytes are packed by Python's msgpack (Debian's python3-msgpack) in Burn v0.21's layout as
rmp_serde::encode::write_named writes it (BurnRecord {metadata, item, _b}, ParamSerde {id,
param}, TensorData {bytes, shape, dtype}; see kiln/record/named_mpk.hpp), the values come
from PyTorch (Debian's python3-torch).

  burn_full.mpk      a Burn-style model record at full precision (f32, i32, bool), with
                     Burn's None and EmptyRecord fields (nil), a Vec of modules (an array)
  burn_half.mpk      the same record at half precision (f16, i16), HalfPrecisionSettings
  burn_dtypes.mpk    every other dtype Burn writes (F64, Flex32, BF16, I64, I16, I8, U64,
                     U32, U16, U8, the pre-0.21 "Bool", Bool(U32)), a scalar, an empty
                     tensor, and the scalar constants of older Burn records (skipped)
  kiln_layout_{full,half}.mpk
                     what Kiln's writer must emit, byte for byte, for the tensors of
                     kiln_layout.json (keys in order, dense "0".."n-1" children as arrays,
                     ids FNV-1a 64 of the path in base32hex)
  expected.json      per fixture: metadata, and per field path the dtype read_named_mpk
                     gives, the shape and the values (floats exact as f32)

Run: /usr/bin/python3 tests/native/record/make_mpk_fixtures.py (apt-get install
python3-msgpack python3-torch). The outputs are committed; the tests need no Python.
"""
import json
import os
import random
import struct

import msgpack
import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpk")
os.makedirs(OUT, exist_ok=True)
rng = random.Random(20)
torch.manual_seed(20)

BASE32HEX = "0123456789abcdefghijklmnopqrstuv"


def base32hex(data):
    """RFC 4648 base32hex, lower case, no padding (data_encoding's BASE32_DNSSEC)."""
    bits = "".join(f"{b:08b}" for b in data)
    bits += "0" * (-len(bits) % 5)
    return "".join(BASE32HEX[int(bits[i:i + 5], 2)] for i in range(0, len(bits), 5))


def burn_id():
    """A ParamId as Burn writes it: a random u64, little-endian, base32hex."""
    return base32hex(struct.pack("<Q", rng.getrandbits(64)))


def fnv_id(path):
    h = 0xCBF29CE484222325
    for b in path.encode():
        h ^= b
        h = (h * 0x100000001B3) % (1 << 64)
    return base32hex(struct.pack("<Q", h))


def metadata(half):
    settings = "HalfPrecisionSettings" if half else "FullPrecisionSettings"
    return {
        "float": "half::binary16::f16" if half else "f32",
        "int": "i16" if half else "i32",
        "format": f"burn_core::record::file::NamedMpkFileRecorder<burn_core::record::settings::{settings}>",
        "version": "0.21.0",
        "settings": settings,
    }


def param(array, dtype, ident=None):
    """ParamSerde {id, param: TensorData {bytes, shape, dtype}} of a numpy array."""
    return {"id": ident if ident is not None else burn_id(),
            "param": {"bytes": array.tobytes(), "shape": list(array.shape), "dtype": dtype}}


def record(meta, item):
    return msgpack.packb({"metadata": meta, "item": item, "_b": []}, use_bin_type=True)


def values(array):
    return [float(v) if array.dtype.kind == "f" else int(v) for v in array.reshape(-1)]


def entry(dtype, array):
    return {"dtype": dtype, "shape": list(array.shape), "values": values(array)}


expected = {}

# ---------------------------------------------------------------- a Burn model record
w1 = torch.randn(2, 3).numpy()
b1 = torch.randn(3).numpy()
w2 = torch.randn(3, 2).numpy()
gamma = torch.rand(3).numpy() + 0.5
beta = torch.randn(3).numpy()
mean = torch.randn(3).numpy()
var = torch.rand(3).numpy() + 0.1
blocks = [torch.randn(2).numpy() * 100, torch.tensor([60001.0, 1e-6], dtype=torch.float32).numpy()]
steps = np.array([12345], dtype=np.int64)
mask = np.array([True, False, True, True])


def model_item(f, int_dtype, int_np):
    fd = "F16" if f == np.float16 else "F32"
    return {
        "fc1": {"weight": param(w1.astype(f), fd), "bias": param(b1.astype(f), fd)},
        "fc2": {"weight": param(w2.astype(f), fd), "bias": None},
        "norm": {"gamma": param(gamma.astype(f), fd), "beta": param(beta.astype(f), fd),
                 "running_mean": param(mean.astype(f), fd), "running_var": param(var.astype(f), fd),
                 "momentum": None, "epsilon": None},
        "blocks": [{"weight": param(blocks[0].astype(f), fd)}, {"weight": param(blocks[1].astype(f), fd)}],
        "activation": None,
        "steps": param(steps.astype(int_np), int_dtype),
        "mask": param(mask.astype(np.uint8), {"Bool": "Native"}),
    }


def model_expected(f, fd):
    # f16 values read back exactly as f32: PyTorch's .half() (round to nearest even).
    cast = (lambda a: torch.from_numpy(a).half().float().numpy()) if f == np.float16 else (lambda a: a)
    return {
        "fc1.weight": entry(fd, cast(w1)), "fc1.bias": entry(fd, cast(b1)),
        "fc2.weight": entry(fd, cast(w2)),
        "norm.gamma": entry(fd, cast(gamma)), "norm.beta": entry(fd, cast(beta)),
        "norm.running_mean": entry(fd, cast(mean)), "norm.running_var": entry(fd, cast(var)),
        "blocks.0.weight": entry(fd, cast(blocks[0])), "blocks.1.weight": entry(fd, cast(blocks[1])),
        "steps": entry("I32", steps), "mask": entry("BOOL", mask.astype(np.int64)),
    }


with open(os.path.join(OUT, "burn_full.mpk"), "wb") as fh:
    fh.write(record(metadata(False), model_item(np.float32, "I32", np.int32)))
expected["burn_full.mpk"] = {"metadata": metadata(False), "tensors": model_expected(np.float32, "F32")}

with open(os.path.join(OUT, "burn_half.mpk"), "wb") as fh:
    fh.write(record(metadata(True), model_item(np.float16, "I16", np.int16)))
expected["burn_half.mpk"] = {"metadata": metadata(True), "tensors": model_expected(np.float16, "F16")}

# ---------------------------------------------------------------- every other dtype
f64 = np.array([0.1, -1e30, 1.0 / 3.0], dtype=np.float64)
flex = torch.randn(2).numpy()
bf = torch.tensor([1.5, -0.1]).bfloat16()
i8 = np.array([-128, 5, 127], dtype=np.int8)
i16 = np.array([-32768, 32767], dtype=np.int16)
u16 = np.array([65535, 1], dtype=np.uint16)
u32 = np.array([4294967295, 7], dtype=np.uint32)
u64 = np.array([9223372036854775807, 3], dtype=np.uint64)
i64 = np.array([-9223372036854775808, 42], dtype=np.int64)
u8 = np.array([0, 255], dtype=np.uint8)
b_old = np.array([1, 0, 1], dtype=np.uint8)
b_u32 = np.array([0, 1], dtype=np.uint32)
scalar = np.array(2.5, dtype=np.float32)
empty = np.zeros((2, 0), dtype=np.float32)
dtypes_item = {
    "f64": param(f64, "F64"),
    "flex": param(flex, "Flex32"),
    "bf": {"id": burn_id(), "param": {"bytes": bf.view(torch.int16).numpy().tobytes(), "shape": [2], "dtype": "BF16"}},
    "ints": {"i8": param(i8, "I8"), "i16": param(i16, "I16"), "u16": param(u16, "U16"),
             "u32": param(u32, "U32"), "u64": param(u64, "U64"), "i64": param(i64, "I64"),
             "u8": param(u8, "U8")},
    "bools": [param(b_old, "Bool"), param(b_u32, {"Bool": "U32"})],
    "scalar": param(scalar, "F32", ident="0f3b5ba7-86bf-4f8a-b5d3-0a0c7ee1b2e5"),  # legacy uuid id
    "empty": param(empty, "F32"),
    # constants of records before Burn 0.21 (usize, f64, strings, bool): no tensor
    "stride": [1, 1], "eps": 1e-5, "name": "relu", "flag": True, "neg": -3,
}
with open(os.path.join(OUT, "burn_dtypes.mpk"), "wb") as fh:
    fh.write(record(metadata(False), dtypes_item))
expected["burn_dtypes.mpk"] = {"metadata": metadata(False), "tensors": {
    "f64": entry("F32", f64.astype(np.float32)),
    "flex": entry("F32", flex),
    "bf": entry("BF16", bf.float().numpy()),
    "ints.i8": entry("I32", i8), "ints.i16": entry("I32", i16), "ints.u16": entry("I32", u16),
    "ints.u32": entry("I64", u32), "ints.u64": entry("I64", u64), "ints.i64": entry("I64", i64),
    "ints.u8": entry("U8", u8),
    "bools.0": entry("BOOL", b_old), "bools.1": entry("BOOL", b_u32),
    "scalar": entry("F32", scalar), "empty": entry("F32", empty),
}}

# ---------------------------------------------------------------- Kiln's writer, byte for byte
layout = {
    "fc1.weight": ("F32", torch.randn(2, 3).numpy()),
    "fc1.bias": ("F32", np.array([0.1, 1.0 / 3.0, 70000.0], dtype=np.float32)),
    "layers.0.weight": ("F32", torch.randn(2).numpy()),
    "layers.1.weight": ("F32", torch.randn(2).numpy()),
    "seq.0.weight": ("F32", torch.randn(1).numpy()),
    "seq.2.weight": ("F32", torch.randn(1).numpy()),
    "num_batches_tracked": ("I64", np.array([7], dtype=np.int64)),
    "mask": ("BOOL", np.array([1, 0, 1], dtype=np.uint8)),
}
with open(os.path.join(OUT, "kiln_layout.json"), "w") as fh:
    json.dump({k: {"dtype": d, "shape": list(a.shape), "values": values(a)} for k, (d, a) in layout.items()},
              fh, indent=1)


def kiln_tree(half):
    tree = {}
    for key in sorted(layout):
        dtype, a = layout[key]
        if dtype == "F32":
            stored = param(a.astype(np.float16 if half else np.float32), "F16" if half else "F32", fnv_id(key))
        elif dtype == "I64":
            stored = param(a.astype(np.int16 if half else np.int32), "I16" if half else "I32", fnv_id(key))
        else:
            stored = param(a, {"Bool": "Native"}, fnv_id(key))
        node = tree
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = stored

    def arrays(node):
        if not isinstance(node, dict) or "param" in node:
            return node
        keys = list(node)
        canonical = all(k.isdigit() and (k == "0" or k[0] != "0") for k in keys)
        if keys and canonical and sorted(int(k) for k in keys) == list(range(len(keys))):
            return [arrays(node[str(i)]) for i in range(len(keys))]
        return {k: arrays(node[k]) for k in sorted(keys)}

    return arrays(tree)


for half in (False, True):
    with np.errstate(over="ignore"), open(os.path.join(OUT, f"kiln_layout_{'half' if half else 'full'}.mpk"), "wb") as fh:
        fh.write(record(metadata(half), kiln_tree(half)))

with open(os.path.join(OUT, "expected.json"), "w") as fh:
    json.dump(expected, fh, indent=1)
print("wrote", sorted(os.listdir(OUT)))

# ---------------------------------------------------------------- fuzz seeds
FUZZ = os.path.join(os.path.dirname(OUT), "..", "..", "fuzz", "named_mpk")
os.makedirs(FUZZ, exist_ok=True)
for name in ("burn_full.mpk", "burn_half.mpk", "burn_dtypes.mpk", "kiln_layout_half.mpk"):
    with open(os.path.join(OUT, name), "rb") as src, open(os.path.join(FUZZ, name[:-4]), "wb") as dst:
        dst.write(src.read())
small = {"w": param(np.array([1.0], dtype=np.float32), "F32", "a")}
seeds = {
    "small": record(metadata(False), small),
    "empty_item": record(metadata(False), {}),
    "array_item": record(metadata(False), [small, None]),
    "invalid_truncated": record(metadata(False), small)[:-3],
    "invalid_size": record(metadata(False), {"w": {"id": "a", "param": {"bytes": b"\0\0", "shape": [1], "dtype": "F32"}}}),
    "invalid_dtype": record(metadata(False), {"w": {"id": "a", "param": {"bytes": b"", "shape": [0], "dtype": "F8"}}}),
    "invalid_root": msgpack.packb([1, 2, 3]),
}
for name, data in seeds.items():
    with open(os.path.join(FUZZ, name), "wb") as fh:
        fh.write(data)
