#!/usr/bin/env bash
# Builds gpurt and runs every test: unit tests, the conformance suite on every device present
# (unavailable backends are reported as skipped with the reason), the CLI and the examples. Ends
# with passed / failed / skipped (the skips grouped by reason) and the time it took. Its exit
# status is CTest's.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
start=$(date +%s)
scripts/configure.sh > /dev/null
cmake --build "$build" -j "$(nproc)"
case $build in
  /*) junit=$build/Testing/test-results.xml ;;
  *) junit=$PWD/$build/Testing/test-results.xml ;;
esac
rc=0
ctest --test-dir "$build" -j "$(nproc)" --timeout 600 --output-on-failure --output-junit "$junit" "$@" || rc=$?
python3 scripts/test-summary.py "$junit" "$(( $(date +%s) - start ))" || true
exit "$rc"
