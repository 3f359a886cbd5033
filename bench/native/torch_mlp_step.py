#!/usr/bin/python3
"""PyTorch anchor of bench_autodiff: the MLP 784-128-64-10 (ReLU, batch 64, cross-entropy
on logits), forward only under no_grad and forward + backward, single thread, CPU.

    /usr/bin/python3 bench/native/torch_mlp_step.py [--repeats 5] [--min-time 0.5]

Needs Debian's python3-torch (1.13). Prints "<name> us=<median microseconds per step>",
timed like Google Benchmark's CPU time (process CPU time, so a shared machine's waits do not
count), median over --repeats batches each lasting at least --min-time seconds.
"""
import argparse
import statistics
import time

import torch


def timed(fn, repeats, min_time):
    for _ in range(20):
        fn()
    results = []
    for _ in range(repeats):
        n, start = 0, time.process_time()
        while True:
            fn()
            n += 1
            elapsed = time.process_time() - start
            if elapsed >= min_time:
                break
        results.append(elapsed / n * 1e6)
    return statistics.median(results)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 64), torch.nn.ReLU(),
        torch.nn.Linear(64, 10))
    x = torch.rand(64, 784)
    y = torch.randint(0, 10, (64,))
    loss_fn = torch.nn.CrossEntropyLoss()

    def forward():
        with torch.no_grad():
            return loss_fn(model(x), y).item()

    def forward_backward():
        model.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()

    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"forward_no_grad us={timed(forward, args.repeats, args.min_time):.1f}")
    print(f"forward_backward us={timed(forward_backward, args.repeats, args.min_time):.1f}")


if __name__ == "__main__":
    main()
