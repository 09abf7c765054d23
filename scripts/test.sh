#!/usr/bin/env bash
# Runs every test. On a fresh Debian machine as root it installs and starts what the tests need:
# PostgreSQL (a throwaway database for the suite), then the project's npm packages and build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

if [ -z "${WIKISTORE_TEST_PG_URL:-}" ]; then
  ensure_postgres
  role=wikistore_test
  db="wikistore_test_$$"
  psql_admin "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$role') THEN CREATE ROLE $role LOGIN PASSWORD '$role'; END IF; END \$\$;"
  psql_admin "CREATE DATABASE $db OWNER $role"
  trap 'psql_admin "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true' EXIT
  export WIKISTORE_TEST_PG_URL="postgres://$role:$role@127.0.0.1:5432/$db"
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm packages"
  npm ci --no-audit --no-fund >&2
fi
log "building (typecheck included)"
rm -rf dist  # no stale compiled tests
npx tsc -p .

node --test --test-reporter=spec "${@:-dist/test/}"
