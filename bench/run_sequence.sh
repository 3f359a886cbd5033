#!/usr/bin/env bash
# The sequence-layer benchmark (issue 19): one training step (forward + backward) of an LSTM
# (batch 32, seq 64, d_input = d_hidden = 128) and of a 2-layer transformer encoder
# (d_model 128, 4 heads, d_ff 512, seq 64, batch 32), Kiln native (bench_sequence, Google
# Benchmark, wall time), PyTorch (torch_sequence.py) and Kiln's WebAssembly build in Node
# (bench/wasm/sequence.mjs), alternated in each repetition so that a change of load hits all
# three; every row states its threads. Prints the medians and the ratios PyTorch / Kiln
# (> 1: Kiln faster).
#
#   bash bench/run_sequence.sh [repetitions=3]
#
# Needs a native Release build with Google Benchmark (built here if missing) and dist/ (npm
# run build).
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-3}"
build="${KILN_BUILD_DIR:-build/native}"
if [[ ! -x "$build/bench/bench_sequence" ]]; then
  cmake --build "$build" -j2 --target bench_sequence
fi
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
     "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for ((r = 1; r <= reps; r++)); do
  echo "repetition $r/$reps" >&2
  "$build/bench/bench_sequence" --benchmark_min_time=1 2>/dev/null | tee -a "$log" >&2
  /usr/bin/python3 bench/native/torch_sequence.py --steps 10 | tee -a "$log" >&2
  node bench/wasm/sequence.mjs --steps 5 | tee -a "$log" >&2
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$log" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"BM_(Lstm|Transformer)Step/threads:(\d+)(?:/process_time)?/real_time\s+([\d.]+) ms", line)
    if m:
        runs.setdefault((m[1].lower(), int(m[2]), "kiln"), []).append(float(m[3]))
    m = re.match(r"(torch|wasm) model=(\w+) threads=(\d+) step_ms=([\d.]+)", line)
    if m:
        runs.setdefault((m[2], int(m[3]), m[1]), []).append(float(m[4]))
med = statistics.median
print("\nms per training step (forward + backward), medians; ratio = PyTorch / Kiln (> 1: Kiln faster)\n")
print("| model | threads | Kiln native | PyTorch | ratio | Kiln WASM (Node) | PyTorch / WASM |")
print("|---|---:|---:|---:|---:|---:|---:|")
for model in ("lstm", "transformer"):
    for threads in (1, 2):
        k, t, w = (runs.get((model, threads, s)) for s in ("kiln", "torch", "wasm"))
        if not k or not t:
            continue
        row = f"| {model} | {threads} | {med(k):.1f} | {med(t):.1f} | {med(t) / med(k):.2f} |"
        row += f" {med(w):.1f} | {med(t) / med(w):.2f} |" if w else " — | — |"
        print(row)
PY
