#!/usr/bin/env bash
# npm test: install/build as needed, then unit + integration tests of every package against the real
# stores, then test/e2e against a fleet it starts itself (other ports, database and stream prefix).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
prepare
check_stores
cd "$ROOT"
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/agw_test}"
export AGW_STREAM_PREFIX="${TEST_STREAM_PREFIX:-TEST}"
export LOG_LEVEL="${LOG_LEVEL:-silent}"
say "migrating the test database"
node packages/shared/dist/db/migrate-cli.js
say "unit and integration tests"
set +e
pnpm exec turbo run test --filter=!@agw/e2e --continue --concurrency=1 --output-logs=full -- --ci 2>&1 | tee /tmp/agw-unit.log | grep -E '^\S+:test: (Tests:|Test Suites:|FAIL|PASS)|ERR!|failed'
status=${PIPESTATUS[0]}
set -e
unit_summary="$(node scripts/jest-summary.mjs /tmp/agw-unit.log)"
say "end-to-end tests (a fleet of its own)"
set +e
(cd test/e2e && pnpm exec jest --ci --runInBand 2>&1) | tee /tmp/agw-e2e.log | grep -Ev '^\s+at |^$' | tail -60
e2e_status=${PIPESTATUS[0]}
set -e
e2e_summary="$(node scripts/jest-summary.mjs /tmp/agw-e2e.log)"
node scripts/jest-summary.mjs --total /tmp/agw-unit.log /tmp/agw-e2e.log
if [ "$status" -ne 0 ] || [ "$e2e_status" -ne 0 ]; then
  grep -E 'FAIL|●' /tmp/agw-unit.log | head -40 || true
  die "tests failed (unit/integration: $unit_summary; e2e: $e2e_summary)"
fi
