#!/usr/bin/env bash
# One call on the GPU machine.
#   scripts/gpu-check.sh --fast   (<= 300 s on nvidia-h200 from a fresh machine; every landing)
#     configure, build (warnings counted), list backends and devices, EVERY test case on EVERY
#     device through scripts/run-tests-batched.py (the cases of one program and device share a
#     process; "runs alone" cases and the other CTest entries run as under ctest), the examples on
#     every device, the differential check, and 10_mpi with 2 ranks on cuda and the NCCL example (those beside the suite);
#     a case may take 150 s (ctest's 600 where the entry sets no TIMEOUT of its own), and at
#     ${GPURT_FAST_SECONDS:-290} s from the start the suite stops: what still runs is killed and
#     failed, what has not started is failed as not run, the examples beside it are stopped, and
#     the results are written as always - so a hang costs its cases, never the run's results.
#     Any failure makes the exit status 1.
#     $OUT: summary.txt (with the time each step took), results.tsv (every entry's verdict),
#     failures.log (every failure's output), case-times.json, build-warnings.log, info.json.
#   scripts/gpu-check.sh [--full] [--no-bench | --quick-bench] [--no-soak]
#     the whole check as before: the suite through ctest, one process per case and device, the
#     examples, 10_mpi, NCCL, the differential check, conformance, the compile-cache timing, the
#     long soak, traces, first use and the benchmarks (gpurt against the raw APIs) on the CUDA
#     and the NVIDIA OpenCL device. $OUT: summary.txt, ctest.log, info.json, bench.{txt,json,csv},
#     bench-*.svg.
# (--no-soak leaves out the long soak, e.g. on a machine with many devices and little time).
set -uo pipefail
cd "$(dirname "$0")/.."
bench_mode=full soak=1 fast=0
for arg in "$@"; do
  case "$arg" in
    --fast) fast=1 ;;
    --full) fast=0 ;;
    --no-bench) bench_mode=none ;;
    --quick-bench) bench_mode=quick ;;
    --no-soak) soak=0 ;;
    *) echo "usage: scripts/gpu-check.sh [--fast | --full [--no-bench | --quick-bench] [--no-soak]]" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$PWD/gpu-out}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
jobs=$(nproc)
exec > >(tee "$OUT/summary.txt") 2>&1
tee_pid=$!
trap 'exec 1>&- 2>&-; wait "$tee_pid" 2> /dev/null' EXIT  # summary.txt whole before the script ends
t0=$(date +%s)
kill_tree() {  # a process and everything under it (mpirun's ranks, a test's children)
  local c
  for c in $(pgrep -P "$1"); do kill_tree "$c"; done
  kill -9 "$1" 2> /dev/null
}
step() { echo "[$(( $(date +%s) - t0 )) s] $*"; }

# Several processes: 10_mpi with 2 ranks on the CUDA devices (each rank prints its halo path:
# staged through pinned memory, or device pointers where the MPI library is CUDA-aware), over each
# transport named (default: the MPI library's own; shared-memory: that alone), unstaged and
# --staged; and NCCL on every CUDA device. A failure sets rc=1.
mpi_and_nccl() {
  echo "10_mpi (2 ranks, mpirun, -d cuda; halo path per rank) and nccl_allreduce:"
  if [ -x "$BUILD/bin/10_mpi" ] && command -v mpirun > /dev/null; then
    for transport in "$@"; do
      local env=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_base_warn_component_unused=0)
      [ "$transport" = shared-memory ] && env+=(OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader)
      for staged in "" --staged; do
        env "${env[@]}" timeout 300 mpirun -n 2 --oversubscribe "$BUILD/bin/10_mpi" -d cuda -n 10000019 -s 100 $staged \
          > "$BUILD.10_mpi.log" 2>&1
        local mpi_rc=$? label="$transport${staged:+ $staged}"
        grep -E "^rank |ranks, |^OK|^FAILED" "$BUILD.10_mpi.log" | sed "s/^/  $label: /"
        [ $mpi_rc -eq 0 ] || { echo "  $label: exit $mpi_rc"; tail -15 "$BUILD.10_mpi.log" | sed "s/^/    /"; rc=1; }
      done
    done
  else
    echo "  10_mpi not built (no MPI found when configuring) or no mpirun"
  fi
  if [ -x "$BUILD/bin/nccl_allreduce" ]; then
    "$BUILD/bin/nccl_allreduce" > "$BUILD.nccl.log" 2>&1 || rc=1
    tail -6 "$BUILD.nccl.log" | sed "s/^/  nccl_allreduce: /"
  else
    echo "  nccl_allreduce not built (no CUDA backend)"
  fi
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; uname -a; date -u

cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$BUILD.configure.log" 2>&1 || { tail -40 "$BUILD.configure.log"; exit 1; }
step "configured"
cmake --build "$BUILD" -j "$jobs" > "$BUILD.build.log" 2>&1 || { grep -E "error|Error" "$BUILD.build.log" | head -40; exit 1; }
grep -E "warning:" -A3 "$BUILD.build.log" > "$OUT/build-warnings.log"
step "build: ok, $(grep -c "warning:" "$BUILD.build.log") compiler warnings ($(${CXX:-c++} --version | head -1))"

"$BUILD/bin/gpurt" info
"$BUILD/bin/gpurt" info --json > "$OUT/info.json"
selectors=$(python3 -c 'import json,sys; print(" ".join(d["selector"] for d in json.load(open(sys.argv[1]))["devices"]))' "$OUT/info.json")

# The examples at the full check's sizes on every device, the differential check and the
# multi-process smoke: in --fast they run beside the suite (the suite keeps the 16 cores about
# three quarters busy), and their output is printed after it.
extras() {
  rc=0
  echo "examples on every device:"
  for sel in $selectors; do
    "$BUILD/bin/01_vector_add" "$sel" 10000019 > "$BUILD.example.log" 2>&1 || rc=1
    tail -1 "$BUILD.example.log" | sed "s/^/  $sel: /"
  done
  echo "12_warp_reduce (sub-group words; on CUDA against its native CUDA C++ twin) on every device:"
  for sel in $selectors; do
    "$BUILD/bin/12_warp_reduce" "$sel" 100000007 > "$BUILD.warp.log" 2>&1 || rc=1
    grep -E "^(device|portable|CUDA|FAILED)" "$BUILD.warp.log" | sed "s/^/  $sel: /"
  done
  echo "13_unified (shared memory: host writes, kernel, host reads, no copy) on every device:"
  "$BUILD/bin/13_unified" all 10000019 > "$BUILD.unified.log" 2>&1 || rc=1
  sed "s/^/  /" "$BUILD.unified.log"
  echo "differential check across every device:"
  "$BUILD/bin/gpurt_differential" > "$BUILD.differential.log" 2>&1
  diff_rc=$?
  [ $diff_rc -eq 0 ] || [ $diff_rc -eq 77 ] || rc=1  # 77: a case skipped (a device pair this machine lacks)
  grep -vE "^(gpurt test seed|Randomness|===|All tests|~~~)" "$BUILD.differential.log" | tail -5
  mpi_and_nccl default
  return $rc
}

if [ $fast = 1 ]; then
  ( extras > "$BUILD.extras.log" 2>&1; echo $? > "$BUILD.extras.rc" ) &
  extras_pid=$!
  step "the suite: every case on every device (scripts/run-tests-batched.py -j $jobs), the examples, the differential check and 10_mpi beside it"
  times=tests/case-times.json
  left=$(( ${GPURT_FAST_SECONDS:-290} - ($(date +%s) - t0) ))
  [ $left -ge 60 ] || left=60
  python3 scripts/run-tests-batched.py "$BUILD" --out "$OUT" -j "$jobs" --timeout 150 --times "$times" \
    --deadline "$left"
  rc=$?
  step "suite done"
  # The examples beside the suite get until the same deadline (and 10 s more).
  while kill -0 "$extras_pid" 2> /dev/null && [ $(( $(date +%s) - t0 )) -lt $(( ${GPURT_FAST_SECONDS:-290} + 10 )) ]; do
    sleep 1
  done
  if kill -0 "$extras_pid" 2> /dev/null; then
    kill_tree "$extras_pid"
    echo "the examples, differential check and 10_mpi beside the suite were stopped at the deadline" >> "$BUILD.extras.log"
    echo 1 > "$BUILD.extras.rc"
  fi
  wait "$extras_pid" 2> /dev/null
  cat "$BUILD.extras.log"
  [ "$(cat "$BUILD.extras.rc" 2> /dev/null)" = 0 ] || rc=1
  step "gpu-check --fast done, exit $rc"
  exit $rc
fi

ctest --test-dir "$BUILD" -j "$jobs" --timeout 600 --output-on-failure > "$OUT/ctest.log" 2>&1
rc=$?
grep -E "tests passed|tests failed" "$OUT/ctest.log"
sed -n '/The following tests FAILED/,/Errors while/p' "$OUT/ctest.log" | head -40

echo "per-device results (entry prefix: passed / failed / skipped):"
grep -E "Test +#[0-9]+: " "$OUT/ctest.log" | sed -E 's/.*Test +#[0-9]+: //' |
  awk -F' \\| ' '{ st = ($0 ~ /Passed/) ? "passed" : ($0 ~ /Skipped/ ? "skipped" : "failed");
                  key = (NF > 1) ? $1 : "other"; c[key, st]++; keys[key] = 1 }
       END { for (k in keys) printf "  %-45s %4d / %d / %d\n", k, c[k, "passed"], c[k, "failed"], c[k, "skipped"] }' | sort

echo "examples on every device:"
for sel in $selectors; do
  "$BUILD/bin/01_vector_add" "$sel" 10000019 2>&1 | tail -1 | sed "s/^/  $sel: /"
done
echo "12_warp_reduce (sub-group words; on CUDA against its native CUDA C++ twin) on every device:"
for sel in $selectors; do
  "$BUILD/bin/12_warp_reduce" "$sel" 100000007 2>&1 | grep -E "^(device|portable|CUDA|FAILED)" | sed "s/^/  $sel: /"
done

echo "13_unified (shared memory: host writes, kernel, host reads, no copy) on every device:"
"$BUILD/bin/13_unified" all 10000019 2>&1 | sed "s/^/  /"

echo "03_overlap (512 MiB, 16 chunks, one queue against four):"
for sel in $selectors; do
  case "$sel" in cuda*) mib=512 ;; *) mib=128 ;; esac
  "$BUILD/bin/03_overlap" "$sel" $mib 2>&1 | tail -2 | sed "s/^/  $sel: /"
done

mpi_and_nccl default shared-memory

echo "differential check across every device:"
"$BUILD/bin/gpurt_differential" 2>&1 | grep -vE "^(gpurt test seed|Randomness|===|All tests|~~~)"

echo "gpurt conformance (matrix):"
"$BUILD/bin/gpurt" conformance -j "$jobs"

echo "compile cache: cold build, then cached load, of bench/tiny3.gpurt (a new process each):"
for sel in $selectors; do
  dir=$(mktemp -d)
  for run in cold cached; do
    GPURT_CACHE_DIR=$dir "$BUILD/bin/gpurt" build bench/tiny3.gpurt -d "$sel" | head -1 | sed "s/^/  $sel $run: /"
  done
done

[ $soak = 1 ] && echo "soak, long form (200,000 launches, 12,500 allocate/free cycles) on every GPU device:"
[ $soak = 1 ] && for sel in $selectors; do
  case "$sel" in opencl:0) continue ;; esac  # the CPU device runs the short form in ctest
  scripts/soak.sh "$sel" 200000 "$BUILD" 2>&1 | grep "soak on" | sed "s/^/  /"
done

echo "a trace of 01_vector_add on every device (GPURT_TRACE):"
for sel in $selectors; do
  GPURT_TRACE=$OUT/trace-${sel/:/_}.json "$BUILD/bin/01_vector_add" "$sel" 1000003 > /dev/null 2>&1
  python3 tools/check_trace.py "$OUT/trace-${sel/:/_}.json" launch 2>&1 | sed "s/^/  $sel: /"
  rm -f "$OUT/trace-${sel/:/_}.json"
done

# A process's first copies and the seed pipeline, gpurt against the raw API, each in a fresh process
# ("No first-use penalty"): the CUDA device and the NVIDIA OpenCL device.
fu_devices=$(echo "$selectors" | tr ' ' '\n' | grep -E '^cuda' | head -1)
fu_nv=$("$BUILD/bin/gpurt" info --json | python3 -c 'import json,sys; print(" ".join(d["selector"] for d in json.load(sys.stdin)["devices"] if d["backend"]=="opencl" and "NVIDIA" in d["vendor"]))')
fu_devices="$fu_devices ${fu_nv%% *}"
for sel in $fu_devices; do
  echo "first use on $sel: gpurt-first-use --device $sel (100 M floats, median of 3 fresh processes each)"
  timeout 600 "$BUILD/bin/gpurt-first-use" --device "$sel" --json "$OUT/first-use-${sel/:/_}.json" \
    > "$OUT/first-use-${sel/:/_}.txt" 2>&1 || { echo "  exit $?"; rc=1; }
  sed "s/^/  /" "$OUT/first-use-${sel/:/_}.txt" | tail -20
done

if [ $bench_mode != none ]; then
  quick=""
  [ $bench_mode = quick ] && quick="--quick"
  bench_devices=$(echo "$selectors" | tr ' ' '\n' | grep -E '^cuda' | head -1)
  nv=$("$BUILD/bin/gpurt" info --json | python3 -c 'import json,sys; print(" ".join(d["selector"] for d in json.load(sys.stdin)["devices"] if d["backend"]=="opencl" and "NVIDIA" in d["vendor"]))')
  [ -n "$nv" ] && bench_devices="$bench_devices,${nv%% *}"
  bench_devices=${bench_devices#,}
  echo "benchmark: gpurt bench $quick -d $bench_devices"
  "$BUILD/bin/gpurt" bench $quick -d "$bench_devices" --json "$OUT/bench.json" --csv "$OUT/bench.csv" \
    --svg "$OUT/bench.svg" > "$OUT/bench.txt" 2>/dev/null
  cat "$OUT/bench.txt"
  # The JSON's documented shape, and on CUDA the raw CUDA graph rows (code no CI machine runs).
  python3 tests/cli/check_bench_json.py "$OUT/bench.json" 2>&1 | tail -3
fi
exit $rc
