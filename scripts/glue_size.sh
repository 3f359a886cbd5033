#!/usr/bin/env bash
# Measures Emscripten glue flags (issue 17): relinks build/wasm's objects (the link line of
# build/wasm/CMakeFiles/kiln_wasm.dir/link.txt) with extra em++ flags into a scratch folder
# and prints kiln.mjs and kiln.wasm raw and gzip -9 beside those of dist/. Nothing in dist/
# or build/ changes. One link is ~5-10 minutes of one core (wasm-opt -O3).
#   bash scripts/glue_size.sh [em++ flags...]
#   bash scripts/glue_size.sh -sTEXTDECODER=2
# The single-thread links already run Closure Compiler (CMakeLists.txt: `--closure 1`, with
# node_modules/.bin/google-closure-compiler, a devDependency, as EM_CLOSURE_COMPILER).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
link=build/wasm/CMakeFiles/kiln_wasm.dir/link.txt
[[ -f $link ]] || { echo "glue_size: $link is missing: run scripts/build.sh first" >&2; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/kiln-glue-XXXXXX")
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
# The same line with `-o <dist>/kiln.mjs` pointed at the scratch folder and the flags added.
cmd=$(sed -e "s|-o [^ ]*/dist/kiln.mjs|-o $out/kiln.mjs|" "$link")
[[ $cmd == *"$out/kiln.mjs"* ]] || { echo "glue_size: unexpected link line in $link" >&2; exit 1; }
(cd build/wasm && eval "$cmd $(printf '%q ' "$@")") >"$out/link.log" 2>&1 ||
  { cat "$out/link.log" >&2; exit 1; }
size() { printf '%10s %10s' "$(stat -c %s "$1")" "$(gzip -9nc "$1" | wc -c)"; }
echo "flags: ${*:-(none)}    (bytes: raw, gzip -9)"
echo "  dist/kiln.mjs   $(size "$repo/dist/kiln.mjs")    new: $(size "$out/kiln.mjs")"
echo "  dist/kiln.wasm  $(size "$repo/dist/kiln.wasm")    new: $(size "$out/kiln.wasm")"
echo "  output in $out"
