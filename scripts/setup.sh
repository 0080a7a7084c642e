#!/usr/bin/env bash
# Installs the system libraries Strata's drivers link against, when they are missing.
# Debian/Ubuntu: installs with apt-get (as root, or through sudo). Elsewhere: says what is needed.
set -euo pipefail

packages=(libsqlite3-dev libxml2-dev liblmdb-dev zlib1g-dev pkg-config)
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
else
  echo "setup: not a Debian/Ubuntu system; install SQLite 3, libxml2, LMDB and zlib development files and pkg-config with your package manager." >&2
  exit 0
fi

if [ ${#missing[@]} -eq 0 ]; then
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
