#!/usr/bin/python3
"""Single-threaded SGEMM anchor: times numpy.matmul on float32 n x n matrices.

Run with Debian's Python (numpy 1.24 linked to OpenBLAS 0.3.21 through libblas.so.3):

    OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell  /usr/bin/python3 numpy_sgemm.py
    OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX /usr/bin/python3 numpy_sgemm.py

(bench/run_native.sh does both, interleaved with Kiln's bench_gemm). Prints one line per
size, "n=<n> gflops=<median GFLOP/s> arch=<kernel set OpenBLAS reports>", the median over
--repeats timed batches of calls, each batch lasting at least --min-time seconds. Time is
the process's CPU time, as Google Benchmark's rate counters use for Kiln: on a machine
shared with other jobs it does not count the time the process waits for a core.
Needs libopenblas0 (apt: libopenblas0-pthread) and, to report the kernel set,
python3-threadpoolctl; without OpenBLAS numpy falls back to the reference BLAS.
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS
import numpy as np  # noqa: E402


def blas_info():
    try:
        import threadpoolctl
    except ImportError:
        return "unknown", -1
    for lib in threadpoolctl.threadpool_info():
        if lib.get("user_api") == "blas":
            return (f"{lib.get('internal_api')}-{lib.get('version')}:{lib.get('architecture')}",
                    lib.get("num_threads", -1))
    return "none", -1


def time_matmul(n, repeats, min_time):
    rng = np.random.default_rng(n)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    c = np.empty((n, n), dtype=np.float32)
    np.matmul(a, b, out=c)  # warm up: page in, let OpenBLAS allocate its buffers
    calls = 1
    while True:  # calls per batch so that a batch lasts min_time
        t0 = time.process_time()
        for _ in range(calls):
            np.matmul(a, b, out=c)
        if time.process_time() - t0 >= min_time:
            break
        calls *= 2
    rates = []
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(calls):
            np.matmul(a, b, out=c)
        elapsed = time.process_time() - t0
        rates.append(2.0 * n ** 3 * calls / elapsed / 1e9)
    return statistics.median(rates)


# The MLP shapes of bench_gemm's BM_SgemmShapes: (m, k, n, transpose_a, transpose_b).
MLP_SHAPES = [(64, 784, 128, 0, 1), (64, 128, 64, 0, 1), (64, 64, 10, 0, 1),
              (64, 128, 784, 0, 0), (128, 64, 784, 1, 0), (64, 64, 128, 1, 0)]


def time_shape(m, k, n, ta, tb, repeats, min_time):
    """np.matmul of an m x k by a k x n operand, either given as the transpose of a stored
    array (W.T for x·Wᵀ), as in bench_gemm's BM_SgemmShapes."""
    rng = np.random.default_rng(m * k * n)
    a = rng.uniform(-1, 1, (k, m) if ta else (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, k) if tb else (k, n)).astype(np.float32)
    a_op, b_op = (a.T if ta else a), (b.T if tb else b)
    c = np.empty((m, n), dtype=np.float32)
    np.matmul(a_op, b_op, out=c)
    calls = 1
    while True:
        t0 = time.process_time()
        for _ in range(calls):
            np.matmul(a_op, b_op, out=c)
        if time.process_time() - t0 >= min_time:
            break
        calls *= 2
    rates = []
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(calls):
            np.matmul(a_op, b_op, out=c)
        rates.append(2.0 * m * n * k * calls / (time.process_time() - t0) / 1e9)
    return statistics.median(rates)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="128,256,512,1024")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--mlp", action="store_true",
                        help="time the MNIST-MLP shapes of BM_SgemmShapes instead")
    args = parser.parse_args()
    arch, threads = blas_info()
    if threads not in (1, -1):
        print(f"warning: BLAS uses {threads} threads", file=sys.stderr)
    if args.mlp:
        for m, k, n, ta, tb in MLP_SHAPES:
            rate = time_shape(m, k, n, ta, tb, args.repeats, args.min_time)
            print(f"m={m} k={k} n={n} ta={ta} tb={tb} gflops={rate:.2f} arch={arch}", flush=True)
        return
    for n in (int(s) for s in args.sizes.split(",")):
        print(f"n={n} gflops={time_matmul(n, args.repeats, args.min_time):.2f} arch={arch}",
              flush=True)


if __name__ == "__main__":
    main()
