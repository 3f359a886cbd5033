#!/usr/bin/env python3
"""Writes the fixtures of the load-options tests (tests/native/record/load_options_test.cpp,
tests/js/io_load_options.test.mjs) with Debian's PyTorch (python3-torch, 1.13):

  load_fixtures/prefixed_mlp.safetensors  torch's state_dict of Wrapper(Mlp) in eval mode:
      keys "model.fc1.weight", "model.bn.running_mean", "model.bn.num_batches_tracked"
      (a scalar I64), ... as a training script that wraps its model saves them
  load_fixtures/burn_mlp.safetensors      the state of BurnMlp stored in Burn's conventions:
      LayerNorm's weight / bias as "norm.gamma" / "norm.beta", Linear weights as
      [d_input, d_output] (fc1 is square: 4 -> 4; fc2 is 4 -> 3)
  load_fixtures/expected.json             the input x [2, 4] and torch's outputs of both
      models on it, and each file's keys and shapes

Run from anywhere: /usr/bin/python3 tests/native/record/make_load_fixtures.py
The SafeTensors files are written here by hand (Debian has no python3-safetensors): the
8-byte little-endian header size, the JSON header (keys sorted, data contiguous in key
order, padded with spaces to a multiple of 8), then the little-endian data.
"""
import json
import os
import struct

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "load_fixtures")

DTYPES = {torch.float32: "F32", torch.int64: "I64"}


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for key in sorted(tensors):
        t = tensors[key].detach().contiguous()
        data = t.numpy().tobytes()  # little-endian on the machines Kiln targets
        header[key] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                       "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 5)
        self.bn = nn.BatchNorm1d(5)
        self.fc2 = nn.Linear(5, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Mlp()

    def forward(self, x):
        return self.model(x)


class BurnMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)
        self.fc2 = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.norm(self.fc1(x))))


def main():
    torch.manual_seed(20)
    os.makedirs(OUT, exist_ok=True)
    x = torch.randn(2, 4)

    wrapped = Wrapper()
    with torch.no_grad():
        bn = wrapped.model.bn
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
        bn.running_mean.uniform_(-0.3, 0.3)
        bn.running_var.uniform_(0.5, 2.0)
        bn.num_batches_tracked.fill_(7)
    wrapped.eval()
    prefixed = wrapped.state_dict()
    write_safetensors(os.path.join(OUT, "prefixed_mlp.safetensors"), prefixed)

    burn = BurnMlp()
    with torch.no_grad():
        burn.norm.weight.uniform_(0.5, 1.5)
        burn.norm.bias.uniform_(-0.5, 0.5)
    burn.eval()
    burn_state = {
        "fc1.weight": burn.fc1.weight.t(),  # Burn's Linear: [d_input, d_output]
        "fc1.bias": burn.fc1.bias,
        "norm.gamma": burn.norm.weight,
        "norm.beta": burn.norm.bias,
        "fc2.weight": burn.fc2.weight.t(),
        "fc2.bias": burn.fc2.bias,
    }
    write_safetensors(os.path.join(OUT, "burn_mlp.safetensors"), burn_state)

    with torch.no_grad():
        expected = {
            "x": x.tolist(),
            "prefixed_output": wrapped(x).tolist(),
            "burn_output": burn(x).tolist(),
            "prefixed_keys": {k: list(v.shape) for k, v in prefixed.items()},
            "burn_keys": {k: list(v.shape) for k, v in burn_state.items()},
        }
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
