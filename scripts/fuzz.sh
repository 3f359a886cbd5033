#!/usr/bin/env bash
# Builds the libFuzzer targets of the readers and runs them:
#   scripts/fuzz.sh <target|all> [seconds per target, default 300] [libFuzzer options...]
# Targets (tests/fuzz/fuzz_<target>.cpp): safetensors (read_safetensors + the writer's round
# trip), idx (MnistDataset::from_bytes), config (from_json_string of SequentialConfig and
# other configs). `npm test` runs each for KILN_FUZZ_SECONDS (default 10) through
# scripts/test.sh; run longer here, e.g. `scripts/fuzz.sh safetensors 3600`.
#
# Build: build/fuzz, clang++-14 with -fsanitize=fuzzer-no-link,address,undefined on every
# object (UBSan aborts on the first report), -O1 -g, ccache when installed. Only the
# library and the fuzzers are built (no tests, examples or benchmarks).
# Corpus: the seeds tests/fuzz/<target>/ (committed, read only) plus the inputs found so far
# in build/fuzz/corpus/<target>/ (kept between runs, not committed). A crash, leak, timeout
# or sanitizer report stops the run with status 1 and writes the input to
# build/fuzz/artifacts/<target>-crash-<sha1>; minimise it (the fuzzer binary with
# -minimize_crash=1), add it to tests/fuzz/<target>/ and a unit test, then fix the reader.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TARGETS=(safetensors idx config)
TARGETS+=(csv sqlite)  # CsvDataset::from_bytes (libcsv), SqliteDataset::from_bytes (libsqlite3)
TARGETS+=(named_mpk)  # kiln/record/named_mpk.hpp (read_named_mpk + the writer's round trip)
TARGETS+=(pytorch)  # kiln/record/pytorch.hpp (read_pytorch: the zip directory, the pickle interpreter, views)
target=${1:-}
seconds=${2:-300}
shift $(($# < 2 ? $# : 2))
if [[ -z $target || ( $target != all && ! " ${TARGETS[*]} " == *" $target "* ) ]]; then
  echo "usage: scripts/fuzz.sh <${TARGETS[*]// /|}|all> [seconds per target] [libFuzzer options]" >&2
  exit 2
fi
[[ $target == all ]] && selected=("${TARGETS[@]}") || selected=("$target")

CXX=${KILN_FUZZ_CXX:-clang++-14}
if ! command -v "$CXX" >/dev/null 2>&1; then
  echo "[fuzz] $CXX not found (Debian: clang-14 libclang-rt-14-dev, installed by scripts/setup.sh)" >&2
  exit 3
fi
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
  "$CXX" -x c++ -fsanitize=fuzzer,address,undefined -o /dev/null - >/dev/null 2>&1; then
  echo "[fuzz] $CXX cannot link libFuzzer (Debian: libclang-rt-14-dev, installed by scripts/setup.sh)" >&2
  exit 3
fi

JOBS=${KILN_JOBS:-2}
dir=build/fuzz
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$PWD"
  # These objects have debug info (-g), for which ccache hashes the working directory by
  # default: every clone (CI's included) would miss the cache and rebuild for ~4 min.
  export CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [[ ! -f $dir/CMakeCache.txt ]]; then
  echo "[fuzz] configure ($dir, $CXX, ASan + UBSan + libFuzzer)"
  mkdir -p "$dir"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CXX" "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
    -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_EXAMPLES=OFF -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_FUZZERS=ON \
    >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log" >&2; exit 1; }
fi
start=$(date +%s)
cmake --build "$dir" -j"$JOBS" --target "${selected[@]/#/fuzz_}" >"$dir/build.log" 2>&1 ||
  { tail -50 "$dir/build.log" >&2; echo "[fuzz] build FAILED (full log: $dir/build.log)" >&2; exit 1; }
echo "[fuzz] built ${selected[*]/#/fuzz_} ($(($(date +%s) - start)) s)"

status=0
mkdir -p "$dir/artifacts"
for t in "${selected[@]}"; do
  corpus=$dir/corpus/$t
  mkdir -p "$corpus"
  dict=()
  [[ -f tests/fuzz/$t.dict ]] && dict=(-dict="tests/fuzz/$t.dict")
  log=$dir/$t.log
  echo "[fuzz] $t: ${seconds} s (seeds tests/fuzz/$t/, corpus $corpus, log $log)"
  # UBSan: print the stack and abort so libFuzzer keeps the input. ASan: leaks are reports.
  if UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
    "$dir/fuzz/fuzz_$t" "$corpus" "tests/fuzz/$t" "${dict[@]}" -max_total_time="$seconds" \
    -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -artifact_prefix="$dir/artifacts/$t-" -print_final_stats=1 "$@" >"$log" 2>&1; then
    runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
    cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | grep -Eo '[0-9]+' || echo "?")
    echo "[fuzz] $t: ok ($runs inputs, coverage $cov edges, corpus $(ls "$corpus" | wc -l) files)"
  else
    status=1
    grep -E 'ERROR|SUMMARY|invariant broken|Test unit written|uncaught|==[0-9]+==' "$log" | head -20 >&2 || true
    echo "[fuzz] $t: FAILED (log $log, input in $dir/artifacts/)" >&2
  fi
done
exit "$status"
