#!/usr/bin/env bash
# Installs the system libraries Strata's drivers link against, when they are missing, and the
# PostgreSQL server the PostgreSQL driver's tests and benchmarks start (a throwaway one each run).
# Debian/Ubuntu: installs with apt-get (as root, or through sudo). Elsewhere: says what is needed.
#
# PostgreSQL refuses to run as root, so when this runs as root it also creates the system user
# `strata-pg`, which the tests' throwaway server runs as (through runuser).
set -euo pipefail

packages=(libsqlite3-dev libxml2-dev liblmdb-dev zlib1g-dev pkg-config libpq-dev postgresql)

ensure_server_user() {
  if [ "$(id -u)" -eq 0 ] && ! getent passwd strata-pg >/dev/null 2>&1; then
    echo "setup: creating the system user strata-pg (runs the tests' PostgreSQL server)" >&2
    useradd --system --no-create-home --shell /usr/sbin/nologin strata-pg
  fi
}
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
else
  echo "setup: not a Debian/Ubuntu system; install SQLite 3, libxml2, LMDB, zlib and libpq development files, pkg-config and a PostgreSQL server (13 or later; the tests find initdb and pg_ctl on PATH or in STRATA_PG_BIN) with your package manager." >&2
  exit 0
fi

if [ ${#missing[@]} -eq 0 ]; then
  ensure_server_user
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "setup: missing ${missing[*]}; run as root: apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
ensure_server_user
