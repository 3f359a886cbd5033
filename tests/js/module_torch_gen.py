#!/usr/bin/python3
"""Writes tests/js/module_torch_fixture.json: PyTorch 1.13's numbers for tests/js/module_*.test.mjs.

Run from the repository root after building dist/ (scripts/build.sh):

    /usr/bin/python3 tests/js/module_torch_gen.py

1. An MLP module (fc1 = Linear(3, 4), ReLU, fc2 = Linear(4, 2), then a parameter `scale`
   [2] multiplied in) with seeded initial values, trained 3 steps with SGD (lr 0.1,
   momentum 0.9) and 3 steps with Adam (lr 0.05) on an MSE loss: the losses and the
   parameters after each run; and 2 SGD steps with fc1.weight frozen.
2. The state_dict keys of a nested torch module (Sequential with BatchNorm, a submodule,
   a ModuleList, a bare Parameter) that the Kiln test mirrors.
3. The SafeTensors bytes a Kiln user module writes (tests/js/module_torch_gen_kiln.mjs,
   run with node) in float32 and bfloat16: each is read here with a plain reader of the
   format and loaded into the torch MLP with load_state_dict(strict=True); the values must
   equal the initial ones (bfloat16: torch's own rounding, .bfloat16().float()). The
   checked bytes go into the fixture (base64) and the test asserts Kiln still writes them.
"""
import base64
import copy
import json
import os
import struct
import subprocess
import sys

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, 'module_torch_fixture.json')


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)
        self.scale = nn.Parameter(torch.ones(2))

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))) * self.scale


def values(m):
    return {k: v.detach().reshape(-1).tolist() for k, v in m.state_dict().items()}


def shapes(m):
    return {k: list(v.shape) for k, v in m.state_dict().items()}


def train(m, opt, x, y, steps):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        losses.append(loss.item())
        loss.backward()
        opt.step()
    return losses


def read_safetensors(data):
    """A plain reader of the SafeTensors layout (8-byte length, JSON header, data)."""
    (n,) = struct.unpack('<Q', data[:8])
    header = json.loads(data[8:8 + n].decode('utf-8'))
    body = data[8 + n:]
    out = {}
    for key, info in header.items():
        if key == '__metadata__':
            continue
        b, e = info['data_offsets']
        raw = bytearray(body[b:e])
        shape = info['shape']
        if info['dtype'] == 'F32':
            t = torch.frombuffer(raw, dtype=torch.float32)
        elif info['dtype'] == 'BF16':
            t = torch.frombuffer(raw, dtype=torch.bfloat16).float()
        elif info['dtype'] == 'F16':
            t = torch.frombuffer(raw, dtype=torch.float16).float()
        elif info['dtype'] == 'I64':
            t = torch.frombuffer(raw, dtype=torch.int64)
        else:
            raise ValueError(f'unexpected dtype {info["dtype"]}')
        out[key] = t.reshape(shape).clone()
    return out


def main():
    torch.manual_seed(0)
    m0 = Mlp()
    with torch.no_grad():
        m0.scale.copy_(torch.tensor([1.5, -0.5]))
    x = torch.randn(5, 3)
    y = torch.randn(5, 2)
    fixture = {
        'torch': torch.__version__,
        'x': x.tolist(),
        'y': y.tolist(),
        'init': values(m0),
        'shapes': shapes(m0),
        'keys': list(m0.state_dict().keys()),
    }

    m = copy.deepcopy(m0)
    losses = train(m, torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9), x, y, 3)
    fixture['sgd'] = {'lr': 0.1, 'momentum': 0.9, 'losses': losses, 'after': values(m)}

    m = copy.deepcopy(m0)
    losses = train(m, torch.optim.Adam(m.parameters(), lr=0.05), x, y, 3)
    fixture['adam'] = {'lr': 0.05, 'losses': losses, 'after': values(m)}

    m = copy.deepcopy(m0)
    m.fc1.weight.requires_grad_(False)
    opt = torch.optim.SGD([p for p in m.parameters() if p.requires_grad], lr=0.1)
    losses = train(m, opt, x, y, 2)
    fixture['frozen'] = {'lr': 0.1, 'losses': losses, 'after': values(m)}

    # The keys of a nested module.
    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU())
            self.head = Mlp()
            self.layers = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 1)])
            self.bias = nn.Parameter(torch.zeros(1))

    outer = Outer()
    fixture['nestedKeys'] = list(outer.state_dict().keys())
    fixture['nestedShapes'] = shapes(outer)

    # Kiln's bytes of the MLP with the initial values, loaded into torch strictly.
    with open(OUT, 'w') as f:
        json.dump(fixture, f)
    env = dict(os.environ)
    result = subprocess.run(['node', os.path.join(HERE, 'module_torch_gen_kiln.mjs')],
                            cwd=os.path.dirname(os.path.dirname(HERE)), env=env,
                            capture_output=True, check=True)
    produced = json.loads(result.stdout)
    fixture['safetensors'] = {}
    for dtype, b64 in produced.items():
        data = base64.b64decode(b64)
        state = read_safetensors(data)
        target = Mlp()
        target.load_state_dict(state, strict=True)  # raises on a missing/unexpected key or shape
        for k, v in m0.state_dict().items():
            want = v if dtype == 'float32' else v.bfloat16().float() if dtype == 'bfloat16' else v.half().float()
            got = target.state_dict()[k]
            if not torch.equal(got, want):
                sys.exit(f'{dtype}: {k} differs after load_state_dict: {got} vs {want}')
        fixture['safetensors'][dtype] = {'base64': b64, 'torchLoadedStrict': True}
    with open(OUT, 'w') as f:
        json.dump(fixture, f, indent=1)
    print(f'wrote {OUT}')


if __name__ == '__main__':
    main()
