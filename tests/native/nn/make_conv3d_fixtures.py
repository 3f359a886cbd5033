#!/usr/bin/python3
"""Writes conv3d_fixtures.json: conv3d, conv_transpose1d and conv_transpose3d forward values
and the gradients of x, weight and bias computed by PyTorch 1.13 (Debian's python3-torch)
for tests/native/nn/conv3d_test.cpp and tests/js/nn_conv3d.test.mjs.

Each case: the op, its options (PyTorch's arguments; "padding_end" set where the padding is
per side, applied by F.pad before an unpadded conv), the inputs x, weight, bias (or null), the
upstream gradient dy, and the expected y, dx, dw, db. Values are small multiples of 1/8 so
that the inputs are exact in float32.

Run: /usr/bin/python3 tests/native/nn/make_conv3d_fixtures.py
"""
import json
import os

import torch
import torch.nn.functional as F

torch.manual_seed(19)


def grid(shape):
    """Values in [-2, 2) in steps of 1/8, exact in float32."""
    return (torch.randint(-16, 16, shape).to(torch.float32) / 8.0)


def flat(t):
    return [float(v) for v in t.detach().reshape(-1).tolist()]


def enc(t):
    return None if t is None else {"shape": list(t.shape), "data": flat(t)}


def run(op, x_shape, w_shape, bias, **o):
    x = grid(x_shape).requires_grad_()
    w = grid(w_shape).requires_grad_()
    b = None
    if bias:
        out_ch = w_shape[0] if op == "conv3d" else w_shape[1] * o.get("groups", 1)
        b = grid([out_ch]).requires_grad_()
    if op == "conv3d":
        pad_begin = o.get("padding", [0, 0, 0])
        pad_end = o.get("padding_end", pad_begin)
        # F.pad takes (w_begin, w_end, h_begin, h_end, d_begin, d_end).
        xp = F.pad(x, (pad_begin[2], pad_end[2], pad_begin[1], pad_end[1], pad_begin[0],
                       pad_end[0]))
        y = F.conv3d(xp, w, b, stride=o.get("stride", 1), dilation=o.get("dilation", 1),
                     groups=o.get("groups", 1))
    elif op == "conv_transpose3d":
        y = F.conv_transpose3d(x, w, b, stride=o.get("stride", 1), padding=o.get("padding", 0),
                               output_padding=o.get("padding_out", 0), groups=o.get("groups", 1),
                               dilation=o.get("dilation", 1))
    else:
        y = F.conv_transpose1d(x, w, b, stride=o.get("stride", 1), padding=o.get("padding", 0),
                               output_padding=o.get("padding_out", 0), groups=o.get("groups", 1),
                               dilation=o.get("dilation", 1))
    dy = grid(list(y.shape))
    y.backward(dy)
    return {
        "op": op, "options": o, "x": enc(x), "weight": enc(w), "bias": enc(b), "dy": enc(dy),
        "y": enc(y), "dx": enc(x.grad), "dw": enc(w.grad), "db": enc(None if b is None else b.grad),
    }


cases = {
    # conv3d
    "conv3d_basic": run("conv3d", [2, 2, 4, 5, 6], [3, 2, 2, 3, 2], True),
    "conv3d_stride_padding": run("conv3d", [1, 2, 5, 5, 4], [4, 2, 3, 3, 3], True,
                                 stride=[2, 1, 2], padding=[1, 1, 2]),
    "conv3d_groups_dilation": run("conv3d", [2, 4, 5, 6, 5], [6, 2, 2, 2, 2], False,
                                  groups=2, dilation=[2, 1, 2], padding=[1, 0, 1]),
    "conv3d_depthwise": run("conv3d", [1, 3, 4, 4, 4], [3, 1, 3, 3, 3], True, groups=3,
                            padding=[1, 1, 1], stride=[2, 2, 2]),
    # PyTorch's padding='same' with an even kernel: 1 before, 2 after in the depth.
    "conv3d_same_even_kernel": run("conv3d", [1, 2, 4, 3, 5], [2, 2, 4, 3, 2], True,
                                   padding=[1, 1, 0], padding_end=[2, 1, 1]),
    # Padding >= kernel and stride > kernel (the shared case conv_padding_ge_kernel_..., 3-D).
    "conv3d_padding_ge_kernel_stride_gt_kernel": run("conv3d", [1, 2, 4, 4, 3], [2, 2, 2, 2, 1],
                                                     True, padding=[3, 1, 2], stride=[3, 2, 4]),
    "conv3d_pointwise": run("conv3d", [2, 3, 2, 3, 4], [5, 3, 1, 1, 1], True),
    # conv_transpose3d
    "conv_transpose3d_basic": run("conv_transpose3d", [2, 2, 3, 4, 3], [2, 3, 2, 3, 2], True),
    "conv_transpose3d_stride_padding_out": run("conv_transpose3d", [1, 2, 3, 3, 2],
                                               [2, 3, 3, 3, 3], True, stride=[2, 2, 3],
                                               padding=[1, 1, 0], padding_out=[1, 0, 2]),
    "conv_transpose3d_groups_dilation": run("conv_transpose3d", [2, 4, 2, 3, 3], [4, 1, 2, 2, 3],
                                            False, groups=2, dilation=[2, 1, 2], stride=[1, 2, 1],
                                            padding=[1, 0, 1]),
    # conv_transpose1d
    "conv_transpose1d_basic": run("conv_transpose1d", [2, 3, 7], [3, 4, 3], True),
    "conv_transpose1d_stride_padding_out": run("conv_transpose1d", [2, 2, 5], [2, 3, 4], True,
                                               stride=3, padding=2, padding_out=2),
    "conv_transpose1d_groups_dilation": run("conv_transpose1d", [1, 4, 6], [4, 3, 3], True,
                                            groups=2, dilation=2, stride=2, padding=1,
                                            padding_out=1),
}

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "conv3d_fixtures.json"), "w") as f:
    json.dump({"generator": "tests/native/nn/make_conv3d_fixtures.py, torch " + torch.__version__,
               "cases": cases}, f, separators=(",", ":"))
    f.write("\n")
