#!/usr/bin/python3
"""Writes tests/native/nn/activation_more_fixtures.json with Debian's PyTorch 1.13 (float32):
values and gradients of selu, mish, hardsigmoid, hardswish, elu, celu at special points,
glu, prelu and the SwiGlu block (Burn's: silu(linear_inner(x)) * linear_outer(x)).
Gradients are those of L = sum(y * dy). Non-finite floats are the strings "nan", "inf",
"-inf". Run: /usr/bin/python3 tests/native/nn/make_activation_more_fixtures.py
"""
import json
import math
import os

import torch
import torch.nn.functional as F

torch.manual_seed(19)


def enc(t):
    out = []
    for v in t.detach().reshape(-1).tolist():
        if math.isnan(v):
            out.append("nan")
        elif math.isinf(v):
            out.append("inf" if v > 0 else "-inf")
        else:
            out.append(v)
    return {"shape": list(t.shape), "data": out}


# 25 points (odd: the SIMD body and the scalar tail both run): 0, -0, ±inf, nan, kinks of
# the hard activations (±3), tiny and large |x|.
POINTS = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), -3.0, 3.0, -2.5, 2.5, -1e-7,
          1e-7, -0.5, 0.5, -1.0, 1.0, -20.0, 20.0, -100.0, 100.0, -1e4, 1e4, -7.25, 0.3,
          -0.01, 88.0]

UNARY = {
    "selu": lambda x: F.selu(x),
    "mish": lambda x: F.mish(x),
    "hard_sigmoid": lambda x: F.hardsigmoid(x),
    "hard_swish": lambda x: F.hardswish(x),
    "elu": lambda x: F.elu(x),
    "elu_alpha_0.5": lambda x: F.elu(x, alpha=0.5),
    "celu": lambda x: F.celu(x),
    "celu_alpha_2": lambda x: F.celu(x, alpha=2.0),
    "celu_alpha_-0.7": lambda x: F.celu(x, alpha=-0.7),
}

out = {"unary": {}}
x0 = torch.tensor(POINTS, dtype=torch.float32)
dy = torch.rand(len(POINTS)) + 0.5
for name, f in UNARY.items():
    x = x0.clone().requires_grad_(True)
    y = f(x)
    (g,) = torch.autograd.grad((y * dy).sum(), x)
    out["unary"][name] = {"x": enc(x0), "dy": enc(dy), "y": enc(y), "grad": enc(g)}

# glu along dim 1 and along the last dim.
out["glu"] = []
for shape, dim in (([2, 6, 3], 1), ([3, 4], -1)):
    x = (torch.randn(*shape) * 2).requires_grad_(True)
    y = F.glu(x, dim)
    d = torch.rand(*y.shape) + 0.5
    (g,) = torch.autograd.grad((y * d).sum(), x)
    out["glu"].append({"dim": dim, "x": enc(x), "dy": enc(d), "y": enc(y), "grad": enc(g)})

# prelu with a weight per channel (and exact zeros in x: the gradient there is weight·g),
# and with one shared weight.
out["prelu"] = []
for shape, n in (([2, 3, 4], 3), ([4, 5], 1)):
    x = torch.randn(*shape)
    x.view(-1)[::5] = 0.0
    x.requires_grad_(True)
    w = (torch.rand(n) - 0.3).requires_grad_(True)
    y = F.prelu(x, w)
    d = torch.rand(*y.shape) + 0.5
    gx, gw = torch.autograd.grad((y * d).sum(), (x, w))
    out["prelu"].append({"x": enc(x), "weight": enc(w), "dy": enc(d), "y": enc(y),
                         "grad_x": enc(gx), "grad_weight": enc(gw)})

# SwiGlu(d_input 4, d_output 3, bias): silu(x·W_iᵀ + b_i) · (x·W_oᵀ + b_o), x [2, 5, 4].
x = torch.randn(2, 5, 4).requires_grad_(True)
inner = torch.nn.Linear(4, 3)
outer = torch.nn.Linear(4, 3)
y = F.silu(inner(x)) * outer(x)
d = torch.rand(*y.shape) + 0.5
params = [inner.weight, inner.bias, outer.weight, outer.bias]
grads = torch.autograd.grad((y * d).sum(), [x] + params)
out["swi_glu"] = {
    "x": enc(x), "dy": enc(d), "y": enc(y),
    "linear_inner.weight": enc(inner.weight), "linear_inner.bias": enc(inner.bias),
    "linear_outer.weight": enc(outer.weight), "linear_outer.bias": enc(outer.bias),
    "grad_x": enc(grads[0]),
    "grad_linear_inner.weight": enc(grads[1]), "grad_linear_inner.bias": enc(grads[2]),
    "grad_linear_outer.weight": enc(grads[3]), "grad_linear_outer.bias": enc(grads[4]),
}

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "activation_more_fixtures.json")
with open(path, "w") as f:
    json.dump(out, f, separators=(",", ":"))
    f.write("\n")
print("wrote", path)
