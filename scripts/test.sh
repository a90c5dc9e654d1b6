#!/usr/bin/env bash
# The README's test command (docs/testing.md). With no arguments, `--project P…` alone or `--nightly`, the
# runner and gate of test/gate.ts run the lanes of test/lanes.ts; any other arguments go to vitest as they are.
# CI=true always: a stray .only fails its file and a missing snapshot fails instead of being written.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CI=true
exec npx tsx test/gate.ts "$@"
