#!/usr/bin/env bash
# `npm start` (after setup and build): runs the native XOR example, the Burn tutorial's
# Step 10 training loop written with Kiln (examples/cpp/xor.cpp). Issue 7 makes it serve the
# playground.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

exec ./build/native/examples/xor
