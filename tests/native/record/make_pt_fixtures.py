#!/usr/bin/python3
"""Writes the PyTorch checkpoint fixtures of tests/native/record/pytorch_*_test.cpp and
tests/js/io_pytorch.test.mjs into tests/native/record/pytorch/ with Debian's PyTorch 1.13
(python3-torch): `/usr/bin/python3 tests/native/record/make_pt_fixtures.py`. The files are
committed (the tests run without python); run this again after changing it.

Valid checkpoints (torch.save, the zip format) and their expectations (expected.json):
  mlp.pt        Mlp (fc1 = Linear(3, 4), ReLU, fc2 = Linear(4, 2)): state_dict, inputs, logits
  cnn.pt        Sequential(Unflatten(1, (1, 6, 6)), Conv2d(1, 4, 3, padding='same'),
                BatchNorm2d(4), ReLU(), MaxPool2d(2), Conv2d(4, 6, 2), Flatten(),
                Linear(24, 3)) after 5 SGD steps: state_dict, inputs, eval logits
  bn.pt         Sequential(Linear(4, 5), BatchNorm1d(5), ReLU(), Linear(5, 3)) after 3
                training steps (num_batches_tracked = 3, a 0-dim int64): inputs, eval logits
  half.pt       the Mlp's state_dict in float16; logits of the f16 weights computed in f32
  bf16.pt       the same in bfloat16
  views.pt      non-contiguous and shared storages, every dtype Kiln reads: "transposed"
                (a .t() view), "sliced" (x[1:3, ::2] with a storage offset), "shared_a" and
                "shared_b" (one storage: a and a[2:].view(2, 2)), "expanded" (stride 0),
                "scalar" (0-dim), "empty" ([0, 3]), "f64", "i64", "i32", "i16", "i8", "u8",
                "bool"; their values in expected.json
  big_int64.pt  {"big": int64 [5, -2^40]}: exact in the record, outside int32 in JS
  nested.pt     {"model": Mlp state_dict, "epoch": 3, "lr": 0.1, "tag": "run-1",
                "optimizer": SGD(momentum=0.9).state_dict() after one step}
  zip64.pt      mlp.pt's entries in a zip whose directory keeps sizes and offsets in zip64
                extra fields (0xFFFFFFFF in the fixed ones) and whose end record is saturated
  parameter.pt  {"w": torch.nn.Parameter} (torch._utils._rebuild_parameter)
The fuzz target's seeds (tests/fuzz/pytorch/) are copies of every .pt below.
Malformed checkpoints (malformed/), each with the problem the reader must name:
  legacy.pt           torch.save(..., _use_new_zipfile_serialization=False): not a zip
  deflated.pt         mlp.pt with its entries deflated (zipfile.ZIP_DEFLATED)
  os_system.pt        data.pkl calls os.system("touch /tmp/kiln_pytorch_os_system_ran")
  eval_global.pt      data.pkl names builtins.eval
  unknown_opcode.pt   data.pkl holds the INST opcode ('i')
  view_past_storage.pt  a [5] view of a 4-element storage
  numel_mismatch.pt   the persistent id claims 1000 elements, the entry holds 4
  missing_storage.pt  the persistent id names data/7, which is absent
  not_a_dict.pt       the pickle's value is a list of tensors
  no_data_pkl.pt      a zip without <name>/data.pkl
  deep_nesting.pt     tuples nested 5,000 deep
  bad_utf8_key.pt     the key is BINUNICODE b"w\x83", not UTF-8 (found by fuzz_pytorch)
  memo_missing.pt     BINGET of a memo key never stored
  stack_underflow.pt  TUPLE2 on an empty stack
"""
import collections
import io
import json
import os
import struct
import zipfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "pytorch")
BAD = os.path.join(OUT, "malformed")
os.makedirs(BAD, exist_ok=True)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(3, 4)
        self.fc2 = torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def cnn_model():
    return torch.nn.Sequential(
        torch.nn.Unflatten(1, (1, 6, 6)),
        torch.nn.Conv2d(1, 4, 3, padding="same"),
        torch.nn.BatchNorm2d(4),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(4, 6, 2),
        torch.nn.Flatten(),
        torch.nn.Linear(24, 3))


def rows(t):
    return t.detach().double().tolist()


def save(obj, name, **kwargs):
    torch.save(obj, os.path.join(OUT, name), **kwargs)


expected = {}

# ---------------------------------------------------------------- models
torch.manual_seed(0)
mlp = Mlp()
x = torch.randn(5, 3)
with torch.no_grad():
    expected["mlp"] = {"inputs": rows(x), "logits": rows(mlp(x))}
save(mlp.state_dict(), "mlp.pt")

torch.manual_seed(1)
cnn = cnn_model()
opt = torch.optim.SGD(cnn.parameters(), lr=0.1)
cnn.train()
for _ in range(5):
    opt.zero_grad()
    cnn(torch.randn(8, 36) * 2 + 0.5).square().mean().backward()
    opt.step()
cnn.eval()
x = torch.randn(4, 36)
with torch.no_grad():
    expected["cnn"] = {"inputs": rows(x), "logits": rows(cnn(x))}
save(cnn.state_dict(), "cnn.pt")

torch.manual_seed(2)
bn = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.BatchNorm1d(5), torch.nn.ReLU(),
                         torch.nn.Linear(5, 3))
opt = torch.optim.SGD(bn.parameters(), lr=0.1)
bn.train()
for _ in range(3):
    opt.zero_grad()
    bn(torch.randn(6, 4) * 3 + 1).square().mean().backward()
    opt.step()
bn.eval()
x = torch.randn(5, 4)
with torch.no_grad():
    expected["bn"] = {"inputs": rows(x), "logits": rows(bn(x)),
                      "num_batches_tracked": int(bn[1].num_batches_tracked)}
save(bn.state_dict(), "bn.pt")

for name, dtype in (("half", torch.float16), ("bf16", torch.bfloat16)):
    low = {k: v.to(dtype) for k, v in mlp.state_dict().items()}
    save(low, name + ".pt")
    exact = Mlp()
    exact.load_state_dict({k: v.float() for k, v in low.items()})
    x = torch.tensor(expected["mlp"]["inputs"], dtype=torch.float32)
    with torch.no_grad():
        expected[name] = {"inputs": rows(x), "logits": rows(exact(x)),
                          "fc1.weight": rows(low["fc1.weight"].float())}

# ---------------------------------------------------------------- views and dtypes
base = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 4 - 1
shared = torch.arange(6, dtype=torch.float32) * 0.5
views = collections.OrderedDict()
views["transposed"] = base.t()                      # [4, 3], strides (1, 4)
views["sliced"] = base[1:3, ::2]                    # [2, 2], offset 4, strides (4, 2)
views["shared_a"] = shared
views["shared_b"] = shared[2:].view(2, 2)           # the same storage, offset 2
views["expanded"] = torch.tensor([1.5, -2.5]).expand(3, 2)  # strides (0, 1)
views["scalar"] = torch.tensor(7.25)
views["empty"] = torch.zeros(0, 3)
views["f64"] = torch.tensor([[0.1, -2.0], [1e30, 3.5]], dtype=torch.float64)
views["i64"] = torch.tensor([-3, 0, 2**31 - 1], dtype=torch.int64)
views["i32"] = torch.tensor([[-7, 8]], dtype=torch.int32)
views["i16"] = torch.tensor([-300, 300], dtype=torch.int16)
views["i8"] = torch.tensor([-128, 127], dtype=torch.int8)
views["u8"] = torch.tensor([0, 255], dtype=torch.uint8)
views["bool"] = torch.tensor([True, False, True])
assert not views["transposed"].is_contiguous() and not views["sliced"].is_contiguous()
assert views["shared_b"].storage_offset() == 2 and views["expanded"].stride() == (0, 1)
save(views, "views.pt")


def values(t):
    if t.dtype == torch.bool:
        return t.tolist()
    if t.dtype == torch.float64:
        return t.float().double().tolist()  # as Kiln reads it: rounded to f32
    return t.tolist()


expected["views"] = {k: {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", ""),
                         "values": values(v)} for k, v in views.items()}
save({"big": torch.tensor([5, -(2**40)], dtype=torch.int64)}, "big_int64.pt")

# ---------------------------------------------------------------- nested and parameter
torch.manual_seed(0)
model = Mlp()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
model(torch.randn(2, 3)).sum().backward()
opt.step()
save({"model": model.state_dict(), "epoch": 3, "lr": 0.1, "tag": "run-1",
      "optimizer": opt.state_dict()}, "nested.pt")
x = torch.randn(3, 3)
with torch.no_grad():
    nested_logits = model(x)
expected["nested"] = {"inputs": rows(x), "logits": rows(nested_logits),
                      "model.fc1.weight": rows(model.fc1.weight),
                      "optimizer.state.0.momentum_buffer": rows(opt.state[model.fc1.weight]["momentum_buffer"])}
save({"w": torch.nn.Parameter(torch.tensor([1.0, 2.0]))}, "parameter.pt")

with open(os.path.join(OUT, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
    f.write("\n")

# ---------------------------------------------------------------- malformed


def bad(name, data):
    with open(os.path.join(BAD, name), "wb") as f:
        f.write(data)


def zip_of(entries, method=zipfile.ZIP_STORED):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for n, d in entries:
            z.writestr(zipfile.ZipInfo(n), d, compress_type=method)
    return out.getvalue()


def checkpoint(pickle_bytes, storages=(), name="archive"):
    """A zip laid out as torch.save's: <name>/data.pkl, <name>/data/<key>, <name>/version."""
    entries = [(name + "/data.pkl", pickle_bytes)]
    entries += [(name + "/data/" + k, d) for k, d in storages]
    entries.append((name + "/version", b"3\n"))
    return zip_of(entries)


buf = io.BytesIO()
torch.save({"w": torch.tensor([1.0, 2.0])}, buf, _use_new_zipfile_serialization=False)
bad("legacy.pt", buf.getvalue())

with zipfile.ZipFile(os.path.join(OUT, "mlp.pt")) as z:
    bad("deflated.pt", zip_of([(i.filename, z.read(i)) for i in z.infolist()], zipfile.ZIP_DEFLATED))
    mlp_entries = [(i.filename, z.read(i)) for i in z.infolist()]


def zip64_of(entries):
    """A stored zip whose central directory gives every size and offset as 0xFFFFFFFF with
    the values in zip64 extra fields (APPNOTE 4.5.3), plus the zip64 end records."""
    out, central = bytearray(), bytearray()
    for name, data in entries:
        n, crc, offset = name.encode(), zipfile.crc32(data), len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 0, 0, 0, crc, len(data), len(data),
                           len(n), 0) + n + data
        extra = struct.pack("<HHQQQ", 1, 24, len(data), len(data), offset)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 0, 0, 0, crc,
                               0xFFFFFFFF, 0xFFFFFFFF, len(n), len(extra), 0, 0, 0, 0,
                               0xFFFFFFFF) + n + extra
    cd_offset, end64 = len(out), len(out) + len(central)
    out += central
    out += struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, len(entries), len(entries),
                       len(central), cd_offset)
    out += struct.pack("<IIQI", 0x07064b50, 0, end64, 1)
    out += struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return bytes(out)


with open(os.path.join(OUT, "zip64.pt"), "wb") as f:
    f.write(zip64_of(mlp_entries))
assert torch.load(os.path.join(OUT, "zip64.pt"))["fc1.weight"].equal(mlp.state_dict()["fc1.weight"])


def uni(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


PROTO = b"\x80\x02"
bad("os_system.pt", checkpoint(PROTO + b"cos\nsystem\n" + uni("touch /tmp/kiln_pytorch_os_system_ran")
                               + b"\x85R."))
bad("eval_global.pt", checkpoint(PROTO + b"cbuiltins\neval\n" + uni("1+1") + b"\x85R."))
bad("unknown_opcode.pt", checkpoint(PROTO + b"}(" + uni("w") + b"i__main__\nX\n" + b"u."))

FOUR = struct.pack("<4f", 1, 2, 3, 4)


def tensor_expr(key="0", numel=4, size=(4,), stride=(1,), offset=0, storage=b"FloatStorage"):
    """The opcodes of _rebuild_tensor_v2(persistent storage, offset, size, stride, False,
    OrderedDict()), as torch.save writes them."""
    def tup(v):
        return b"(" + b"".join(b"J" + struct.pack("<i", i) for i in v) + b"t"
    pid = b"(" + uni("storage") + b"ctorch\n" + storage + b"\n" + uni(key) + uni("cpu") + \
        b"J" + struct.pack("<i", numel) + b"tQ"
    return (b"ctorch._utils\n_rebuild_tensor_v2\n(" + pid + b"J" + struct.pack("<i", offset) +
            tup(size) + tup(stride) + b"\x89ccollections\nOrderedDict\n)Rt" + b"R")


def tensor_pickle(**kwargs):
    """{"w": tensor_expr(...)}"""
    return PROTO + b"}" + uni("w") + tensor_expr(**kwargs) + b"s."


bad("view_past_storage.pt", checkpoint(tensor_pickle(size=(5,)), [("0", FOUR)]))
bad("numel_mismatch.pt", checkpoint(tensor_pickle(numel=1000), [("0", FOUR)]))
bad("missing_storage.pt", checkpoint(tensor_pickle(key="7"), [("0", FOUR)]))
bad("not_a_dict.pt", checkpoint(PROTO + b"]" + tensor_expr() + b"a.", [("0", FOUR)]))
bad("no_data_pkl.pt", zip_of([("archive/version", b"3\n"), ("archive/data/0", FOUR)]))
bad("deep_nesting.pt", checkpoint(PROTO + b"(" * 5000 + b")" + b"t" * 5000 + b"."))
bad("bad_utf8_key.pt", checkpoint(PROTO + b"}X\x02\x00\x00\x00w\x83" + tensor_expr() + b"s.", [("0", FOUR)]))
bad("memo_missing.pt", checkpoint(PROTO + b"h\x05."))
bad("stack_underflow.pt", checkpoint(PROTO + b"\x86."))

# The valid tensor_pickle itself loads (a check of the generator: torch reads it).
ok = checkpoint(tensor_pickle(), [("0", FOUR)])
assert torch.load(io.BytesIO(ok))["w"].tolist() == [1, 2, 3, 4]
with open(os.path.join(BAD, "README"), "w") as f:
    f.write("Malformed PyTorch checkpoints written by ../../make_pt_fixtures.py (see its docstring).\n")
# The fuzzer's seeds (tests/fuzz/pytorch/, scripts/fuzz.sh pytorch): every fixture above.
SEEDS = os.path.join(HERE, "..", "..", "fuzz", "pytorch")
os.makedirs(SEEDS, exist_ok=True)
for d, prefix in ((OUT, "valid_"), (BAD, "invalid_")):
    for name in sorted(os.listdir(d)):
        if name.endswith(".pt"):
            with open(os.path.join(d, name), "rb") as f, open(os.path.join(SEEDS, prefix + name), "wb") as g:
                g.write(f.read())
print("wrote", sorted(os.listdir(OUT)), sorted(os.listdir(BAD)))
