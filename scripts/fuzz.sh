#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for a while (default 30 s):
#   scripts/fuzz.sh [SECONDS]
# Crashes are written to build-fuzz/crashes/ and the script exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
CXX=${CXX:-clang++} cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPURT_BUILD_FUZZERS=ON \
  -DGPURT_BUILD_TESTS=OFF -DGPURT_BUILD_EXAMPLES=OFF -DGPURT_BUILD_TOOLS=OFF -DGPURT_BUILD_CUDA=OFF > /dev/null
targets="gpurt_fuzz_selector_env gpurt_fuzz_cache_entry gpurt_fuzz_opencl_signature"
cmake --build build-fuzz --target $targets
mkdir -p build-fuzz/crashes
for t in $targets; do
  mkdir -p "build-fuzz/corpus/$t"
  [ -d "tests/fuzz/seeds/$t" ] && cp -n tests/fuzz/seeds/$t/* "build-fuzz/corpus/$t/" 2>/dev/null || true
  echo "== $t for ${seconds}s"
  "build-fuzz/bin/$t" -max_total_time="$seconds" -artifact_prefix=build-fuzz/crashes/ -print_final_stats=1 \
    "build-fuzz/corpus/$t" 2>&1 | grep -E "^(stat::number_of_executed_units|Done|==|SUMMARY)|ERROR" || true
done
if ls build-fuzz/crashes/* > /dev/null 2>&1; then
  echo "fuzz: crashes found in build-fuzz/crashes/"; exit 1
fi
echo "fuzz: no crashes"
