"""PyTorch CPU timings of bench_conv.cpp's cases (same shapes, same meaning of forward and
backward), for the ratio in the same run: /usr/bin/python3 bench/native/torch_conv.py"""
import time

import torch
import torch.nn.functional as F

BATCH = 64


def bench(fn, repeat=200):
    for _ in range(20):
        fn()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best * 1e6


def layer(c_in, c_out, size, grad_x):
    torch.manual_seed(1)
    x = torch.rand(BATCH, c_in, size, size) * 2 - 1
    w = torch.rand(c_out, c_in, 3, 3) * 2 - 1
    b = torch.rand(c_out) * 2 - 1
    g = torch.rand(BATCH, c_out, size - 2, size - 2) * 2 - 1

    def fwd():
        with torch.no_grad():
            F.conv2d(x, w, b)

    mask = (grad_x, True, True)

    def bwd():
        torch.ops.aten.convolution_backward(g, x, w, [c_out], [1, 1], [0, 0], [1, 1], False,
                                            [0, 0], 1, mask)

    return fwd, bwd


for threads in (1, 2):
    torch.set_num_threads(threads)
    for name, args in (("Conv1", (1, 8, 28, False)), ("Conv2", (8, 16, 13, True))):
        fwd, bwd = layer(*args)
        print(f"torch {name}Forward/threads:{threads}  {bench(fwd):8.1f} us")
        print(f"torch {name}Backward/threads:{threads} {bench(bwd):8.1f} us")
