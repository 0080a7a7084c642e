#!/usr/bin/env bash
# The reliability suite's fuzzing outside CI (docs/reliability.md).
#
#   scripts/fuzz.sh --minutes N [--targets sqlite,lmdb,...] [--seed S] [--batch B]
#       A long campaign: batches of every target (or those named) with fresh seeds until N minutes
#       have passed; prints each failure with the line that replays it. Exits 1 if anything failed.
#   scripts/fuzz.sh --replay TARGET/SEED/CASE [--keep DIR]
#       Runs one case alone, printing every error and the crash's backtrace; --keep DIR keeps the
#       case's input (the damaged store, the file) in DIR/CASE/.
#   scripts/fuzz.sh --list
#       The targets and what each does.
#
# The corpus (../shared/corpus, or STRATA_CORPUS) adds the targets that read Apple-written files.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${STRATA_CORPUS:-}" ] && [ -d ../shared/corpus ]; then
  STRATA_CORPUS="$(cd ../shared/corpus && pwd)"
  export STRATA_CORPUS
fi
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 64; }
[ $# -ge 1 ] || usage
scripts/setup.sh
swift build --product strata-fuzz-worker >&2
worker="$(swift build --show-bin-path)/strata-fuzz-worker"
case "$1" in
  --replay)
    [ $# -ge 2 ] || usage
    IFS=/ read -r target seed number <<< "$2"
    shift 2
    export STRATA_FUZZ_VERBOSE=1
    export SWIFT_BACKTRACE="enable=yes,interactive=no,color=no,threads=crashed,registers=none,images=none"
    exec "$worker" run "$target" --seed "$seed" --from "$number" "$@"
    ;;
  --minutes)
    [ $# -ge 2 ] || usage
    exec "$worker" campaign "$@"
    ;;
  --list)
    exec "$worker" targets
    ;;
  *) usage ;;
esac
