#!/usr/bin/python3
"""Writes tests/native/nn/resample_fixtures.json: PyTorch 1.13 (Debian's python3-torch, CPU,
float32) values and input gradients of max_pool3d, avg_pool3d, adaptive_avg_pool3d and
interpolate (nearest 3-D/4-D, bilinear with align_corners both ways), read by
tests/native/nn/pool3d_test.cpp, interpolate_test.cpp and the JS tests
tests/js/nn_pool3d.test.mjs, nn_interpolate.test.mjs.

Each case: the op's arguments (PyTorch's names), x, dy (the upstream gradient) and the
expected out and grad_x = d[sum(out * dy)]/dx. Inputs are multiples of 0.25 (pools: small
integers, so windows hold ties and the first-maximum rule is exercised).

    /usr/bin/python3 tests/native/nn/make_resample_fixtures.py
"""
import json
import os

import torch
import torch.nn.functional as F

torch.manual_seed(19)


def tensor(t):
    return {"shape": list(t.shape), "data": [float(v) for v in t.detach().reshape(-1).tolist()]}


def case(name, op, args, x, fn, fd_grad=False):
    x = x.clone().requires_grad_(True)
    out = fn(x)
    dy = torch.randint(-4, 5, out.shape).float() / 2
    extra = {}
    if fd_grad:
        # torch's backward disagrees with its forward here (see the case): the reference is
        # central differences of the forward, exact for a function linear in x.
        flat = x.detach().reshape(-1)
        gx = torch.zeros_like(flat)
        for j in range(flat.numel()):
            e = torch.zeros_like(flat)
            e[j] = 1.0
            plus = fn((flat + e).reshape(x.shape))
            minus = fn((flat - e).reshape(x.shape))
            gx[j] = ((plus - minus) * dy).sum() / 2
        gx = gx.reshape(x.shape)
        extra["grad_source"] = "central differences of torch's forward"
    else:
        (gx,) = torch.autograd.grad(out, x, dy)
    return dict({"name": name, "op": op, "args": args, "x": tensor(x), "dy": tensor(dy),
                 "out": tensor(out), "grad_x": tensor(gx)}, **extra)


def ints(shape, lo=-3, hi=4):
    return torch.randint(lo, hi, shape).float()


def quarters(shape):
    return torch.randint(-8, 9, shape).float() / 4


cases = []

# ---- 3-D pools
def max3d(name, shape, k, s, p, d, ceil):
    args = {"kernel_size": k, "stride": s, "padding": p, "dilation": d, "ceil_mode": ceil}
    cases.append(case(name, "max_pool3d", args, ints(shape),
                      lambda x: F.max_pool3d(x, k, s, p, d, ceil)))


def avg3d(name, shape, k, s, p, ceil, cip):
    args = {"kernel_size": k, "stride": s, "padding": p, "ceil_mode": ceil, "count_include_pad": cip}
    cases.append(case(name, "avg_pool3d", args, quarters(shape),
                      lambda x: F.avg_pool3d(x, k, s, p, ceil, cip)))


def adaptive3d(name, shape, o):
    cases.append(case(name, "adaptive_avg_pool3d", {"output_size": o}, quarters(shape),
                      lambda x: F.adaptive_avg_pool3d(x, o)))


max3d("max3d_kernel2", [1, 2, 4, 4, 4], [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False)
max3d("max3d_overlap_ties_pad_dilation_ceil", [2, 2, 5, 6, 7], [2, 3, 2], [1, 2, 2], [1, 1, 0],
      [1, 1, 2], True)
max3d("max3d_ceil_drops_window_in_padding", [1, 1, 5, 5, 5], [3, 3, 3], [2, 2, 2], [1, 1, 1],
      [1, 1, 1], True)
avg3d("avg3d_include_pad_ceil", [1, 2, 5, 6, 7], [3, 3, 3], [2, 2, 2], [1, 1, 1], True, True)
avg3d("avg3d_exclude_pad_ceil", [1, 2, 5, 6, 7], [3, 3, 3], [2, 2, 2], [1, 1, 1], True, False)
avg3d("avg3d_anisotropic", [2, 1, 4, 5, 6], [2, 3, 1], [1, 2, 1], [1, 0, 0], False, True)
adaptive3d("adaptive3d_non_divisible", [2, 2, 7, 5, 9], [3, 4, 2])
adaptive3d("adaptive3d_global", [1, 3, 3, 4, 5], [1, 1, 1])
adaptive3d("adaptive3d_upsampling", [1, 1, 2, 3, 2], [3, 4, 5])

# ---- interpolate
def interp(name, shape, fd_grad=False, **kw):
    args = {k: (list(v) if isinstance(v, tuple) else v) for k, v in kw.items()}
    args.setdefault("align_corners", False)
    cases.append(case(name, "interpolate", args, quarters(shape),
                      lambda x: F.interpolate(x, **kw), fd_grad))


interp("nearest_size", [2, 2, 3, 4], size=(5, 7), mode="nearest")
interp("nearest_scale_non_integer", [1, 2, 3, 4], scale_factor=(1.5, 2.25), mode="nearest")
# in 2, scale 1.25: out 2 = in, but the index is floor(dst / 1.25), not dst (no copy rule).
# Two channels: with one, PyTorch 1.13 takes its channels-last kernel (a [N, 1, H, W] tensor
# is contiguous in both formats), which copies when out = in and reads dst >> 1 when
# out = 2·in; Kiln follows the general kernel (kiln/tensor/interpolate.hpp). torch's
# backward (upsample_nearest2d_backward) keeps those copy rules, so its gradient is not the
# derivative of its forward here (torch.autograd.gradcheck fails): grad_x by differences.
interp("nearest_scale_out_equals_in", [1, 2, 2, 5], fd_grad=True, scale_factor=(1.25, 2.0),
       mode="nearest")
interp("nearest_downsample", [1, 1, 7, 5], size=(3, 2), mode="nearest")
interp("nearest_1d_size", [2, 3, 4], size=7, mode="nearest")
interp("nearest_1d_scale", [1, 2, 5], scale_factor=1.7, mode="nearest")
interp("bilinear_size", [2, 2, 3, 4], size=(5, 7), mode="bilinear", align_corners=False)
interp("bilinear_size_align_corners", [2, 2, 3, 4], size=(5, 7), mode="bilinear",
       align_corners=True)
interp("bilinear_scale2", [1, 2, 3, 3], scale_factor=2.0, mode="bilinear", align_corners=False)
interp("bilinear_scale_non_integer", [1, 1, 4, 5], scale_factor=(1.7, 0.6), mode="bilinear",
       align_corners=False)
interp("bilinear_scale_align_corners", [1, 1, 4, 5], scale_factor=(1.7, 2.5), mode="bilinear",
       align_corners=True)
interp("bilinear_downsample", [1, 2, 5, 7], size=(2, 3), mode="bilinear", align_corners=False)
interp("bilinear_height_kept", [1, 1, 3, 4], size=(3, 9), mode="bilinear", align_corners=False)
interp("bilinear_to_one_align_corners", [1, 1, 4, 5], size=(1, 3), mode="bilinear",
       align_corners=True)

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "resample_fixtures.json")
with open(out, "w") as f:
    f.write("{\"torch\": \"%s\", \"cases\": [\n" % torch.__version__)
    f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
    f.write("\n]}\n")
print(out, len(cases), "cases")
