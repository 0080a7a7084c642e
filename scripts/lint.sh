#!/usr/bin/env bash
# Checks formatting against the checked-in .swift-format with the toolchain's `swift format`:
# every Swift file of the package and of Benchmarks/. Exits non-zero, listing each finding, when a
# file needs formatting; `scripts/lint.sh --fix` formats them in place instead.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Package.swift Sources Drivers Tests Benchmarks/Package.swift Benchmarks/Sources)
if [ "${1:-}" = "--fix" ]; then
  swift format format --in-place --recursive --parallel "${paths[@]}"
  exit 0
fi
if ! swift format lint --strict --recursive --parallel "${paths[@]}"; then
  echo "lint: the files above need formatting; run scripts/lint.sh --fix (see CONTRIBUTING.md)" >&2
  exit 1
fi
echo "lint: formatting matches .swift-format"
