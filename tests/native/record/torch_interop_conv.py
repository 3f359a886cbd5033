#!/usr/bin/python3
"""PyTorch side of tests/native/record/torch_interop_conv_test.cpp (issue 19's 3-D and 1-D
transposed convolutions).

Usage: torch_interop_conv.py WORK_DIR

Exit status: 0 when every check passes, 1 with a message on the first mismatch, 77 when
torch cannot be imported (the test is then skipped). SafeTensors is read and written with
torch_interop.py's json + struct helpers.

Two models, the same in Kiln (a Sequential spec) and here:
  conv3d:  Sequential(Unflatten(1, (2, 3, 4, 5)), Conv3d(2, 4, (3, 2, 3), padding='same'),
           ReLU(), ConvTranspose3d(4, 2, 2, stride=2, output_padding=1, groups=2), Flatten())
  convt1d: Sequential(Unflatten(1, (2, 6)), ConvTranspose1d(2, 3, 3, stride=2, padding=1,
           output_padding=1, dilation=2), Flatten())
Kiln -> PyTorch: kiln_<name>.safetensors loads with load_state_dict(strict=True) and gives
  kiln_<name>.json's "outputs" for its "inputs" (to 1e-5).
PyTorch -> Kiln: torch_<name>.safetensors + torch_<name>.json (seeded weights, inputs,
  outputs), which Kiln loads and must reproduce.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_interop import check_close, fail, read_safetensors, safetensors_bytes  # noqa: E402

import torch  # noqa: E402  (torch_interop exits 77 when it is missing)


def models():
    nn = torch.nn
    return {
        "conv3d": (nn.Sequential(nn.Unflatten(1, (2, 3, 4, 5)),
                                 nn.Conv3d(2, 4, (3, 2, 3), padding="same"), nn.ReLU(),
                                 nn.ConvTranspose3d(4, 2, 2, stride=2, output_padding=1,
                                                    groups=2),
                                 nn.Flatten()), 120),
        "convt1d": (nn.Sequential(nn.Unflatten(1, (2, 6)),
                                  nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1,
                                                     output_padding=1, dilation=2),
                                  nn.Flatten()), 12),
    }


def main():
    if len(sys.argv) != 2:
        fail("usage: torch_interop_conv.py WORK_DIR")
    work = sys.argv[1]
    torch.manual_seed(19)
    for name, (model, features) in models().items():
        # Kiln -> PyTorch
        state = read_safetensors(os.path.join(work, "kiln_%s.safetensors" % name))
        model.load_state_dict(state, strict=True)
        with open(os.path.join(work, "kiln_%s.json" % name)) as f:
            expected = json.load(f)
        with torch.no_grad():
            got = model(torch.tensor(expected["inputs"]))
        check_close("Kiln %s in torch" % name, got, torch.tensor(expected["outputs"]))
        # PyTorch -> Kiln: fresh seeded weights
        fresh, _ = models()[name]
        inputs = torch.randn(3, features)
        with torch.no_grad():
            outputs = fresh(inputs)
        with open(os.path.join(work, "torch_%s.safetensors" % name), "wb") as f:
            f.write(safetensors_bytes(fresh.state_dict()))
        with open(os.path.join(work, "torch_%s.json" % name), "w") as f:
            json.dump({"inputs": inputs.tolist(), "outputs": outputs.tolist(),
                       "keys": sorted(fresh.state_dict().keys())}, f)
        print("ok  wrote torch_%s" % name)


if __name__ == "__main__":
    main()
