#!/usr/bin/env bash
# The thread pool's stress test (helper-61's TSan review, 2026-12-03): every index once,
# pieces on the alignment, exceptions, nesting, resizes, a second calling thread, a watchdog.
# Builds it natively under ThreadSanitizer and at -O2, also with the Emscripten pthreads code
# path (-D__EMSCRIPTEN_PTHREADS__). Not part of npm test. Run: ./stress_tsan <seconds> <seed> <flags>
# (flags: f short calls, s resizes, c second calling thread, r second thread resizing, e wasm path).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${OUT:-/tmp/pool-stress}
mkdir -p "$out"
I="-I$root/engine/src -I$root/engine/include"
SRC="${POOL_SRC:-$root/engine/src/core/thread_pool.cpp}"
clang++-14 -std=c++20 -O1 -g -fsanitize=thread $I "$here/stress.cpp" "$SRC" -o "$out/stress_tsan" -lpthread
clang++-14 -std=c++20 -O2 -g $I "$here/stress.cpp" "$SRC" -o "$out/stress_o2" -lpthread
clang++-14 -std=c++20 -O1 -g -fsanitize=thread -D__EMSCRIPTEN_PTHREADS__ $I "$here/stress.cpp" "$SRC" -o "$out/stress_tsan_em" -lpthread
clang++-14 -std=c++20 -O2 -g -D__EMSCRIPTEN_PTHREADS__ $I "$here/stress.cpp" "$SRC" -o "$out/stress_o2_em" -lpthread
echo "built in $out"
