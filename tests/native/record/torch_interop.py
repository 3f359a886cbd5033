#!/usr/bin/python3
"""PyTorch side of tests/native/record/torch_interop_test.cpp.

Usage: torch_interop.py WORK_DIR [basic|xor|cnn]   (default basic)

Exit status: 0 when every check passes, 1 with a message on the first mismatch, 77 when
torch cannot be imported (the test is then skipped).

Reads the files Kiln wrote into WORK_DIR, checks them against PyTorch, and writes files for
Kiln to check. SafeTensors is parsed and written here with json + struct only (not the
safetensors package), following https://github.com/huggingface/safetensors:
8-byte little-endian header length, JSON header, little-endian row-major data.

Kiln -> PyTorch (exit status 1 with a message on any mismatch):
  kiln_mlp.safetensors       Sequential(Linear(3, 4), ReLU(), Linear(4, 2)), F32: loads with
                             load_state_dict(strict=True), gives kiln_mlp.json's "logits"
                             for its "inputs" to 1e-5, and re-serializing the state dict here
                             gives the same bytes (canonical form).
  kiln_mlp_half.safetensors  the same model as F16: every tensor equals torch's .half() of the
                             F32 weights bit for bit; the logits equal "half_logits" to 1e-5.
  kiln_f16_values.safetensors "f32" and "f16" (Kiln's conversion of it): bit-equal to
                             torch's .half() for every value (ties, subnormals, overflow, inf).
  kiln_bn.safetensors        a BatchNorm1d(3) state (num_batches_tracked stored as I64):
                             loads with strict=True; values equal kiln_bn.json.
  kiln_xor.safetensors (xor)  a Sequential(Linear(2, 16), ReLU(), Linear(16, 2)) trained on
                             XOR by Kiln: loads with strict=True, gives kiln_xor.json's "logits"
                             to 1e-5 and predicts 0 1 1 0 for the corners.
  kiln_cnn.safetensors (cnn)  nn::Sequential(reshape, conv2d, batch_norm, relu, max_pool2d,
                             conv2d, flatten, linear) from Kiln's JSON spec, running
                             statistics moved by training forwards: loads into cnn() with
                             strict=True and gives kiln_cnn.json's "logits" in eval mode.
PyTorch -> Kiln:
  torch_mlp.safetensors + torch_mlp.json   a seeded Sequential(Linear(3, 4), ReLU(),
                             Linear(4, 2)), its inputs and logits.
  torch_bn.safetensors + torch_bn.json     a BatchNorm1d(3) after 3 training steps
                             (num_batches_tracked = 3 as a 0-dim int64), its state as JSON.
  torch_cnn.safetensors + torch_cnn.json (cnn)  cnn() trained 5 SGD steps (batch
                             statistics, num_batches_tracked = 5), inputs and eval logits.
  torch_xor.safetensors + torch_xor.json (xor)  the same model trained on XOR by PyTorch
                             (seed 0, Adam lr 0.03, 200 full-batch steps), inputs and logits.
"""
import json
import os
import struct
import sys

try:
    import torch
except ImportError as error:  # the C++ test skips on exit status 77
    print("torch_interop.py: cannot import torch (%s); install python3-torch" % error)
    sys.exit(77)

# dtype name -> (struct format, torch dtype, alignment rank in the reference's Dtype enum)
DTYPES = {
    "BOOL": ("?", torch.bool, 0),
    "U8": ("B", torch.uint8, 1),
    "F16": ("e", torch.float16, 7),
    "I32": ("i", torch.int32, 9),
    "F32": ("f", torch.float32, 11),
    "I64": ("q", torch.int64, 13),
}
NAMES = {torch_dtype: name for name, (_, torch_dtype, _) in DTYPES.items()}


def fail(message):
    print("torch_interop.py: FAIL: " + message)
    sys.exit(1)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


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
        fmt, dtype, _ = DTYPES[entry["dtype"]]
        begin, end = entry["data_offsets"]
        shape = entry["shape"]
        values = struct.unpack("<%d%s" % (numel(shape), fmt), body[begin:end])
        tensors[key] = torch.tensor(values, dtype=dtype).reshape(shape)
    return tensors


def safetensors_bytes(tensors):
    """The reference's canonical layout: descending alignment, then key; compact JSON with
    dtype, shape, data_offsets; header padded with spaces to a multiple of 8."""
    order = sorted(tensors, key=lambda k: (-DTYPES[NAMES[tensors[k].dtype]][2], k))
    header, chunks, offset = {}, [], 0
    for key in order:
        t = tensors[key].detach().contiguous()
        name = NAMES[t.dtype]
        fmt = DTYPES[name][0]
        chunk = struct.pack("<%d%s" % (t.numel(), fmt), *t.flatten().tolist())
        header[key] = {"dtype": name, "shape": list(t.shape),
                       "data_offsets": [offset, offset + len(chunk)]}
        chunks.append(chunk)
        offset += len(chunk)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))


def f16_bits(t):
    return t.contiguous().view(torch.int16).tolist()


def check_close(name, got, expected, tol=1e-5):
    diff = (got - expected).abs().max().item()
    if not diff <= tol:
        fail("%s: max |difference| %g > %g\n  torch: %s\n  kiln:  %s"
             % (name, diff, tol, got.tolist(), expected.tolist()))
    print("ok  %s (max |difference| %.3g)" % (name, diff))


def kiln_to_torch(work):
    with open(os.path.join(work, "kiln_mlp.json")) as f:
        expected = json.load(f)
    x = torch.tensor(expected["inputs"], dtype=torch.float32)

    path = os.path.join(work, "kiln_mlp.safetensors")
    state = read_safetensors(path)
    model = mlp()
    model.load_state_dict(state, strict=True)
    with torch.no_grad():
        check_close("Kiln F32 file in torch: logits", model(x),
                    torch.tensor(expected["logits"]))
    with open(path, "rb") as f:
        if f.read() != safetensors_bytes(model.state_dict()):
            fail("kiln_mlp.safetensors differs from the canonical bytes of its state dict")
    print("ok  Kiln F32 file is canonical")

    half = read_safetensors(os.path.join(work, "kiln_mlp_half.safetensors"))
    for key, value in half.items():
        if value.dtype != torch.float16:
            fail("kiln_mlp_half.safetensors: %s is %s, expected F16" % (key, value.dtype))
        if f16_bits(value) != f16_bits(state[key].half()):
            fail("kiln_mlp_half.safetensors: %s differs from torch's .half()" % key)
    model.load_state_dict(half, strict=True)
    with torch.no_grad():
        check_close("Kiln F16 file in torch: logits", model(x),
                    torch.tensor(expected["half_logits"]))

    values = read_safetensors(os.path.join(work, "kiln_f16_values.safetensors"))
    f32, f16 = values["f32"], values["f16"]
    torch_bits, kiln_bits = f16_bits(f32.half()), f16_bits(f16)
    bad = [i for i in range(len(torch_bits)) if torch_bits[i] != kiln_bits[i]]
    if bad:
        i = bad[0]
        fail("%d of %d f32 -> f16 conversions differ from torch, first: %r -> torch 0x%04x, "
             "kiln 0x%04x" % (len(bad), len(torch_bits), f32[i].item(),
                              torch_bits[i] & 0xffff, kiln_bits[i] & 0xffff))
    print("ok  %d f32 -> f16 conversions equal torch's .half()" % len(torch_bits))

    with open(os.path.join(work, "kiln_bn.json")) as f:
        bn_expected = json.load(f)
    bn_state = read_safetensors(os.path.join(work, "kiln_bn.safetensors"))
    if bn_state["num_batches_tracked"].dtype != torch.int64:
        fail("num_batches_tracked is %s, expected int64" % bn_state["num_batches_tracked"].dtype)
    bn = torch.nn.BatchNorm1d(3)
    bn.load_state_dict(bn_state, strict=True)
    for key, value in bn_expected.items():
        got = bn.state_dict()[key]
        if got.flatten().tolist() != torch.tensor(value).flatten().tolist():
            fail("kiln_bn.safetensors: %s = %s, expected %s" % (key, got.tolist(), value))
    if bn.num_batches_tracked.dtype != torch.int64:
        fail("BatchNorm1d.num_batches_tracked lost its int64 dtype")
    print("ok  Kiln BatchNorm state (I64 num_batches_tracked) loads with strict=True")


def torch_to_kiln(work):
    torch.manual_seed(0)
    model = mlp()
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 3.0, 1.0], [0.0, 0.0, 0.0]])
    with torch.no_grad():
        logits = model(x)
    with open(os.path.join(work, "torch_mlp.safetensors"), "wb") as f:
        f.write(safetensors_bytes(model.state_dict()))
    with open(os.path.join(work, "torch_mlp.json"), "w") as f:
        json.dump({"inputs": x.tolist(), "logits": logits.tolist()}, f)

    bn = torch.nn.BatchNorm1d(3)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([1.5, -0.5, 2.0]))
        bn.bias.copy_(torch.tensor([0.1, 0.2, -0.3]))
    bn.train()
    for _ in range(3):
        bn(torch.randn(8, 3))
    state = bn.state_dict()
    if state["num_batches_tracked"].shape != torch.Size([]):
        fail("expected PyTorch to store num_batches_tracked as a 0-dim tensor")
    with open(os.path.join(work, "torch_bn.safetensors"), "wb") as f:
        f.write(safetensors_bytes(state))
    with open(os.path.join(work, "torch_bn.json"), "w") as f:
        json.dump({k: v.flatten().tolist() for k, v in state.items()}, f)
    print("ok  wrote torch_mlp and torch_bn")


def xor_mlp():
    return torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))


XOR_INPUTS = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
XOR_TARGETS = [0, 1, 1, 0]


def check_xor_predictions(name, model):
    with torch.no_grad():
        predicted = model(torch.tensor(XOR_INPUTS)).argmax(1).tolist()
    if predicted != XOR_TARGETS:
        fail("%s predicts %s for the XOR corners, expected %s" % (name, predicted, XOR_TARGETS))


def xor(work):
    with open(os.path.join(work, "kiln_xor.json")) as f:
        expected = json.load(f)
    model = xor_mlp()
    model.load_state_dict(read_safetensors(os.path.join(work, "kiln_xor.safetensors")), strict=True)
    with torch.no_grad():
        check_close("Kiln XOR in torch: logits", model(torch.tensor(expected["inputs"])),
                    torch.tensor(expected["logits"]))
    check_xor_predictions("Kiln's XOR model in torch", model)

    torch.manual_seed(0)
    model = xor_mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.03)
    x, y = torch.tensor(XOR_INPUTS), torch.tensor(XOR_TARGETS)
    for _ in range(200):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    check_xor_predictions("torch's XOR model", model)
    inputs = torch.tensor(XOR_INPUTS + [[0.5, 0.5], [0.25, 0.9], [-1.0, 2.0]])
    with torch.no_grad():
        logits = model(inputs)
    with open(os.path.join(work, "torch_xor.safetensors"), "wb") as f:
        f.write(safetensors_bytes(model.state_dict()))
    with open(os.path.join(work, "torch_xor.json"), "w") as f:
        json.dump({"inputs": inputs.tolist(), "logits": logits.tolist()}, f)
    print("ok  wrote torch_xor (loss %.4f)" % loss.item())


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


def cnn(work):
    with open(os.path.join(work, "kiln_cnn.json")) as f:
        expected = json.load(f)
    model = cnn_model()
    state = read_safetensors(os.path.join(work, "kiln_cnn.safetensors"))
    model.load_state_dict(state, strict=True)
    model.eval()
    with torch.no_grad():
        check_close("Kiln CNN in torch: logits", model(torch.tensor(expected["inputs"])),
                    torch.tensor(expected["logits"]), tol=1e-4)

    torch.manual_seed(1)
    model = cnn_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    for _ in range(5):
        x = torch.randn(8, 36) * 2 + 0.5
        optimizer.zero_grad()
        model(x).square().mean().backward()
        optimizer.step()
    model.eval()
    inputs = torch.randn(4, 36)
    with torch.no_grad():
        logits = model(inputs)
    with open(os.path.join(work, "torch_cnn.safetensors"), "wb") as f:
        f.write(safetensors_bytes(model.state_dict()))
    with open(os.path.join(work, "torch_cnn.json"), "w") as f:
        json.dump({"inputs": inputs.tolist(), "logits": logits.tolist(),
                   "num_batches_tracked": int(model[2].num_batches_tracked.item())}, f)
    print("ok  wrote torch_cnn")


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and
                                       sys.argv[2] not in ("basic", "xor", "cnn")):
        fail("usage: torch_interop.py WORK_DIR [basic|xor|cnn]")
    if len(sys.argv) == 3 and sys.argv[2] == "xor":
        xor(sys.argv[1])
    elif len(sys.argv) == 3 and sys.argv[2] == "cnn":
        cnn(sys.argv[1])
    else:
        kiln_to_torch(sys.argv[1])
        torch_to_kiln(sys.argv[1])


if __name__ == "__main__":
    main()
