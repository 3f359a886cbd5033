#!/usr/bin/env bash
# Builds what is out of date, natively (build/native: library, tests, examples, benchmarks)
# and with Emscripten (build/wasm -> dist/kiln.mjs + dist/kiln.wasm; build/wasm-mt, every
# object compiled with -pthread -> dist/kiln-mt.mjs + kiln-mt.wasm + kiln-mt.worker.js,
# the threaded build index.js loads in cross-origin isolated pages; build/wasm-relaxed ->
# dist/kiln-relaxed.wasm, the relaxed-SIMD (FMA) build index.js loads where the browser
# validates f32x4.relaxed_madd; build/wasm-mt-relaxed -> dist/kiln-mt-relaxed.wasm, the same
# for the threaded build), then compiles the
# package's JS layer (bindings/js/**/*.ts, TypeScript) into dist/ with tsc: ES2022 modules
# and their generated .d.ts, after scripts/gen_ops.mjs has written the declarations of the
# op-table methods (bindings/js/generated/ops.ts, from engine/include/kiln/backend/ops.def).
# A second run only asks make what changed: it does not reconfigure, and runs neither
# gen_ops nor tsc when no input of theirs is newer than their last run.
#
# ccache (when installed) caches compilations outside the clone (default ~/.cache/ccache,
# or $CCACHE_DIR), so a fresh clone on a machine that built Kiln before compiles quickly.
# Environment: KILN_JOBS (default 2: the machines have 2 cores shared by several people).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

JOBS=${KILN_JOBS:-2}
mkdir -p build
export NODE_PATH=/usr/share/nodejs  # emcc's JS optimizer needs Debian's acorn

have_ccache=false
if command -v ccache >/dev/null 2>&1; then
  have_ccache=true
  # Paths under the clone are hashed relative to it, so another clone hits the same cache.
  export CCACHE_BASEDIR="$PWD"
fi

# Runs `cmake --build` and prints only what was compiled or linked, warnings and errors
# (a no-op build prints nothing), then one summary line.
build() {
  local name=$1 dir=$2 start log status
  start=$(date +%s.%N)
  log="$dir/last-build.log"
  set +e
  cmake --build "$dir" -j"$JOBS" 2>&1 | tee "$log" |
    grep --line-buffered -Ev '^\[ *[0-9]+%\] Built target|^Consolidate compiler generated|^gmake|^make(\[[0-9]+\])?: |Scanning dependencies|^-- '
  status=${PIPESTATUS[0]}
  set -e
  local compiled linked
  compiled=$(grep -c 'Building CXX object' "$log" || true)
  linked=$(grep -c 'Linking CXX' "$log" || true)
  if ((status != 0)); then
    echo "[build] $name: FAILED (full log: $log)" >&2
    exit "$status"
  fi
  if ((compiled + linked == 0)); then
    echo "[build] $name: up to date ($(elapsed "$start"))"
  else
    echo "[build] $name: $compiled compiled, $linked linked ($(elapsed "$start"))"
  fi
}

elapsed() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f s", e - s }'; }

# ---- native ----
if [[ ! -f build/native/CMakeCache.txt ]]; then
  echo "[build] native: configure (build/native, Release)"
  launcher=()
  $have_ccache && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >build/native.configure.log 2>&1 ||
    { cat build/native.configure.log >&2; exit 1; }
fi
build native build/native

# ---- WebAssembly ----
# em++ runs clang through EM_COMPILER_WRAPPER, so ccache sees the real compiler and flags.
$have_ccache && export EM_COMPILER_WRAPPER=ccache
if [[ ! -f build/wasm/CMakeCache.txt ]]; then
  echo "[build] wasm: configure (build/wasm, Release, Emscripten)"
  emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=OFF \
    >build/wasm.configure.log 2>&1 || { cat build/wasm.configure.log >&2; exit 1; }
fi
build wasm build/wasm

if [[ ! -f build/wasm-mt/CMakeCache.txt ]]; then
  echo "[build] wasm-mt: configure (build/wasm-mt, Release, Emscripten, -pthread)"
  emcmake cmake -S . -B build/wasm-mt -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=OFF \
    -DKILN_WASM_THREADS=ON >build/wasm-mt.configure.log 2>&1 ||
    { cat build/wasm-mt.configure.log >&2; exit 1; }
fi
build wasm-mt build/wasm-mt

# The core engine profile (KILN_WASM_PROFILE=core -> dist/kiln-core.mjs + kiln-core.wasm):
# the engine init() loads by default (DESIGN.md "Engines").
if [[ ! -f build/wasm-core/CMakeCache.txt ]]; then
  echo "[build] wasm-core: configure (build/wasm-core, Release, Emscripten, core profile)"
  emcmake cmake -S . -B build/wasm-core -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=OFF \
    -DKILN_WASM_PROFILE=core >build/wasm-core.configure.log 2>&1 ||
    { cat build/wasm-core.configure.log >&2; exit 1; }
fi
build wasm-core build/wasm-core

# The webgpu engine (KILN_WASM_BACKEND=webgpu -> dist/kiln-webgpu.mjs + kiln-webgpu.wasm, issue
# 21): the core profile's tensor, autodiff, layer and record bindings over the Wgpu backend
# (engine/src/wgpu/, bindings/webgpu/kgpu.js), loaded by init({ backend: 'webgpu' }).
if [[ ! -f build/wasm-webgpu/CMakeCache.txt ]]; then
  echo "[build] wasm-webgpu: configure (build/wasm-webgpu, Release, Emscripten, core profile, webgpu backend)"
  emcmake cmake -S . -B build/wasm-webgpu -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=OFF \
    -DKILN_WASM_PROFILE=core -DKILN_WASM_BACKEND=webgpu >build/wasm-webgpu.configure.log 2>&1 ||
    { cat build/wasm-webgpu.configure.log >&2; exit 1; }
fi
build wasm-webgpu build/wasm-webgpu

# Relaxed SIMD (FMA): a build dir whose GEMM and convolution kernels use f32x4.relaxed_madd,
# rewritten by scripts/relax_wasm.mjs into dist/<name>-relaxed.wasm, which shares the glue
# dist/<name>.mjs of the SIMD128 build (built above: CMake checks the two are identical).
# Arguments: the build's name, its dir, extra cmake -D options (e.g. an engine profile).
relaxed_variant() {
  local name=$1 dir=$2
  shift 2
  if [[ ! -f $dir/CMakeCache.txt ]]; then
    echo "[build] $name: configure ($dir, Release, Emscripten, -DKILN_WASM_RELAXED=ON $*)"
    emcmake cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=OFF -DKILN_WASM_RELAXED=ON "$@" \
      >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log" >&2; exit 1; }
  fi
  build "$name" "$dir"
}
relaxed_variant wasm-relaxed build/wasm-relaxed
relaxed_variant wasm-core-relaxed build/wasm-core-relaxed -DKILN_WASM_PROFILE=core
# The threaded build's: only gemm.cpp and conv.cpp compile differently from build/wasm-mt's
# objects (ccache has the rest); its glue must equal dist/kiln-mt.mjs.
relaxed_variant wasm-mt-relaxed build/wasm-mt-relaxed -DKILN_WASM_THREADS=ON

# ---- the package's JS layer (TypeScript) ----
mkdir -p dist build/ts
copied=0
# Outputs of the JS layer before it was TypeScript (one tensor.js, hand-written .d.ts).
rm -f dist/tensor.js
ts_stamp=build/ts/stamp
# Which entry points and layer types each engine profile has, read from the built engines
# (scripts/gen_engines.mjs -> bindings/js/generated/engines.ts; written only when it changes).
engines_ts=bindings/js/generated/engines.ts
if [[ ! -f $engines_ts || dist/kiln.wasm -nt $engines_ts || dist/kiln-core.wasm -nt $engines_ts ||
  dist/kiln-core-inference.wasm -nt $engines_ts || dist/kiln-webgpu.wasm -nt $engines_ts ||
  scripts/gen_engines.mjs -nt $engines_ts ]]; then
  node scripts/gen_engines.mjs
  touch "$engines_ts"
fi
ops_def=engine/include/kiln/backend/ops.def
if [[ ! -f $ts_stamp || ! -f dist/index.js || ! -f dist/index.d.ts || ! -f bindings/js/generated/ops.ts ||
  -n $(find bindings/js scripts/gen_ops.mjs $ops_def -newer "$ts_stamp" \( -name '*.ts' -o -name '*.mts' \
    -o -name '*.json' -o -name '*.mjs' -o -name '*.def' \) -print -quit) ]]; then
  start=$(date +%s.%N)
  node scripts/gen_ops.mjs >/dev/null
  touch "$ts_stamp.new"
  node node_modules/typescript/bin/tsc -p bindings/js/tsconfig.json ||
    { echo "[build] dist: tsc FAILED (bindings/js/tsconfig.json)" >&2; rm -f "$ts_stamp.new"; exit 1; }
  # Shipped minified (scripts/minify_js.mjs: the module tree in place, same modules and exports,
  # source maps beside; the browser entries index.js and inference.js bundled into one file each).
  node scripts/minify_js.mjs || { echo "[build] dist: minify FAILED" >&2; rm -f "$ts_stamp.new"; exit 1; }
  mv "$ts_stamp.new" "$ts_stamp"
  echo "[build] dist: tsc bindings/js -> dist ($(elapsed "$start"))"
  copied=$((copied + 1))
fi
# The threaded build's worker script as a JS module (index.js starts the workers from a
# blob: URL of this text; see the comment there).
worker_js=dist/kiln-mt.worker.js worker_mod=dist/kiln-mt-worker-source.js
if [[ ! -f $worker_mod || $worker_js -nt $worker_mod ]]; then
  node -e '
    const fs = require("fs");
    const src = fs.readFileSync(process.argv[1], "utf8");
    fs.writeFileSync(process.argv[2], "// Generated by scripts/build.sh from kiln-mt.worker.js (Emscripten): the script\n" +
      "// of the pthread workers, started by index.js from a blob: URL.\nexport default " + JSON.stringify(src) + ";\n");
  ' "$worker_js" "$worker_mod.tmp"
  if cmp -s "$worker_mod.tmp" "$worker_mod"; then
    rm "$worker_mod.tmp"
    touch "$worker_mod"
  else
    mv "$worker_mod.tmp" "$worker_mod"
    echo "[build] dist: updated kiln-mt-worker-source.js"
    copied=$((copied + 1))
  fi
fi
if ((copied == 0)); then
  echo "[build] dist: up to date"
fi

# ---- lazy loading: split each single-thread engine into the module init() loads and
# <name>.deferred.wasm (scripts/split_wasm.mjs: binaryen's wasm-split, guided by the workload of
# scripts/split_profile.mjs run through dist/node.js; redone only when an input changed) ----
node scripts/split_wasm.mjs
# ... and the JS layer's core chunks into what the size pages run and <chunk>.deferred.txt
# (scripts/split_js.mjs: V8's coverage of the pages in headless Chromium; redone when the
# chunks or the engines changed)
node scripts/split_js.mjs
