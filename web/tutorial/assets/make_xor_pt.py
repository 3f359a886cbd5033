#!/usr/bin/env python3
"""Writes xor.pt and xor.json, the PyTorch checkpoint of Step 13's "Weights from PyTorch"
section (web/tutorial/content/13-save-load.md) and what PyTorch computes with it.

Run with Debian's PyTorch 1.13:  /usr/bin/python3 web/tutorial/assets/make_xor_pt.py

xor.pt    torch.save(model.state_dict()) of XorNet, a module whose layers sit in a
          Sequential attribute `net`: keys net.0.weight [8, 2], net.0.bias [8],
          net.2.weight [1, 8], net.2.bias [1] (a Kiln Sequential names them 0.weight ...:
          the tutorial loads it with the remapping ^net\\. -> '').
xor.json  the four XOR inputs, their targets, and PyTorch's logits for them (float32,
          printed with 9 significant digits): the tutorial's expectation
          (tests/tutorial/expect/13-save-load.mjs) compares Kiln's logits with these.
The training is seeded, so a rerun writes the same values.
"""
import json
import os

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))


class XorNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x)


def main():
    torch.manual_seed(0)
    x = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = torch.tensor([[0.0], [1.0], [1.0], [0.0]])
    model = XorNet()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    loss_fn = nn.BCEWithLogitsLoss()
    for _ in range(300):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        logits = model(x)[:, 0]
    predictions = (logits > 0).int().tolist()
    assert predictions == [0, 1, 1, 0], predictions
    torch.save(model.state_dict(), os.path.join(HERE, "xor.pt"))
    out = {
        "generator": "web/tutorial/assets/make_xor_pt.py (PyTorch %s)" % torch.__version__,
        "keys": {k: list(v.shape) for k, v in model.state_dict().items()},
        "inputs": x.tolist(),
        "targets": [int(v) for v in y[:, 0].tolist()],
        "logits": [float("%.9g" % v) for v in logits.tolist()],
        "predictions": predictions,
        "final_loss": float("%.9g" % loss.item()),
    }
    with open(os.path.join(HERE, "xor.json"), "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
