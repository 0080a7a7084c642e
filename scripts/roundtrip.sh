#!/usr/bin/env bash
# The generative round-trip suite (docs/compatibility.md), for long campaigns and replays.
#
#   scripts/roundtrip.sh                      the CI run: seeds 1-200, shrinking the first failure
#   scripts/roundtrip.sh --count 5000         seeds 1-5000
#   scripts/roundtrip.sh --first 10001 --count 5000
#   scripts/roundtrip.sh --survey --count 5000  every seed, listing each failing one (no shrinking)
#   scripts/roundtrip.sh --seed 36            replay one seed, shrink it, print the small case
#   --all-pairs                               convert every store to every other driver (default:
#                                             one target per seed, rotating; a replay does all)
#
# Builds the tests first unless --skip-build is given. Exits non-zero when a case fails.
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --count) export STRATA_ROUNDTRIP_COUNT="$2"; shift 2 ;;
    --first) export STRATA_ROUNDTRIP_FIRST_SEED="$2"; shift 2 ;;
    --seed) export STRATA_ROUNDTRIP_SEED="$2"; shift 2 ;;
    --survey) export STRATA_ROUNDTRIP_SURVEY=1; shift ;;
    --all-pairs) export STRATA_ROUNDTRIP_ALL_PAIRS=1; shift ;;
    --skip-build) build=0; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "roundtrip.sh: unknown argument '$1' (see --help)" >&2; exit 64 ;;
  esac
done
for value in "${STRATA_ROUNDTRIP_COUNT:-1}" "${STRATA_ROUNDTRIP_FIRST_SEED:-1}" "${STRATA_ROUNDTRIP_SEED:-1}"; do
  case "$value" in
    ''|*[!0-9]*) echo "roundtrip.sh: '$value' is not a whole number" >&2; exit 64 ;;
  esac
done

if [ "$build" = 1 ]; then
  scripts/setup.sh
  swift build --build-tests
fi
exec swift test --skip-build --filter 'RoundTripTests.randomCases'
