#!/usr/bin/env bash
# npm run soak: SOAK_MINUTES (default 10) of mixed traffic against a fleet of its own (port offset 7600,
# database agw_faults_7600), sampling every SOAK_SAMPLE_SECONDS (default 30); fails on sustained growth
# (docs/reliability.md "Soak"). CI runs a short one: SOAK_MINUTES=5 SOAK_WARMUP_MINUTES=2.5 SOAK_SAMPLE_SECONDS=10.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
prepare
check_stores
note_other_fleets
cd "$ROOT/test/faults"
export FAULTS_PORT_OFFSET="${SOAK_PORT_OFFSET:-7600}"
say "soak: ${SOAK_MINUTES:-10} min, a fleet of its own at port offset $FAULTS_PORT_OFFSET"
exec pnpm exec jest --ci --runInBand -c jest.soak.config.js "$@"
