#!/usr/bin/env bash
# One call on the GPU machine: configure, build, list backends and devices, run the whole test
# suite (every device), the examples on every device, and the benchmarks; results go to $OUT
# (or ./gpu-out). Usage: scripts/gpu-check.sh [--no-bench]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
jobs=$(nproc)

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; uname -a; date -u; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$OUT/configure.log" 2>&1 || { tail -40 "$OUT/configure.log"; exit 1; }
cmake --build "$BUILD" -j "$jobs" > "$OUT/build.log" 2>&1 || { grep -E "error|Error" "$OUT/build.log" | head -40; exit 1; }
echo "build: ok"

"$BUILD/bin/gpurt" info | tee "$OUT/info.txt"
"$BUILD/bin/gpurt" info --json > "$OUT/info.json"

ctest --test-dir "$BUILD" -j "$jobs" --timeout 300 --output-on-failure > "$OUT/ctest.log" 2>&1
rc=$?
grep -E "tests passed|tests failed" "$OUT/ctest.log"
grep -A3 "The following tests FAILED" "$OUT/ctest.log" | head -1
sed -n '/The following tests FAILED/,$p' "$OUT/ctest.log" | head -40

echo "per-device results (entry prefix: passed / failed / skipped):"
grep -E "Test +#[0-9]+: " "$OUT/ctest.log" | sed -E 's/.*Test +#[0-9]+: //' |
  awk -F' \\| ' '{ split($2, r, /\.\.\.+ */); st = ($0 ~ /Passed/) ? "passed" : ($0 ~ /Skipped/ ? "skipped" : "failed");
                  key = (NF > 1) ? $1 : "other"; c[key, st]++; keys[key] = 1 }
       END { for (k in keys) printf "  %-45s %4d / %d / %d\n", k, c[k, "passed"], c[k, "failed"], c[k, "skipped"] }' | sort | tee "$OUT/per-device.txt"

echo "examples on every device:"
for sel in $("$BUILD/bin/gpurt" info --json | python3 -c 'import json,sys; print(" ".join(d["selector"] for d in json.load(sys.stdin)["devices"]))'); do
  "$BUILD/bin/01_vector_add" "$sel" 10000019 2>&1 | tail -1 | sed "s/^/  $sel: /"
done | tee "$OUT/examples.txt"

echo "compile cache: cold build, then cached load, of bench/tiny3.gpurt (a new process each):"
for sel in $("$BUILD/bin/gpurt" info --json | python3 -c 'import json,sys; print(" ".join(d["selector"] for d in json.load(sys.stdin)["devices"]))'); do
  dir=$(mktemp -d)
  for run in cold cached; do
    GPURT_CACHE_DIR=$dir "$BUILD/bin/gpurt" build bench/tiny3.gpurt -d "$sel" | head -1 | sed "s/^/  $sel $run: /"
  done
done | tee "$OUT/cache.txt"

if [ "${1:-}" != "--no-bench" ] && [ -x "$BUILD/bin/gpurt_bench_check" ]; then
  "$BUILD/bin/gpurt_bench_check" | tee "$OUT/bench.txt"
fi
exit $rc
