#!/usr/bin/env bash
# Configures a build directory (default: build/) with Ninja when present; extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
args=(-S . -B "$BUILD" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo})
command -v ninja > /dev/null && args+=(-G Ninja)
[ -d /usr/local/cuda ] && args+=(-DCUDAToolkit_ROOT=/usr/local/cuda)
cmake "${args[@]}" "$@"
