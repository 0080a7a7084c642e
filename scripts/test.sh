#!/usr/bin/env bash
# Runs every test: installs missing system libraries, then `swift test`.
# Corpus tests read ../shared/corpus through STRATA_CORPUS when it is set (CI sets it) and are
# reported as skipped otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ -z "${STRATA_CORPUS:-}" ] && [ -d ../shared/corpus ]; then
  STRATA_CORPUS="$(cd ../shared/corpus && pwd)"
  export STRATA_CORPUS
fi
exec swift test "$@"
