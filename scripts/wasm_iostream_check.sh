#!/usr/bin/env bash
# Re-links a wasm build's engine with --profiling-funcs (function names kept; the code is
# the release code) into a temporary directory and prints what iostream, locale, regex and
# RTTI code is left in it (scripts/wasm_funcs.py), with the raw and gzip -9 sizes of the
# shipped file. Issue 17: the engine formats with str_cat/append_to and has no RTTI.
#
#   bash scripts/wasm_iostream_check.sh [build/wasm] [out.tsv]
# Needs the build dir built (cmake --build build/wasm). Writes nothing under the clone.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=${1:-build/wasm}
out_tsv=${2:-}
link=$dir/CMakeFiles/kiln_wasm.dir/link.txt
[[ -f $link ]] || { echo "no $link: build $dir first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shipped=$(grep -o -- '-o [^ ]*\.mjs' "$link" | cut -d' ' -f2)
# The same link line, names kept, output to the temporary directory.
cmd=$(sed -e "s# -o [^ ]*\.mjs# --profiling-funcs -o $tmp/kiln.mjs#" "$link")
(cd "$dir" && NODE_PATH=${NODE_PATH:-/usr/share/nodejs} eval "$cmd")
wasm=${shipped%.mjs}.wasm
printf 'shipped %s: %d bytes, %d gzip -9\n' "$wasm" "$(stat -c %s "$wasm")" "$(gzip -9c "$wasm" | wc -c)"
python3 scripts/wasm_funcs.py "$tmp/kiln.wasm" ${out_tsv:+"$out_tsv"}
