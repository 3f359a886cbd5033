#!/usr/bin/env bash
# `npm run bench`: builds what is out of date, then runs the benchmarks (by hand, not in CI;
# they take minutes and want a quiet machine):
#   1. every Google Benchmark program in build/native/bench/ (native SGEMM, element-wise),
#   2. every bench/native/*.py with Debian's /usr/bin/python3 (numpy/OpenBLAS reference),
#   3. node bench/wasm/bench_gemm.mjs (WebAssembly vs TensorFlow.js), which writes
#      bench/RESULTS-wasm.md.
# Record the figures in bench/RESULTS.md. Extra arguments go to the Google Benchmark programs
# (e.g. --benchmark_filter=Sgemm).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
bash scripts/build.sh

shopt -s nullglob
for program in build/native/bench/*; do
  [[ -f "$program" && -x "$program" ]] || continue
  echo "[bench] $program"
  "$program" "$@"
done
for script in bench/native/*.py; do
  echo "[bench] /usr/bin/python3 $script"
  /usr/bin/python3 "$script"
done
echo "[bench] node bench/wasm/bench_gemm.mjs"
node bench/wasm/bench_gemm.mjs
