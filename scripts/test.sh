#!/usr/bin/env bash
# Runs every test. On a fresh Debian machine as root it installs and starts what the tests need:
# PostgreSQL and MariaDB (a throwaway database each for the suite), Apache Cassandra (scripts/cassandra.sh: one node
# for the suite, then a three-node cluster for the slow tier), Varnish, a real MediaWiki with
# Parsoid loaded with the corpus (scripts/wiki.sh); the project's npm packages and build beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

CLUSTER_ROOT="$PWD/.cassandra/cluster"

cleanup() {
  if [ -n "${build_pid:-}" ]; then kill "$build_pid" 2>/dev/null || true; fi
  if [ -n "${build_log:-}" ]; then rm -f "$build_log"; fi
  if [ -n "${cassandra_pid:-}" ]; then kill "$cassandra_pid" 2>/dev/null || true; fi
  if [ -n "${cassandra_log:-}" ]; then rm -f "$cassandra_log"; fi
  if [ -n "${started_wiki:-}" ]; then bash scripts/wiki.sh stop || true; fi
  if [ -n "${started_cluster:-}" ]; then CASSANDRA_ROOT="$CLUSTER_ROOT" bash scripts/cassandra.sh stop || true; fi
  if [ -n "${started_cassandra:-}" ]; then bash scripts/cassandra.sh stop || true; fi
  if [ -n "${db:-}" ]; then psql_admin "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true; fi
  if [ -n "${mdb:-}" ]; then mariadb_admin "DROP DATABASE IF EXISTS $mdb" || true; fi
}
trap cleanup EXIT

# The npm packages (a native module compiled on a fresh machine), the build and the import-graph
# check run in the background while the services are installed and started: each side waits on
# the network, the package manager or PHP much of the time.
build_log=$(mktemp)
(
  set -euo pipefail
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    log "installing npm packages"
    npm ci --no-audit --no-fund
  fi
  # The import graph is read from the sources, so its check runs beside the compiler.
  log "building (typecheck included) and checking the import graph (no cycles, imports down the layers: .dependency-cruiser.cjs)"
  npx depcruise src --config .dependency-cruiser.cjs --output-type err >"$build_log.deps" 2>&1 &
  deps=$!
  node scripts/prune-dist.mjs  # the incremental build is kept; no compiled test outlives its source
  built=0
  npx tsc -p . || built=$?
  checked=0
  wait "$deps" || checked=$?
  cat "$build_log.deps"
  rm -f "$build_log.deps"
  [ "$built" -eq 0 ] && [ "$checked" -eq 0 ]
) >"$build_log" 2>&1 &
build_pid=$!

if [ -z "${WIKISTORE_TEST_PG_URL:-}" ]; then
  ensure_postgres
  role=wikistore_test
  db="wikistore_test_$$"
  psql_admin "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$role') THEN CREATE ROLE $role LOGIN PASSWORD '$role'; END IF; END \$\$;"
  psql_admin "CREATE DATABASE $db OWNER $role"
  export WIKISTORE_TEST_PG_URL="postgres://$role:$role@127.0.0.1:5432/$db"
fi

if [ -z "${WIKISTORE_TEST_MARIADB_URL:-}" ]; then
  ensure_mariadb
  mdb="wikistore_test_$$"
  mariadb_admin "CREATE USER IF NOT EXISTS 'wikistore_test'@'127.0.0.1' IDENTIFIED BY 'wikistore_test'; CREATE USER IF NOT EXISTS 'wikistore_test'@'localhost' IDENTIFIED BY 'wikistore_test'; CREATE DATABASE $mdb; GRANT ALL ON $mdb.* TO 'wikistore_test'@'127.0.0.1'; GRANT ALL ON $mdb.* TO 'wikistore_test'@'localhost'"
  export WIKISTORE_TEST_MARIADB_URL="mysql://wikistore_test:wikistore_test@127.0.0.1:3306/$mdb"
fi

if [ -z "${WIKISTORE_TEST_CASSANDRA:-}" ]; then
  # A three-node cluster left running (a run stopped midway, or started by hand) would take the
  # suite's single node into its ring (same cluster name, same seed address): it goes first.
  CASSANDRA_ROOT="$CLUSTER_ROOT" bash scripts/cassandra.sh stop
  bash scripts/cassandra.sh status >/dev/null 2>&1 || started_cassandra=1
  # Its jars' download and the node's start (half a minute, mostly waiting on the network and the
  # JVM) go on beside the wiki's set-up, as the build does; waited for before the tests.
  cassandra_log=$(mktemp)
  bash scripts/cassandra.sh start 1 >"$cassandra_log" 2>&1 &
  cassandra_pid=$!
  export WIKISTORE_TEST_CASSANDRA=127.0.0.1
fi

# A real Varnish in front of the service, with the xkey module of varnish-modules for surrogate-key
# purges, where purging is tested (its service is not started:
# the test runs its own varnishd on loopback).
apt_install varnish varnish-modules

if [ -z "${WIKISTORE_TEST_WIKI_URL:-}" ]; then
  # The page API's tests run against a real MediaWiki with Parsoid; leave it as it was found.
  bash scripts/wiki.sh status >/dev/null 2>&1 || started_wiki=1
  WIKISTORE_TEST_WIKI_URL=$(bash scripts/wiki.sh start)
  export WIKISTORE_TEST_WIKI_URL
fi

# The build and the Cassandra node, started beside the services' setup, are waited for here.
if [ -n "${cassandra_pid:-}" ]; then
  if ! wait "$cassandra_pid"; then
    cassandra_pid=
    cat "$cassandra_log" >&2
    exit 1
  fi
  cassandra_pid=
  cat "$cassandra_log" >&2
fi
if ! wait "$build_pid"; then
  build_pid=
  cat "$build_log" >&2
  exit 1
fi
build_pid=
cat "$build_log" >&2

# The single Cassandra node outlives a run; its test keyspaces do not.
node scripts/drop-test-keyspaces.mjs "$WIKISTORE_TEST_CASSANDRA" wst
# Files run at once (each in its own process, on its own domains and pages): most of a file's time
# is spent waiting on the wiki, the databases or timers, not on this machine's two cores.
concurrency="${WIKISTORE_TEST_CONCURRENCY:-4}"
# A file may be named as its source (test/storage/mariadb.test.ts) or as built (dist/...js).
files=()
for arg in "$@"; do
  case "$arg" in
    dist/*) files+=("$arg") ;;
    *.ts) files+=("dist/${arg%.ts}.js") ;;
    *) files+=("dist/$arg") ;;
  esac
done
if [ ${#files[@]} -eq 0 ]; then
  # The longest files start first (as measured by the last line of a run, scripts/file-times.mjs),
  # so that none of them begins last and runs on alone.
  slow_first=(dist/test/integration/backfill.test.js dist/test/integration/fuzz.test.js dist/test/integration/page.test.js
    dist/test/integration/branches.test.js dist/test/integration/transactions.test.js dist/test/integration/read-your-writes.test.js
    dist/test/integration/follower.test.js dist/test/integration/snapshot.test.js dist/test/integration/scale-generator.test.js
    dist/test/integration/change-stream.test.js dist/test/integration/save-faults.test.js dist/test/integration/save.test.js
    dist/test/storage/cassandra.test.js)
  mapfile -t rest < <(find dist/test -name '*.test.js' -not -path 'dist/test/cluster/*' | sort | grep -vxF -f <(printf '%s\n' "${slow_first[@]}"))
  files=("${slow_first[@]}" "${rest[@]}")
fi
# In the order given (node --test would sort them by name); spec, then each file's times.
log "running ${#files[@]} test files, $concurrency at a time"
node scripts/run-tests.mjs --concurrency "$concurrency" "${files[@]}"

# The slow tier: a three-node Cassandra cluster on 127.0.0.1-3 (the single node makes way for it),
# replication factor 3, one node killed with kill -9. Only with the whole suite, not a chosen file.
if [ $# -eq 0 ] && [ -z "${WIKISTORE_SKIP_CLUSTER:-}" ]; then
  bash scripts/cassandra.sh stop
  # A node still answering on 127.0.0.1 is not this checkout's (another checkout's, started by
  # hand): the cluster's nodes would join its ring and the node-loss test could not kill it.
  if bash scripts/cassandra.sh status >/dev/null 2>&1; then
    log "a Cassandra node this checkout did not start answers on 127.0.0.1:9042; the three-node tier needs 127.0.0.1-3: stop it and run again"
    exit 1
  fi
  rm -rf "$CLUSTER_ROOT"
  started_cluster=1
  CASSANDRA_ROOT="$CLUSTER_ROOT" bash scripts/cassandra.sh start 3
  log "running the three-node tier"
  # One file at a time (the cluster is CPU-bound on two cores: suites run side by side only slow
  # each other), nodes killed last (node-loss.test.ts leaves two of three down).
  CASSANDRA_ROOT="$CLUSTER_ROOT" WIKISTORE_TEST_CASSANDRA_CLUSTER=127.0.0.1,127.0.0.2,127.0.0.3 \
    node scripts/run-tests.mjs --concurrency 1 \
    dist/test/cluster/cassandra-cluster.test.js dist/test/cluster/cluster-sweep.test.js dist/test/cluster/node-loss.test.js
  CASSANDRA_ROOT="$CLUSTER_ROOT" bash scripts/cassandra.sh stop
  started_cluster=
  # Leave the single node as it was found.
  if [ -z "${started_cassandra:-}" ]; then bash scripts/cassandra.sh start 1; fi
fi
