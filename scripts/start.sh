#!/usr/bin/env bash
# `npm start` (after setup and build): runs the native tensor-basics example, the Burn
# tutorial's first exercises written with Kiln. Later issues make it serve the playground.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

exec ./build/native/examples/tensor_basics
