#!/usr/bin/python3
"""PyTorch side of tests/native/record/torch_interop_resample_test.cpp.

Usage: torch_interop_resample.py WORK_DIR

Exit status: 0 when every check passes, 1 with a message on the first mismatch, 77 when
torch cannot be imported (the test is then skipped). SafeTensors is read and written with
torch_interop.py's helpers (json + struct only).

Kiln -> PyTorch:
  kiln_upsample.safetensors + kiln_upsample.json   Kiln's nn::Sequential from a JSON spec
      (reshape, conv2d, upsample bilinear x2, conv2d, upsample nearest to [5, 7], flatten,
      linear): loads into model() with load_state_dict(strict=True) (the Upsample layers
      hold no state, so the keys are the convolutions' and the linear's under their
      indices) and gives the same logits.
  kiln_pool3d.safetensors + kiln_pool3d.json   reshape to [1, 4, 6, 6], max_pool3d (stride
      1, padding 1, ceil mode), avg_pool3d (padding 1, count_include_pad false),
      adaptive_avg_pool3d [2, 2, 2], flatten, linear: loads into pool3d_model() (key
      "5.weight", "5.bias") and gives the same logits.
PyTorch -> Kiln:
  torch_upsample.safetensors + torch_upsample.json   model() seeded, inputs and logits.
  torch_pool3d.safetensors + torch_pool3d.json       pool3d_model() likewise.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_interop import check_close, fail, read_safetensors, safetensors_bytes  # noqa: E402

import torch  # noqa: E402  (torch_interop exits with 77 when it cannot be imported)


def model():
    return torch.nn.Sequential(
        torch.nn.Unflatten(1, (1, 4, 3)),
        torch.nn.Conv2d(1, 2, 3, padding="same"),
        torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
        torch.nn.Conv2d(2, 3, 3),
        torch.nn.Upsample(size=(5, 7), mode="nearest"),
        torch.nn.Flatten(),
        torch.nn.Linear(105, 2))


def pool3d_model():
    return torch.nn.Sequential(
        torch.nn.Unflatten(1, (1, 4, 6, 6)),
        torch.nn.MaxPool3d(2, stride=1, padding=1, ceil_mode=True),
        torch.nn.AvgPool3d(2, padding=1, count_include_pad=False),
        torch.nn.AdaptiveAvgPool3d((2, 2, 2)),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 3))


def both_ways(work, name, make, n_inputs):
    with open(os.path.join(work, "kiln_%s.json" % name)) as f:
        expected = json.load(f)
    m = make()
    m.load_state_dict(read_safetensors(os.path.join(work, "kiln_%s.safetensors" % name)),
                      strict=True)
    with torch.no_grad():
        check_close("Kiln %s model in torch: logits" % name, m(torch.tensor(expected["inputs"])),
                    torch.tensor(expected["logits"]), tol=1e-4)
    torch.manual_seed(3)
    m = make()
    inputs = torch.randn(4, n_inputs)
    with torch.no_grad():
        logits = m(inputs)
    with open(os.path.join(work, "torch_%s.safetensors" % name), "wb") as f:
        f.write(safetensors_bytes(m.state_dict()))
    with open(os.path.join(work, "torch_%s.json" % name), "w") as f:
        json.dump({"inputs": inputs.tolist(), "logits": logits.tolist()}, f)
    print("ok  wrote torch_%s" % name)


def main():
    if len(sys.argv) != 2:
        fail("usage: torch_interop_resample.py WORK_DIR")
    both_ways(sys.argv[1], "upsample", model, 12)
    both_ways(sys.argv[1], "pool3d", pool3d_model, 144)

if __name__ == "__main__":
    main()
