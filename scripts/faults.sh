#!/usr/bin/env bash
# npm run test:faults: the fault suite (docs/reliability.md, "Fault suite") against a fleet of its own
# (port offset 7000, database agw_faults, stream prefix FAULTS; Postgres and NATS through its own proxies).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
prepare
check_stores
note_other_fleets
cd "$ROOT/test/faults"
say "fault suite: a fleet of its own at port offset ${FAULTS_PORT_OFFSET:-7000}"
exec pnpm exec jest --ci --runInBand "$@"
