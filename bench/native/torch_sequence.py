"""PyTorch side of the sequence-layer benchmark (issue 19), the same work as Kiln's
bench/native/bench_sequence.cpp and bench/wasm/sequence.mjs, run by bench/run_sequence.sh in
the same run:

  lstm:        torch.nn.LSTM(128, 128, batch_first=True) on x [32, 64, 128]
  transformer: torch.nn.TransformerEncoder(TransformerEncoderLayer(d_model=128, nhead=4,
               dim_feedforward=512, dropout=0, batch_first=True), num_layers=2) on
               x [32, 64, 128]

One step = forward, then backward of sum(output * dy) (gradients of the input and every
parameter), the parameter gradients zeroed first. Prints one line per (model, threads):

  torch model=lstm threads=1 step_ms=12.345 (median of N steps after 3 warm-ups)

Usage: /usr/bin/python3 bench/native/torch_sequence.py [--steps 20] [--threads 1,2]
"""
import argparse
import statistics
import time

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--threads", default="1,2")
args = parser.parse_args()

torch.manual_seed(0)
BATCH, SEQ, D = 32, 64, 128


def models():
    lstm = torch.nn.LSTM(D, D, batch_first=True)
    layer = torch.nn.TransformerEncoderLayer(D, 4, dim_feedforward=4 * D, dropout=0.0, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    return {"lstm": (lstm, lambda m, x: m(x)[0]), "transformer": (enc, lambda m, x: m(x))}


x0 = torch.rand(BATCH, SEQ, D) * 2 - 1
dy = torch.rand(BATCH, SEQ, D) * 2 - 1

for threads in [int(t) for t in args.threads.split(",")]:
    torch.set_num_threads(threads)
    for name, (model, run) in models().items():
        model.train()

        def step():
            model.zero_grad(set_to_none=True)
            x = x0.clone().requires_grad_(True)
            (run(model, x) * dy).sum().backward()

        for _ in range(3):
            step()
        times = []
        for _ in range(args.steps):
            t0 = time.perf_counter()
            step()
            times.append((time.perf_counter() - t0) * 1e3)
        print(f"torch model={name} threads={threads} step_ms={statistics.median(times):.3f}", flush=True)
