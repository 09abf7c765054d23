#!/usr/bin/env bash
# Hostile-load soak: memory after 20,000 distinct hostile titles and availability while 5,000
# slow connections are held open. Starts the wiki if needed, builds, runs bench/soak.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
if [ -z "${WIKISTORE_BENCH_WIKI_URL:-}" ]; then
  WIKISTORE_BENCH_WIKI_URL=$(bash scripts/wiki.sh start)
  export WIKISTORE_BENCH_WIKI_URL
fi
[ -d node_modules ] || npm ci --no-audit --no-fund >&2
npx tsc -p .
# 5,000 held connections on each side need descriptors.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
node dist/bench/soak.js "$@"
