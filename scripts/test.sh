#!/usr/bin/env bash
# npm test: install/build as needed, then unit + integration tests of every package against the real
# stores, then the type-check of every package's sources and tests, then test/e2e against a fleet it
# starts itself (other ports, database and stream prefix), then the console's browser tests (test/browser:
# Debian chromium, a fleet of their own at BROWSER_PORT_OFFSET, 10100).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
prepare
check_stores
note_other_fleets
cd "$ROOT"
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/agw_test}"
export AGW_STREAM_PREFIX="${TEST_STREAM_PREFIX:-TEST}"
export LOG_LEVEL="${LOG_LEVEL:-silent}"
logs="${AGW_TEST_LOGS:-/tmp}"   # where the two test logs go (a second checkout sets its own)
mkdir -p "$logs"
say "migrating the test database"
node packages/shared/dist/db/migrate-cli.js
say "unit and integration tests"
set +e
pnpm exec turbo run test --filter=!@agw/e2e --filter=!@agw/browser-tests --continue --concurrency=1 --output-logs=full -- --ci 2>&1 | tee "$logs/agw-unit.log" | grep -E '^\S+:test: (Tests:|Test Suites:|FAIL|PASS)|ERR!|failed'
status=${PIPESTATUS[0]}
# jest runs every package's tests through swc, which strips types unchecked, and the builds' tsconfig.json
# leave the tests out: each package's `typecheck` runs tsc --noEmit over its sources and tests together
# (tsconfig.test.json; test/faults and test/browser: their tsconfig.json). test/e2e is checked after its run.
say "type-checking every package's sources and tests (turbo run typecheck)"
pnpm exec turbo run typecheck --continue --output-logs=errors-only >"$logs/agw-typecheck.log" 2>&1
typecheck_status=$?
grep -E 'error TS|^Failed:' "$logs/agw-typecheck.log" | head -40
if [ "$typecheck_status" -ne 0 ]; then status=1; echo "FAIL type-check (turbo run typecheck; the whole output: $logs/agw-typecheck.log)" | tee -a "$logs/agw-unit.log"; fi
set -e
unit_summary="$(node scripts/jest-summary.mjs "$logs/agw-unit.log")"
say "end-to-end tests (a fleet of its own)"
set +e
(cd test/e2e && pnpm exec jest --ci --runInBand 2>&1) | tee "$logs/agw-e2e.log" | grep -Ev '^\s+at |^$' | tail -60
e2e_status=${PIPESTATUS[0]}
# jest runs the tests through swc, which strips types unchecked: the types are checked here (5 s)
say "type-checking the end-to-end tests"
if ! (cd test/e2e && pnpm exec tsc --noEmit -p . 2>&1 | tee -a "$logs/agw-e2e.log" | head -20; exit "${PIPESTATUS[0]}"); then e2e_status=1; echo "FAIL type-check of test/e2e" >>"$logs/agw-e2e.log"; fi
set -e
say "traces end to end (a fleet of its own with tracing on, after the e2e fleet stopped)"
if ! (cd test/e2e && pnpm exec jest --ci --runInBand -c jest.traces.config.js >"$logs/agw-traces.log" 2>&1); then e2e_status=1; fi
grep -E '^(PASS|FAIL)|Tests:|●' "$logs/agw-traces.log" | head -20 || true
cat "$logs/agw-traces.log" >>"$logs/agw-e2e.log"
e2e_summary="$(node scripts/jest-summary.mjs "$logs/agw-e2e.log")"
say "browser tests of the console (chromium, a fleet of their own)"
set +e
(cd test/browser && BROWSER_PORT_OFFSET="${BROWSER_PORT_OFFSET:-10100}" pnpm exec jest --ci --runInBand 2>&1) | tee "$logs/agw-browser.log" | grep -Ev '^\s+at |^$' | tail -30
browser_status=${PIPESTATUS[0]}
set -e
browser_summary="$(node scripts/jest-summary.mjs "$logs/agw-browser.log")"
node scripts/jest-summary.mjs --total "$logs/agw-unit.log" "$logs/agw-e2e.log" "$logs/agw-browser.log"
if [ "$status" -ne 0 ] || [ "$e2e_status" -ne 0 ] || [ "$browser_status" -ne 0 ]; then
  grep -E 'FAIL|●' "$logs/agw-unit.log" | head -40 || true
  die "tests failed (unit/integration: $unit_summary; e2e: $e2e_summary; browser: $browser_summary)"
fi
