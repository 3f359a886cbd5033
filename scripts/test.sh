#!/usr/bin/env bash
# Runs the tests of an up-to-date build (scripts/build.sh first; `npm test` does both):
# the native GoogleTest suite, the README examples and the examples through ctest, then
# the Vitest suite on the WebAssembly build in Node (tests/js).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "[test] ctest (build/native)"
ctest --test-dir build/native --output-on-failure -j"${KILN_JOBS:-2}"

echo "[test] vitest (tests/js, WebAssembly build in Node)"
npx --no-install vitest run
