#!/usr/bin/env bash
# WASM SGEMM: builds bench/wasm/sgemm_wasm.cpp with em++ against the WASM build's libkiln.a
# (build/wasm, built here if missing) and runs it in Node: correctness checks, then GFLOP/s
# for n = 128 .. 1024 (wall time, single thread, SIMD128).
set -euo pipefail
cd "$(dirname "$0")/../.."
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
build="${KILN_WASM_BUILD_DIR:-build/wasm}"
if [[ ! -f "$build/libkiln.a" ]]; then
  emcmake cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j2 --target kiln >/dev/null
out="$build/bench"
mkdir -p "$out"
em++ -std=c++20 -O3 -msimd128 -msse4.1 -fwasm-exceptions -Iengine/include -Iengine/src \
    bench/wasm/sgemm_wasm.cpp "$build/libkiln.a" -sSINGLE_FILE=1 -sALLOW_MEMORY_GROWTH=1 \
    -sENVIRONMENT=node -o "$out/sgemm_wasm.cjs"  # .cjs: package.json has "type": "module"
node "$out/sgemm_wasm.cjs"
