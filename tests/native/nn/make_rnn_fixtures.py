#!/usr/bin/python3
"""Writes tests/native/nn/rnn_fixtures.json: torch.nn.LSTM / torch.nn.GRU (PyTorch 1.13,
batch_first=True, float32, CPU) values and autograd gradients for Kiln's Lstm and Gru
(tests/native/nn/lstm_test.cpp, gru_test.cpp, tests/js/nn_recurrent.test.mjs).

Run: /usr/bin/python3 tests/native/nn/make_rnn_fixtures.py   (from the repository root)

Each entry of "modules": the module's arguments, its state_dict (PyTorch's keys, which are
Kiln's record keys), the input x, the initial state (h0, c0 for LSTM; absent: zeros), the
upstream tensors dy_output, dy_h_n (and dy_c_n) and the expected output, h_n (c_n) and
gradients of  L = sum(output * dy_output) + sum(h_n * dy_h_n) [+ sum(c_n * dy_c_n)]
with respect to x, h0, c0 and every parameter ("grad_<key>"). Dropout is 0 (eval and
training agree). "shared_cases" holds the reference case gru_reset_gate_after_matmul
verbatim (from ../shared/cases/cases.jsonl; the tests must not read that folder).
"""
import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def t(x):
    x = x.detach().contiguous()
    return {"shape": list(x.shape), "data": [float(v) for v in x.flatten().tolist()]}


def case(name, kind, d_input, d_hidden, num_layers, bidirectional, bias, batch, seq, with_state, seed):
    torch.manual_seed(seed)
    cls = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
    m = cls(d_input, d_hidden, num_layers=num_layers, bias=bias, batch_first=True,
            bidirectional=bidirectional)
    dirs = 2 if bidirectional else 1
    x = torch.randn(batch, seq, d_input, requires_grad=True)
    h0 = torch.randn(num_layers * dirs, batch, d_hidden, requires_grad=True) if with_state else None
    c0 = torch.randn(num_layers * dirs, batch, d_hidden, requires_grad=True) if with_state and kind == "lstm" else None
    if kind == "lstm":
        out, (hn, cn) = m(x, (h0, c0)) if with_state else m(x)
    else:
        out, hn = m(x, h0) if with_state else m(x)
        cn = None
    dy_out = torch.randn_like(out)
    dy_h = torch.randn_like(hn)
    loss = (out * dy_out).sum() + (hn * dy_h).sum()
    entry = {
        "name": name, "kind": kind, "d_input": d_input, "d_hidden": d_hidden,
        "num_layers": num_layers, "bidirectional": bidirectional, "bias": bias,
        "state_dict": {k: t(v) for k, v in m.state_dict().items()},
        "x": t(x), "dy_output": t(dy_out), "dy_h_n": t(dy_h),
        "output": t(out), "h_n": t(hn),
    }
    if cn is not None:
        dy_c = torch.randn_like(cn)
        loss = loss + (cn * dy_c).sum()
        entry["dy_c_n"] = t(dy_c)
        entry["c_n"] = t(cn)
    loss.backward()
    entry["grad_x"] = t(x.grad)
    if h0 is not None:
        entry["h0"] = t(h0)
        entry["grad_h0"] = t(h0.grad)
    if c0 is not None:
        entry["c0"] = t(c0)
        entry["grad_c0"] = t(c0.grad)
    for k, p in m.named_parameters():
        entry["grad_" + k] = t(p.grad)
    return entry


def shared_case(case_id):
    path = os.path.join(HERE, "..", "..", "..", "..", "shared", "cases", "cases.jsonl")
    if not os.path.exists(path):
        path = "/work/shared/cases/cases.jsonl"
    with open(path) as f:
        for line in f:
            if line.strip():
                c = json.loads(line)
                if c["id"] == case_id:
                    return c
    raise SystemExit("no case " + case_id)


def main():
    modules = [
        case("lstm_2layer_bidirectional", "lstm", 3, 2, 2, True, True, 2, 4, True, 1),
        case("gru_2layer_bidirectional", "gru", 3, 2, 2, True, True, 2, 4, True, 2),
        case("lstm_1layer_no_bias_zero_state", "lstm", 2, 3, 1, False, False, 3, 2, False, 3),
        case("gru_1layer_no_bias_zero_state", "gru", 2, 3, 1, False, False, 3, 2, False, 4),
        case("gru_3layer_unidirectional", "gru", 4, 3, 3, False, True, 1, 5, True, 5),
    ]
    out = {"torch": torch.__version__, "modules": modules,
           "shared_cases": [shared_case("gru_reset_gate_after_matmul")]}
    with open(os.path.join(HERE, "rnn_fixtures.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
