#!/usr/bin/env bash
# Configures a build directory (default: build/) with Ninja when present; extra args go to cmake.
# BUILD=dir, BUILD_TYPE=type; WERROR=1 makes every warning in gpurt's own targets an error (CI).
# The compile commands are exported (compile_commands.json) for scripts/check-libcxx.sh and clangd.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
args=(-S . -B "$BUILD" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
[ "${WERROR:-0}" = 1 ] && args+=(-DGPURT_WARNINGS_AS_ERRORS=ON)
command -v ninja > /dev/null && args+=(-G Ninja)
[ -d /usr/local/cuda ] && args+=(-DCUDAToolkit_ROOT=/usr/local/cuda)
cmake "${args[@]}" "$@"
