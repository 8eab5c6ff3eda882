#!/usr/bin/env bash
# npm run bench: build, then print the benchmarks' figures (nothing is asserted).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
prepare
check_stores
cd "$ROOT"
say "Rego engine: each policy template against a typical input"
node bench/rego-templates.bench.mjs
say "Whole fleet: POST /api/mcp/tools/call"
node bench/tool-call.bench.mjs "$@"
