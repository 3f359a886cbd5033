#!/usr/bin/python3
# Writes attention_fixtures.json (beside this script) for attention_test.cpp and
# tests/js/nn_attention.test.mjs: torch.nn.MultiheadAttention, TransformerEncoder and
# TransformerDecoder (batch_first=True, dropout 0, eval mode, PyTorch 1.13 on the CPU) with
# their state_dicts (the record keys), inputs, masks, outputs and the gradients of
# sum(out * dy) with respect to the inputs and every parameter; the sinusoidal positional
# encoding (the paper's formula written out) and the rotary encoding (the RoFormer rotation
# as a complex product, pairs interleaved).   Run: /usr/bin/python3 make_attention_fixtures.py
import json
import math
import os

import torch

torch.manual_seed(19)


def t(x):
    return {"shape": list(x.shape), "data": [float("%.8g" % v) for v in x.detach().flatten().tolist()]}


def b(x):
    return {"shape": list(x.shape), "data": [bool(v) for v in x.flatten().tolist()]}


def randomize(module):
    # Non-trivial biases and norm weights, so that every key matters.
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.empty_like(p).uniform_(-0.5, 0.5))
        for name, p in module.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.add_(1.0)


def grads(module, inputs, out, dy):
    (out * dy).sum().backward()
    g = {name: t(p.grad) for name, p in module.named_parameters()}
    for name, x in inputs.items():
        g[name] = t(x.grad)
    return g


out = {}

# ---- MultiheadAttention: cross-attention with both masks
E, H = 6, 2
mha = torch.nn.MultiheadAttention(E, H, batch_first=True)
randomize(mha)
q = torch.randn(2, 3, E, requires_grad=True)
k = torch.randn(2, 4, E, requires_grad=True)
v = torch.randn(2, 4, E, requires_grad=True)
mask_pad = torch.tensor([[False, False, False, True], [False, True, False, False]])
mask_attn = torch.tensor([[False, False, True, False], [False, False, False, False],
                          [True, False, False, False]])
ctx, w = mha(q, k, v, key_padding_mask=mask_pad, attn_mask=mask_attn)
dy = torch.randn_like(ctx)
out["mha"] = {
    "d_model": E, "n_heads": H,
    "params": {n: t(p) for n, p in mha.state_dict().items()},
    "query": t(q), "key": t(k), "value": t(v), "mask_pad": b(mask_pad), "mask_attn": b(mask_attn),
    "context": t(ctx), "weights": t(w), "dy": t(dy),
    "grads": grads(mha, {"query": q, "key": k, "value": v}, ctx, dy),
}
# Self-attention without masks, per-head weights.
x = torch.randn(2, 3, E)
with torch.no_grad():
    ctx_s, w_s = mha(x, x, x, average_attn_weights=False)
out["mha_self"] = {"x": t(x), "context": t(ctx_s), "weights_per_head": t(w_s)}

# ---- TransformerEncoder / Decoder, post-norm (relu) and pre-norm (gelu)
D, FF, NH, NL = 8, 16, 2, 2
for norm_first, act in ((False, "relu"), (True, "gelu")):
    tag = "norm_first" if norm_first else "norm_last"
    layer = torch.nn.TransformerEncoderLayer(D, NH, FF, dropout=0.0, activation=act,
                                             batch_first=True, norm_first=norm_first)
    enc = torch.nn.TransformerEncoder(layer, NL, enable_nested_tensor=False)
    randomize(enc)
    enc.eval()
    x = torch.randn(2, 5, D, requires_grad=True)
    pad = torch.tensor([[False] * 5, [False, False, False, False, True]])
    causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
    y = enc(x, mask=causal, src_key_padding_mask=pad)
    dy = torch.randn_like(y)
    out["encoder_" + tag] = {
        "d_model": D, "d_ff": FF, "n_heads": NH, "n_layers": NL, "norm_first": norm_first,
        "activation": act,
        "params": {n: t(p) for n, p in enc.state_dict().items()},
        "x": t(x), "mask_pad": b(pad), "mask_attn": b(causal), "y": t(y), "dy": t(dy),
        "grads": grads(enc, {"x": x}, y, dy),
    }
    with torch.no_grad():
        out["encoder_" + tag]["y_nomask"] = t(enc(x))

    dlayer = torch.nn.TransformerDecoderLayer(D, NH, FF, dropout=0.0, activation=act,
                                              batch_first=True, norm_first=norm_first)
    dec = torch.nn.TransformerDecoder(dlayer, NL)
    randomize(dec)
    dec.eval()
    tgt = torch.randn(2, 4, D, requires_grad=True)
    mem = torch.randn(2, 5, D, requires_grad=True)
    tgt_causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
    mem_pad = torch.tensor([[False, False, False, True, True], [False] * 5])
    y = dec(tgt, mem, tgt_mask=tgt_causal, memory_key_padding_mask=mem_pad)
    dy = torch.randn_like(y)
    out["decoder_" + tag] = {
        "d_model": D, "d_ff": FF, "n_heads": NH, "n_layers": NL, "norm_first": norm_first,
        "activation": act,
        "params": {n: t(p) for n, p in dec.state_dict().items()},
        "target": t(tgt), "memory": t(mem), "target_mask_attn": b(tgt_causal),
        "memory_mask_pad": b(mem_pad), "y": t(y), "dy": t(dy),
        "grads": grads(dec, {"target": tgt, "memory": mem}, y, dy),
    }

# ---- Sinusoidal positional encoding (Vaswani et al. 3.5), d_model 6, seq 5
d, seq = 6, 5
x = torch.randn(2, seq, d, dtype=torch.float64)
pos = torch.arange(seq, dtype=torch.float64)[:, None]
div = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * -(math.log(10000.0) / d))
pe = torch.zeros(seq, d, dtype=torch.float64)
pe[:, 0::2] = torch.sin(pos * div)
pe[:, 1::2] = torch.cos(pos * div)
out["positional"] = {"d_model": d, "x": t(x.float()), "y": t((x.float().double() + pe).float())}

# ---- Rotary encoding (RoFormer eq. 34 as a complex rotation), pairs (2i, 2i+1)
d, seq, theta = 4, 3, 10000.0
x = torch.randn(2, 2, seq, d, dtype=torch.float64)
rot = {}
for start in (0, 2):
    freqs = theta ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = (torch.arange(seq, dtype=torch.float64) + start)[:, None] * freqs[None, :]
    xc = torch.view_as_complex(x.reshape(2, 2, seq, d // 2, 2).contiguous())
    y = torch.view_as_real(xc * torch.polar(torch.ones_like(angles), angles)).reshape(2, 2, seq, d)
    rot[str(start)] = t(y.float())
out["rotary"] = {"d_model": d, "max_sequence_length": 8, "theta": theta, "x": t(x.float()),
                 "y_start": rot}

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_fixtures.json")
with open(path, "w") as f:
    json.dump(out, f, separators=(",", ":"))
print("wrote", path, os.path.getsize(path), "bytes")
