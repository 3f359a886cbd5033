#!/usr/bin/env bash
# Runs the tests of an up-to-date build (scripts/build.sh first; `npm test` does both):
# the native GoogleTest suite, the README examples and the examples through ctest, then
# the Vitest suite on the WebAssembly build in Node (tests/js), then the browser end-to-end
# scripts (tests/e2e, headless Chromium; each skips itself without /usr/bin/chromium): the
# threaded build's selection, and the playground (builds web/, serves it with vite preview on
# a free port; screenshots in test-output/playground/) and the tutorial (every cell of
# web/tutorial/content run in the page; screenshots and summary.json with the Run-all time
# and the MNIST accuracy in test-output/tutorial/), and the size test (tests/e2e/size.e2e.mjs:
# what a training and an inference page fetch, gzip -9; test-output/size.json); last, a short run of each reader's
# libFuzzer target (scripts/fuzz.sh: SafeTensors, IDX, configs, PyTorch checkpoints; KILN_FUZZ_SECONDS each,
# default 10; 0 skips them), built in build/fuzz with clang++-14, ASan and UBSan.
# Each step's wall time is printed after it and in a table at the end (CI must stay well
# under 30 minutes: the table says where the time goes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Both suites run even if the first fails (a native failure used to skip Vitest
# silently); the exit status is non-zero if either failed.
status=0
timings=()
# run NAME COMMAND...: runs one step, records its wall time and its result (a failure marks
# the run failed and the next steps still run).
run() {
  local name=$1 start rc=0
  shift
  start=$(date +%s)
  "$@" || rc=$?
  local secs=$(($(date +%s) - start))
  timings+=("$(printf '%5d s  %-4s %s' "$secs" "$( ((rc == 0)) && echo ok || echo FAIL)" "$name")")
  echo "[test] $name: $( ((rc == 0)) && echo ok || echo FAILED) in $secs s"
  ((rc == 0)) || status=1
}

echo "[test] ctest (build/native)"
run ctest ctest --test-dir build/native --output-on-failure -j"${KILN_JOBS:-2}"

echo "[test] vitest (tests/js, WebAssembly build in Node)"
run vitest npx --no-install vitest run

echo "[test] e2e threads (tests/e2e/threads.e2e.mjs: Vite build + preview, headless Chromium)"
run "tests/e2e/threads.e2e.mjs" node tests/e2e/threads.e2e.mjs
echo "[test] e2e relaxed SIMD (tests/e2e/relaxed.e2e.mjs: kiln-relaxed.wasm chosen in headless Chromium, same results as SIMD128)"
run "tests/e2e/relaxed.e2e.mjs" node tests/e2e/relaxed.e2e.mjs
echo "[test] e2e deferred module (tests/e2e/deferred.e2e.mjs: the split engine's deferred half loads on first use, once, in a page and a worker)"
run "tests/e2e/deferred.e2e.mjs" node tests/e2e/deferred.e2e.mjs
echo "[test] e2e webgpu (tests/e2e/webgpu.e2e.mjs: the Wgpu backend's ops against the Cpu backend's, and the shared PyTorch reference cases on both, in headless Chromium, SwiftShader)"
run "tests/e2e/webgpu.e2e.mjs" node tests/e2e/webgpu.e2e.mjs
echo "[test] e2e webgpu API (tests/e2e/webgpu-api.e2e.mjs: init({ backend: 'webgpu' }) in headless Chromium, against a cpu instance)"
run "tests/e2e/webgpu-api.e2e.mjs" node tests/e2e/webgpu-api.e2e.mjs
echo "[test] e2e webgpu training (tests/e2e/webgpu-train.e2e.mjs: kiln.Learner on webgpu against cpu, the device-side guard, MNIST MLP and CNN)"
run "tests/e2e/webgpu-train.e2e.mjs" node tests/e2e/webgpu-train.e2e.mjs
echo "[test] e2e webgpu bench page (tests/e2e/webgpu-bench.e2e.mjs: bench/webgpu/ builds and computes a correct n = 64 SGEMM on each engine; no timing checked)"
run "tests/e2e/webgpu-bench.e2e.mjs" node tests/e2e/webgpu-bench.e2e.mjs
echo "[test] playground end-to-end (tests/e2e/playground*.e2e.mjs, headless Chromium; web/ built once)"
run "vite build web" node node_modules/vite/bin/vite.js build web --logLevel warn
for suite in tests/e2e/playground*.e2e.mjs; do
  echo "[test] $suite"
  run "$suite" node "$suite" --no-build
done
echo "[test] tutorial end-to-end (tests/e2e/tutorial.e2e.mjs, headless Chromium)"
run "tests/e2e/tutorial.e2e.mjs" node tests/e2e/tutorial.e2e.mjs
echo "[test] tutorial backend choice (tests/e2e/tutorial-webgpu.e2e.mjs: CPU / GPU in headless Chromium, SwiftShader)"
run "tests/e2e/tutorial-webgpu.e2e.mjs" node tests/e2e/tutorial-webgpu.e2e.mjs --no-build
echo "[test] size (tests/e2e/size.e2e.mjs: what a training and an inference page fetch, gzip -9, headless Chromium)"
run "tests/e2e/size.e2e.mjs" node tests/e2e/size.e2e.mjs

fuzz_seconds=${KILN_FUZZ_SECONDS:-10}
if ((fuzz_seconds > 0)); then
  echo "[test] fuzz smoke runs (scripts/fuzz.sh all $fuzz_seconds: libFuzzer + ASan + UBSan)"
  fuzz_status=0
  fuzz_start=$(date +%s)
  scripts/fuzz.sh all "$fuzz_seconds" || fuzz_status=$?
  timings+=("$(printf '%5d s  %-4s %s' "$(($(date +%s) - fuzz_start))" "$( ((fuzz_status == 0 || fuzz_status == 3)) && echo ok || echo FAIL)" "fuzz (scripts/fuzz.sh all $fuzz_seconds)")")
  if ((fuzz_status == 3)); then
    echo "[test] fuzz: skipped (no clang++-14 with libFuzzer: run scripts/setup.sh)" >&2
  elif ((fuzz_status != 0)); then
    status=1
  fi
fi

echo "[test] wall time per step:"
printf '[test] %s\n' "${timings[@]}"
if ((status)); then
  echo "[test] FAILED (see above)" >&2
fi
exit "$status"
