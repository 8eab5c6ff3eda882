#!/usr/bin/env bash
# `node` on the project's runtime (.node-version; fetched once when PATH has another major): what the npm
# scripts that run one file use (migrate, the benches), so they measure what `npm start` runs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ensure_node
exec node "$@"
