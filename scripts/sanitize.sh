#!/usr/bin/env bash
# Runs the core, context and driver test suites under a sanitizer, in a build folder of its own.
#
#   scripts/sanitize.sh address   # AddressSanitizer: core, in-memory, SQLite, XML, LMDB suites
#   scripts/sanitize.sh thread    # ThreadSanitizer: the concurrency stress of every driver, the
#                                 # row-cache race cases and the context suites
#
# Extra arguments go to `swift test` (e.g. --filter). Exits non-zero when a test fails or the
# sanitizer reports anything (halt_on_error).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-}
case "$kind" in
  address | thread) shift ;;
  *) echo "usage: scripts/sanitize.sh address|thread [swift test arguments]" >&2; exit 64 ;;
esac
scripts/setup.sh
if [ -z "${STRATA_CORPUS:-}" ] && [ -d ../shared/corpus ]; then
  STRATA_CORPUS="$(cd ../shared/corpus && pwd)"
  export STRATA_CORPUS
fi
if [ "$kind" = address ]; then
  # Leak checking is off: Foundation and the test runner keep allocations alive until exit.
  export ASAN_OPTIONS="halt_on_error=1:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  filter='^(StrataTests|StrataInMemoryTests|StrataSQLiteTests|StrataXMLTests|StrataLMDBTests)\.'
else
  export TSAN_OPTIONS="halt_on_error=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
  filter='concurrencyStress|containerStress|conformance|ContextStoreFailureTests|ContextTests|RowCacheTests|ReadWriteLockedTests|ChildContextTests|ContextMergeTests|ContainerTests|MergePolicyTests'
  # Locked (the package's lock) becomes a pthread mutex ThreadSanitizer can see.
  set -- -Xswiftc -DSTRATA_TSAN "$@"
fi
# The kill tests start helper executables built without the sanitizer's runtime in their path; they
# run in the normal suite.
exec swift test --sanitize="$kind" --scratch-path ".build-$kind" --filter "$filter" --skip 'KillTest|CrashTests|kill' "$@"
