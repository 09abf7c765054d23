#!/usr/bin/env bash
# Runs the benchmarks: installs PostgreSQL, Cassandra and the wiki if missing, creates a throwaway
# database, builds, and prints side-by-side ratios. Pass --quick for a short run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

if [ -z "${WIKISTORE_BENCH_PG_URL:-}" ]; then
  ensure_postgres
  role=wikistore_test
  db="wikistore_bench_$$"
  psql_admin "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$role') THEN CREATE ROLE $role LOGIN PASSWORD '$role'; END IF; END \$\$;"
  psql_admin "CREATE DATABASE $db OWNER $role"
  trap 'psql_admin "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true' EXIT  # the wiki stays up for the next run
  export WIKISTORE_BENCH_PG_URL="postgres://$role:$role@127.0.0.1:5432/$db"
fi
if [ -z "${WIKISTORE_BENCH_MARIADB_URL:-}" ]; then
  ensure_mariadb
  mdb="wikistore_bench_$$"
  mariadb_admin "CREATE USER IF NOT EXISTS 'wikistore_test'@'127.0.0.1' IDENTIFIED BY 'wikistore_test'; CREATE DATABASE $mdb; GRANT ALL ON $mdb.* TO 'wikistore_test'@'127.0.0.1'"
  trap 'psql_admin "DROP DATABASE IF EXISTS ${db:-none} WITH (FORCE)" || true; mariadb_admin "DROP DATABASE IF EXISTS $mdb" || true' EXIT
  export WIKISTORE_BENCH_MARIADB_URL="mysql://wikistore_test:wikistore_test@127.0.0.1:3306/$mdb"
fi
if [ -z "${WIKISTORE_BENCH_CASSANDRA:-}" ]; then
  bash scripts/cassandra.sh start 1  # stays up for the next run, like the wiki
  export WIKISTORE_BENCH_CASSANDRA=127.0.0.1
fi
if [ -z "${WIKISTORE_BENCH_WIKI_URL:-}" ]; then
  WIKISTORE_BENCH_WIKI_URL=$(bash scripts/wiki.sh start)
  export WIKISTORE_BENCH_WIKI_URL
fi
[ -d node_modules ] || npm ci --no-audit --no-fund >&2
npx tsc -p .
node dist/bench/run.js "$@"
