#!/usr/bin/env bash
# Runs the tests of an up-to-date build (scripts/build.sh first; `npm test` does both):
# the native GoogleTest suite, the README examples and the examples through ctest, then
# the Vitest suite on the WebAssembly build in Node (tests/js), then the browser end-to-end
# scripts (tests/e2e, headless Chromium; each skips itself without /usr/bin/chromium): the
# threaded build's selection, and the playground (builds web/, serves it with vite preview on
# a free port; screenshots in test-output/playground/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Both suites run even if the first fails (a native failure used to skip Vitest
# silently); the exit status is non-zero if either failed.
status=0
echo "[test] ctest (build/native)"
ctest --test-dir build/native --output-on-failure -j"${KILN_JOBS:-2}" || status=1

echo "[test] vitest (tests/js, WebAssembly build in Node)"
npx --no-install vitest run || status=1

echo "[test] e2e threads (tests/e2e/threads.e2e.mjs: Vite build + preview, headless Chromium)"
node tests/e2e/threads.e2e.mjs || status=1
echo "[test] playground end-to-end (tests/e2e, headless Chromium)"
node tests/e2e/playground.e2e.mjs || status=1

if ((status)); then
  echo "[test] FAILED (see above)" >&2
fi
exit "$status"
