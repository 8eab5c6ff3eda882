#!/usr/bin/env bash
# npm start: install what is missing, build, migrate, start every service, print how to use it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
prepare
check_stores
cd "$ROOT"
exec node scripts/fleet.mjs "$@"
