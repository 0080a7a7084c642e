#!/usr/bin/env bash
# Runs Strata's cross-driver benchmarks (Benchmarks/, a package of its own) in release mode.
# Arguments go to strata-benchmarks: --rows N, --rounds R, --passes P, --contenders a,b, --out DIR,
# --check, --scaling [--scaling-rows a,b,…] (--help lists them all).
# Results: Benchmarks/results/{results.md,results.json,chart.svg,chart.png}, with --scaling
# {scaling.md,scaling.json,scaling.svg,scaling.png}. See docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# Optional: rsvg-convert renders chart.svg to chart.png (skipped with a note when it cannot be installed).
if ! command -v rsvg-convert >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq librsvg2-bin >/dev/null 2>&1 || true
fi
# Build output goes to stderr so stdout carries only the report.
swift build -c release --package-path Benchmarks --product strata-benchmarks >&2
exec "$(swift build -c release --package-path Benchmarks --show-bin-path)/strata-benchmarks" "$@"
