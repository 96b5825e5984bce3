#!/usr/bin/env bash
# "CI builds the mock backend as a separate CMake project against the installed package
# (find_package), loads it through GPURT_PLUGIN_PATH, and runs the conformance suite on it."
#   out_of_tree_backend.sh PREFIX CXX WORK BACKEND_SOURCE_DIR PYTHON RUN_CLI
# PREFIX is an installed gpurt (which holds no mock plugin: the mock is never installed). The
# backend is configured and built in WORK/build on its own, then loaded from there by the
# installed tool and conformance suite, never from gpurt's build tree.
set -euo pipefail
prefix=$1 cxx=$2 work=$3 source=$4 python=$5 run_cli=$6
rm -rf "$work" && mkdir -p "$work"
chmod 755 "$work"  # GPURT_PLUGIN_PATH directories must be writable by nobody else
build=$work/build log=$work/build.log
fail() {
  echo "out_of_tree_backend.sh: $*"
  cat "$log"
  exit 1
}

# docs/writing-a-backend.md: "find_package(gpurt 0.1 CONFIG REQUIRED COMPONENTS plugin_sdk)" and
# "target_link_libraries(... gpurt::plugin_sdk)", as backends/mock/CMakeLists.txt does on its own.
cmake -S "$source" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" > "$log" 2>&1 ||
  fail "configuring $source against $prefix failed"
cmake --build "$build" --verbose >> "$log" 2>&1 || fail "building $source against $prefix failed"
plugin=$build/libgpurt_mock.so
[ -f "$plugin" ] || fail "the build wrote no $plugin (the loader looks for libgpurt_<name>.so)"
# The compiler saw the installed headers, not the source tree's.
grep -q -- "-isystem $prefix/include\|-I$prefix/include" "$log" ||
  fail "the plugin was not compiled against $prefix/include"

export GPURT_ENABLE_MOCK=1
unset GPURT_PLUGIN_PATH GPURT_DEVICE GPURT_DISABLE_BACKENDS
# Without GPURT_PLUGIN_PATH the installed gpurt has no mock to load...
"$python" "$run_cli" --exit 0 --json any \
  --check "not [b for b in doc['backends'] if b['name'] == 'mock']" \
  -- "$prefix/bin/gpurt" info --json
# ...and with it, it loads the one built here (README: GPURT_PLUGIN_PATH is "searched for plugins
# before gpurt's own library directory").
"$python" "$run_cli" --exit 0 --json any --env "GPURT_PLUGIN_PATH=$build" \
  --check "[(b['status'], b['plugin_path']) for b in doc['backends'] if b['name'] == 'mock'] == [('available', '$plugin')]" \
  --check "any(d['selector'] == 'mock:0' for d in doc['devices'])" \
  -- "$prefix/bin/gpurt" info --json

# The installed conformance suite on the out-of-tree mock: nothing fails; every case skipped says
# why; the cases the mock can run (memory, transfers, events, errors, properties, its built-in
# kernels vector_add and fill_u32) ran and passed, so the run is not vacuous.
must_pass="host to device to host round trip at many sizes|views copy into and out of sub-ranges|\
device to device copies between buffers and sub-ranges|fill writes 1, 2, 4, 8 and 16 byte patterns over views|\
transfer engine: staged copies round trip at awkward sizes and offsets|events complete, and the host can wait for them|\
copy size mismatches and null host pointers are rejected|device properties are sane|\
vector add pipeline matches the CPU at sizes that do not divide the group|\
soak: launches, copies and allocate/free cycles hold host and device memory flat"
"$python" "$run_cli" --exit 0 --json conformance --env "GPURT_PLUGIN_PATH=$build" --timeout 1200 \
  --check "[d['selector'] for d in doc['devices']] == ['mock:0'] and doc['devices'][0]['failed'] == 0" \
  --check "all(c['results']['mock:0']['detail'].strip() for c in doc['cases'] if c['results']['mock:0']['status'] == 'skip')" \
  --check "all(c['results']['mock:0']['status'] == 'pass' for c in doc['cases'] if c['name'] in '''$must_pass'''.split('|'))" \
  --check "len([c for c in doc['cases'] if c['name'] in '''$must_pass'''.split('|')]) == $(tr '|' '\n' <<< "$must_pass" | wc -l)" \
  --check "print('out-of-tree mock: %d passed, %d skipped, %d failed' % (doc['devices'][0]['passed'], doc['devices'][0]['skipped'], doc['devices'][0]['failed'])) or True" \
  -- "$prefix/bin/gpurt" conformance -d mock --json
