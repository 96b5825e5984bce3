#!/usr/bin/env bash
# The CUDA suite under NVIDIA's compute-sanitizer (GPU machine; after scripts/gpu-check.sh built
# build-gpu): memcheck over the conformance suite on cuda:0, racecheck (shared-memory races)
# over the kernel library's cases. Prints each tool's ERROR SUMMARY; exits non-zero on errors.
#   scripts/gpu-sanitize.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-${BUILD:-build-gpu}}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
if [ ! -x "$BUILD/bin/gpurt_conformance" ]; then  # a fresh machine: build first
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null && cmake --build "$BUILD" -j "$(nproc)" > /dev/null || exit 1
fi
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$cs" ] || { echo "compute-sanitizer not found"; exit 1; }
export GPURT_TEST_DEVICE=cuda:0 GPURT_CACHE=off
status=0
run() {  # tool, log name, catch2 test spec...
  local tool=$1 log=$OUT/$2; shift 2
  # --report-api-errors no: gpurt probes cuFuncGetParamInfo past a kernel's last parameter (the
  # driver has no parameter count), which returns CUDA_ERROR_INVALID_VALUE by design.
  timeout 420 "$cs" --tool "$tool" --error-exitcode 99 --target-processes all --report-api-errors no \
    "$BUILD/bin/gpurt_conformance" "$@" > "$log" 2>&1
  local rc=$?
  local summary; summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
  local cases; cases=$(grep -E "^(All tests passed|test cases:)" "$log" | tail -1)
  echo "$tool: rc $rc; $summary; $cases"
  if [ $rc -eq 99 ] || [ $rc -eq 124 ] || ! grep -qE "SUMMARY: 0 (errors|hazards)" "$log"; then status=1; fi
}
# The whole conformance suite except the 256 MiB and multi-GiB cases (minutes under memcheck).
run memcheck compute-sanitizer-memcheck.log "~*256 MiB*" "~*beyond*" "~*soak*" "~*half of the largest*"
run racecheck compute-sanitizer-racecheck.log "library:*"
exit $status
