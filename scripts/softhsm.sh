#!/usr/bin/env bash
# Local HSM for the vault service: SoftHSM2 (Debian package softhsm2) with a project-owned token store
# under .run/softhsm/ and one token per label, initialised once with the configured PINs. Idempotent,
# and it shares its lock with services/vault/src/hsm/softhsm-token.ts (the vault does the same at start).
#
#   scripts/softhsm.sh [label...]        (default labels: $PKCS11_TOKEN_LABEL or agw-vault, and agw-test)
#
# Env: SOFTHSM2_CONF (default .run/softhsm/softhsm2.conf), PKCS11_PIN, PKCS11_SO_PIN (local defaults).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CONF="${SOFTHSM2_CONF:-$ROOT/.run/softhsm/softhsm2.conf}"
DIR="$(dirname "$CONF")"
PIN="${PKCS11_PIN:-98765432}"
SO_PIN="${PKCS11_SO_PIN:-12345678}"
if [ $# -gt 0 ]; then LABELS=("$@"); else LABELS=("${PKCS11_TOKEN_LABEL:-agw-vault}" agw-test); fi

command -v softhsm2-util >/dev/null 2>&1 || { echo "softhsm2-util not found: apt-get install softhsm2" >&2; exit 1; }
mkdir -p "$DIR/tokens"
chmod 700 "$DIR" "$DIR/tokens"

lock="$DIR/init.lock"
for _ in $(seq 1 600); do mkdir "$lock" 2>/dev/null && break; sleep 0.05; done
[ -d "$lock" ] || { echo "could not take $lock" >&2; exit 1; }
trap 'rmdir "$lock" 2>/dev/null || true' EXIT

want="# written by the vault service (services/vault/src/hsm/softhsm-token.ts)
directories.tokendir = $DIR/tokens
objectstore.backend = file
log.level = ERROR
slots.removable = false"
if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$want" ]; then printf '%s\n' "$want" > "$CONF"; chmod 600 "$CONF"; fi

export SOFTHSM2_CONF="$CONF"
for label in "${LABELS[@]}"; do
  if softhsm2-util --show-slots 2>/dev/null | grep -Eq "^[[:space:]]*Label:[[:space:]]*${label}[[:space:]]*$"; then
    echo "[softhsm] token \"$label\" ready ($CONF)"
  else
    softhsm2-util --init-token --free --label "$label" --pin "$PIN" --so-pin "$SO_PIN" >/dev/null
    echo "[softhsm] token \"$label\" initialised ($CONF)"
  fi
done
