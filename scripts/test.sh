#!/usr/bin/env bash
# The README's test command: unit + integration tests (integration brings the local stack up
# if it is down). Writes vitest's JSON report to test-results/vitest.json for .ci/run.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
mkdir -p test-results
exec npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json "$@"
