#!/usr/bin/python3
"""Reference trajectories of Adam, AdamW and RMSprop, computed with PyTorch (torch.optim).

The shared reference cases (tests/native/cases/cases.jsonl, category optim) cover SGD, AdamW's
decoupled decay and global norm clipping; this script adds 3-step trajectories of the
optimizers that have no case there. The C++ tests (tests/native/optim/trajectory_test.cpp) read
the output and do not need PyTorch.

Regenerate (Debian 12's PyTorch: apt-get install python3-torch, installed by scripts/setup.sh):

    /usr/bin/python3 tests/native/optim/make_trajectories.py > tests/native/optim/trajectories.json

Each trajectory optimizes two parameters, "weight" [2, 3] and "bias" [3], in float32 on the
CPU. At each of the 3 steps the gradients are set to given values (they do not depend on the
parameters, so the C++ test can reproduce them exactly with loss = sum(weight * g_w) +
sum(bias * g_b)), then optimizer.step() runs. "config" is the Kiln config JSON
(AdamConfig / AdamWConfig / RmsPropConfig, missing fields take Kiln's defaults) and "torch"
the equivalent PyTorch call; "expected" holds the parameters after each step.
"""
import json
import sys

import torch

torch.set_num_threads(1)

WEIGHT0 = [[0.5, -1.0, 2.0], [-0.25, 0.75, -1.5]]
BIAS0 = [0.1, -0.2, 0.3]

# Mixed signs and scales; step 1 is large and later steps small, so that AMSGrad's running
# maximum of v differs from v.
GRADS_WEIGHT = [
    [[2.0, -3.0, 0.5], [1.0, 4.0, -2.5]],
    [[0.1, 0.2, -0.3], [-0.05, 0.4, 0.25]],
    [[-0.2, 0.1, 0.05], [0.3, -0.1, 0.2]],
]
GRADS_BIAS = [
    [1.5, -0.5, 3.0],
    [0.2, 0.1, -0.1],
    [-0.1, 0.3, 0.05],
]

# (id, optimizer, Kiln config JSON, lr, torch constructor, its keyword arguments)
CASES = [
    ("adam_burn_defaults", "Adam", {}, 0.01,
     torch.optim.Adam, dict(betas=(0.9, 0.999), eps=1e-5)),
    ("adam_l2_weight_decay", "Adam",
     {"epsilon": 1e-8, "weight_decay": {"penalty": 0.1}}, 0.01,
     torch.optim.Adam, dict(betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1)),
    ("adam_amsgrad", "Adam",
     {"beta_1": 0.8, "beta_2": 0.9, "epsilon": 1e-8, "amsgrad": True}, 0.1,
     torch.optim.Adam, dict(betas=(0.8, 0.9), eps=1e-8, amsgrad=True)),
    ("adamw_burn_defaults", "AdamW", {}, 0.5,
     torch.optim.AdamW, dict(betas=(0.9, 0.999), eps=1e-5, weight_decay=1e-4)),
    ("adamw_amsgrad_weight_decay", "AdamW",
     {"beta_2": 0.9, "epsilon": 1e-8, "weight_decay": 0.5, "amsgrad": True}, 0.05,
     torch.optim.AdamW, dict(betas=(0.9, 0.9), eps=1e-8, weight_decay=0.5, amsgrad=True)),
    ("rmsprop_plain", "RmsProp", {"momentum": 0.0, "epsilon": 1e-8}, 0.01,
     torch.optim.RMSprop, dict(alpha=0.99, eps=1e-8, momentum=0.0)),
    ("rmsprop_burn_defaults", "RmsProp", {}, 0.01,
     torch.optim.RMSprop, dict(alpha=0.99, eps=1e-5, momentum=0.9)),
    ("rmsprop_centered_momentum", "RmsProp",
     {"alpha": 0.9, "momentum": 0.5, "epsilon": 1e-8, "centered": True}, 0.01,
     torch.optim.RMSprop, dict(alpha=0.9, eps=1e-8, momentum=0.5, centered=True)),
    ("rmsprop_centered_plain", "RmsProp",
     {"alpha": 0.9, "momentum": 0.0, "epsilon": 1e-8, "centered": True}, 0.01,
     torch.optim.RMSprop, dict(alpha=0.9, eps=1e-8, momentum=0.0, centered=True)),
    ("rmsprop_weight_decay", "RmsProp",
     {"alpha": 0.95, "momentum": 0.9, "epsilon": 1e-6, "weight_decay": {"penalty": 0.1}}, 0.01,
     torch.optim.RMSprop, dict(alpha=0.95, eps=1e-6, momentum=0.9, weight_decay=0.1)),
]


def flat(t):
    return [float(x) for x in t.detach().reshape(-1).tolist()]


def run(case_id, optimizer, config, lr, ctor, kwargs):
    weight = torch.tensor(WEIGHT0, dtype=torch.float32, requires_grad=True)
    bias = torch.tensor(BIAS0, dtype=torch.float32, requires_grad=True)
    opt = ctor([weight, bias], lr=lr, **kwargs)
    expected = {"weight": [], "bias": []}
    for g_w, g_b in zip(GRADS_WEIGHT, GRADS_BIAS):
        opt.zero_grad()
        weight.grad = torch.tensor(g_w, dtype=torch.float32)
        bias.grad = torch.tensor(g_b, dtype=torch.float32)
        opt.step()
        expected["weight"].append(flat(weight))
        expected["bias"].append(flat(bias))
    args = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return {
        "id": case_id,
        "optimizer": optimizer,
        "config": config,
        "lr": lr,
        "torch": f"torch.optim.{ctor.__name__}(params, lr={lr!r}, {args})",
        "params": {
            "weight": {"shape": [2, 3], "data": [x for row in WEIGHT0 for x in row]},
            "bias": {"shape": [3], "data": BIAS0},
        },
        "grads": {
            "weight": [[x for row in g for x in row] for g in GRADS_WEIGHT],
            "bias": GRADS_BIAS,
        },
        "expected": expected,
        "tolerance": {"abs": 1e-6, "rel": 1e-5},
    }


def main():
    # One trajectory per line: readable diffs when the file is regenerated.
    header = {"generator": "tests/native/optim/make_trajectories.py",
              "torch_version": torch.__version__}
    lines = [json.dumps(run(*case)) for case in CASES]
    sys.stdout.write(json.dumps(header)[:-1] + ', "trajectories": [\n')
    sys.stdout.write(",\n".join(lines))
    sys.stdout.write("\n]}\n")


if __name__ == "__main__":
    main()
