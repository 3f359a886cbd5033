#!/usr/bin/python3
"""PyTorch side of tests/native/record/torch_interop_rnn_test.cpp (Lstm and Gru records).

Usage: torch_interop_rnn.py WORK_DIR

Exit status: 0 when every check passes, 1 with a message on the first mismatch, 77 when
torch cannot be imported (the test is then skipped). SafeTensors is read and written with
torch_interop.py's helpers (json + struct only).

Kiln -> PyTorch: for each NAME in kiln_rnn.json's "modules" (kiln_NAME.safetensors, written
by Kiln's SafetensorsRecorder): torch.nn.LSTM / GRU(batch_first=True) with the module's
arguments loads it with load_state_dict(strict=True) and gives Kiln's output and final
state for the same input and initial state to 1e-5.
PyTorch -> Kiln: torch_NAME.safetensors (a seeded torch module's state_dict) and
torch_rnn.json (its arguments, input, initial state, output and final state), which Kiln
loads and must reproduce.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_interop import check_close, fail, read_safetensors, safetensors_bytes  # noqa: E402

import torch  # noqa: E402  (torch_interop exits with 77 when it is missing)


def module(m):
    cls = torch.nn.LSTM if m["kind"] == "lstm" else torch.nn.GRU
    return cls(m["d_input"], m["d_hidden"], num_layers=m["num_layers"], bias=m["bias"],
               batch_first=True, bidirectional=m["bidirectional"])


def tensor(t):
    return torch.tensor(t["data"], dtype=torch.float32).reshape(t["shape"])


def as_json(t):
    t = t.detach().contiguous()
    return {"shape": list(t.shape), "data": [float(v) for v in t.flatten().tolist()]}


def run(model, m, x, h0, c0):
    with torch.no_grad():
        if m["kind"] == "lstm":
            out, (hn, cn) = model(x, (h0, c0))
            return out, hn, cn
        out, hn = model(x, h0)
        return out, hn, None


def kiln_to_torch(work):
    with open(os.path.join(work, "kiln_rnn.json")) as f:
        spec = json.load(f)
    for m in spec["modules"]:
        name = m["name"]
        state = read_safetensors(os.path.join(work, "kiln_%s.safetensors" % name))
        model = module(m)
        model.load_state_dict(state, strict=True)
        print("ok  kiln_%s.safetensors loads into torch with strict=True (%s)"
              % (name, ", ".join(state.keys())))
        x, h0 = tensor(m["x"]), tensor(m["h0"])
        c0 = tensor(m["c0"]) if "c0" in m else None
        out, hn, cn = run(model, m, x, h0, c0)
        check_close("%s: output" % name, out, tensor(m["output"]))
        check_close("%s: h_n" % name, hn, tensor(m["h_n"]))
        if cn is not None:
            check_close("%s: c_n" % name, cn, tensor(m["c_n"]))
        with open(os.path.join(work, "kiln_%s.safetensors" % name), "rb") as f:
            if f.read() != safetensors_bytes(model.state_dict()):
                fail("kiln_%s.safetensors differs from the canonical bytes of its state dict" % name)


def torch_to_kiln(work):
    torch.manual_seed(19)
    modules = []
    for m in [
        {"name": "lstm", "kind": "lstm", "d_input": 3, "d_hidden": 4, "num_layers": 2,
         "bias": True, "bidirectional": True},
        {"name": "gru", "kind": "gru", "d_input": 3, "d_hidden": 4, "num_layers": 2,
         "bias": True, "bidirectional": True},
    ]:
        model = module(m)
        dirs = 2 if m["bidirectional"] else 1
        x = torch.randn(2, 5, m["d_input"])
        h0 = torch.randn(m["num_layers"] * dirs, 2, m["d_hidden"])
        c0 = torch.randn(m["num_layers"] * dirs, 2, m["d_hidden"]) if m["kind"] == "lstm" else None
        out, hn, cn = run(model, m, x, h0, c0)
        with open(os.path.join(work, "torch_%s.safetensors" % m["name"]), "wb") as f:
            f.write(safetensors_bytes(model.state_dict()))
        m.update({"x": as_json(x), "h0": as_json(h0), "output": as_json(out), "h_n": as_json(hn)})
        if cn is not None:
            m.update({"c0": as_json(c0), "c_n": as_json(cn)})
        modules.append(m)
    with open(os.path.join(work, "torch_rnn.json"), "w") as f:
        json.dump({"modules": modules}, f)


def main():
    if len(sys.argv) != 2:
        fail("usage: torch_interop_rnn.py WORK_DIR")
    kiln_to_torch(sys.argv[1])
    torch_to_kiln(sys.argv[1])


if __name__ == "__main__":
    main()
