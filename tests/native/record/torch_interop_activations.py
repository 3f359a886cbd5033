#!/usr/bin/python3
"""PyTorch side of tests/native/record/torch_interop_activations_test.cpp.

Usage: torch_interop_activations.py WORK_DIR

Exit status: 0 when every check passes, 1 with a message on the first mismatch, 77 when
torch cannot be imported (the test is then skipped).

The model, in torch.nn terms (its state_dict keys are the record keys Kiln writes for its
Sequential spec linear, prelu, swi_glu, elu, glu, celu, selu, mish, hard_sigmoid, hard_swish):
  0 Linear(4, 6) · 1 PReLU(6) · 2 SwiGlu(6, 8, bias) (Burn's: linear_inner, linear_outer)
  · 3 ELU(0.5) · 4 GLU(-1) · 5 CELU(1.5) · 6 SELU · 7 Mish · 8 Hardsigmoid · 9 Hardswish

Kiln -> PyTorch: kiln_act.safetensors loads with load_state_dict(strict=True) and gives
kiln_act.json's "outputs" for its "inputs" (1e-5).
PyTorch -> Kiln: torch_act.safetensors (seeded weights, PReLU weights moved off 0.25) and
torch_act.json ("inputs", "outputs") for Kiln to load and reproduce.
"""
import json
import os
import struct
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError as error:  # the C++ test skips on exit status 77
    print("torch_interop_activations.py: cannot import torch (%s)" % error)
    sys.exit(77)


def fail(message):
    print("torch_interop_activations.py: FAIL: " + message)
    sys.exit(1)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    body = data[8 + n:]
    tensors = {}
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        if entry["dtype"] != "F32":
            fail("%s: expected F32, got %s" % (key, entry["dtype"]))
        begin, end = entry["data_offsets"]
        count = (end - begin) // 4
        values = struct.unpack("<%df" % count, body[begin:end])
        tensors[key] = torch.tensor(values, dtype=torch.float32).reshape(entry["shape"])
    return tensors


def safetensors_bytes(tensors):
    header, chunks, offset = {}, [], 0
    for key in sorted(tensors):
        t = tensors[key].detach().contiguous()
        chunk = struct.pack("<%df" % t.numel(), *t.flatten().tolist())
        header[key] = {"dtype": "F32", "shape": list(t.shape),
                       "data_offsets": [offset, offset + len(chunk)]}
        chunks.append(chunk)
        offset += len(chunk)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


class SwiGlu(torch.nn.Module):
    """Burn's SwiGlu: silu(linear_inner(x)) * linear_outer(x)."""

    def __init__(self, d_input, d_output, bias):
        super().__init__()
        self.linear_inner = torch.nn.Linear(d_input, d_output, bias=bias)
        self.linear_outer = torch.nn.Linear(d_input, d_output, bias=bias)

    def forward(self, x):
        return F.silu(self.linear_inner(x)) * self.linear_outer(x)


def model():
    return torch.nn.Sequential(
        torch.nn.Linear(4, 6), torch.nn.PReLU(6), SwiGlu(6, 8, True), torch.nn.ELU(0.5),
        torch.nn.GLU(-1), torch.nn.CELU(1.5), torch.nn.SELU(), torch.nn.Mish(),
        torch.nn.Hardsigmoid(), torch.nn.Hardswish())


def main():
    work = sys.argv[1]
    with open(os.path.join(work, "kiln_act.json")) as f:
        expected = json.load(f)
    m = model()
    m.load_state_dict(read_safetensors(os.path.join(work, "kiln_act.safetensors")), strict=True)
    x = torch.tensor(expected["inputs"], dtype=torch.float32)
    with torch.no_grad():
        got = m(x)
    want = torch.tensor(expected["outputs"], dtype=torch.float32)
    diff = (got - want).abs().max().item()
    if not diff <= 1e-5:
        fail("Kiln's model in torch: max |difference| %g\n  torch: %s\n  kiln:  %s"
             % (diff, got.tolist(), want.tolist()))
    print("ok  Kiln -> torch (max |difference| %.3g)" % diff)

    torch.manual_seed(7)
    m = model()
    with torch.no_grad():
        m[1].weight.copy_(torch.linspace(-0.5, 0.8, 6))
    x = torch.randn(5, 4) * 2
    with torch.no_grad():
        y = m(x)
    with open(os.path.join(work, "torch_act.safetensors"), "wb") as f:
        f.write(safetensors_bytes(m.state_dict()))
    with open(os.path.join(work, "torch_act.json"), "w") as f:
        json.dump({"inputs": x.tolist(), "outputs": y.tolist(), "keys": sorted(m.state_dict())}, f)
    print("wrote torch_act.safetensors")


main()
