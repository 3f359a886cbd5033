#!/usr/bin/env bash
# `npm run bench`: builds what is out of date, then runs the benchmarks (by hand, not in CI;
# they take minutes and want a quiet machine):
#   1. bench/run_native.sh when it exists (Kiln's native SGEMM and numpy/OpenBLAS in one
#      run, then the element-wise benchmark); else every Google Benchmark program in
#      build/native/bench/,
#   2. node bench/wasm/bench_gemm.mjs (WebAssembly vs TensorFlow.js), which writes
#      bench/RESULTS-wasm.md,
#   3. node bench/browser/epoch.mjs --reps 3 --write (one MNIST epoch in headless Chromium,
#      Kiln vs TF.js WASM), which writes the Browser section of bench/RESULTS.md.
# Not run here: the WebGPU page (bench/webgpu/; `npm run bench:webgpu -- --quick [--write]` drives it
# headless, on SwiftShader without a GPU; `npx vite bench/webgpu` serves it for a browser with a GPU).
# Record the figures in bench/RESULTS.md. Extra arguments go to step 1 (run_native.sh takes
# the number of repetitions).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
bash scripts/build.sh

if [[ -f bench/run_native.sh ]]; then
  # The native benchmarks' own driver (Kiln and numpy in one run), when present.
  echo "[bench] bench/run_native.sh"
  bash bench/run_native.sh "$@"
else
  shopt -s nullglob
  for program in build/native/bench/*; do
    [[ -f "$program" && -x "$program" ]] || continue
    echo "[bench] $program"
    "$program" "$@"
  done
fi
echo "[bench] node bench/wasm/bench_gemm.mjs"
node bench/wasm/bench_gemm.mjs
echo "[bench] node bench/browser/epoch.mjs --reps 3 --write"
node bench/browser/epoch.mjs --reps 3 --write
