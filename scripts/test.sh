#!/usr/bin/env bash
# Builds gpurt and runs every test: unit tests, the conformance suite on every device present
# (unavailable backends are reported as skipped with the reason), the CLI and the examples.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/configure.sh > /dev/null
cmake --build "${BUILD:-build}" -j "$(nproc)"
ctest --test-dir "${BUILD:-build}" -j "$(nproc)" --timeout 600 --output-on-failure "$@"
