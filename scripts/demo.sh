#!/usr/bin/env bash
# Builds the strata tool and runs its demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift build --product strata -c release >&2
exec .build/release/strata demo "$@"
