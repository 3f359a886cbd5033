#!/usr/bin/env bash
# `npm start` (after setup and build): builds the web site (web/: the playground and the tutorial, `vite build`
# against the package in dist/) and serves web/dist with the production server (scripts/serve.mjs:
# sirv with the build's precompressed .gz files, Content-Encoding: gzip, and the COOP/COEP headers)
# on a fixed local port. Open the printed URL in a browser. Environment: KILN_PORT (default 4173).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PORT=${KILN_PORT:-4173}
echo "[start] building the playground (vite build web)"
node node_modules/vite/bin/vite.js build web --logLevel warn
echo "[start] Kiln playground: http://127.0.0.1:${PORT}/  tutorial: http://127.0.0.1:${PORT}/tutorial/  (Ctrl+C stops the server)"
exec node scripts/serve.mjs web/dist --port "$PORT" --host 127.0.0.1
