#!/usr/bin/env bash
# The long form of the soak case: launches, copies and allocate/free cycles on one device with no
# growth in host or device memory. CI runs the short form (20,000 launches) in the suite.
#   scripts/soak.sh [SELECTOR] [ITERATIONS] [BUILD_DIR]     e.g. scripts/soak.sh cuda:0 1000000
set -euo pipefail
cd "$(dirname "$0")/.."
sel=${1:-$(build/bin/gpurt info --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["default_device"])' || echo opencl)}
GPURT_TEST_DEVICE=$sel GPURT_SOAK_ITERATIONS=${2:-1000000} "${3:-build}/bin/gpurt_conformance" "soak:*" | grep -E "soak on|passed|failed|FAILED"
